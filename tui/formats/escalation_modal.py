"""The roundtable's escalation: every position, the facilitator's recommendation, the operator's answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Key
from textual.widgets import Button, Input, Label, Static

from promptdesk.tui.dialog import Dialog
from promptdesk.tui.lines import safe
from promptdesk.tui.line_input import LineInput

BOLD, DIM = Style(bold=True), Style(dim=True)


@dataclass(frozen=True)
class EscalationAnswer:
    """The operator's answer: `accept` the recommendation, `own` decision (`text`), or `continue`."""

    decision: str
    text: str | None = None


def escalation_text(details: dict[str, Any]) -> Text:
    """Why the roundtable escalated, and every position, as plain text (every field is untrusted)."""
    text = Text()
    for trigger in details.get("triggers") or []:
        text.append("Why: ", BOLD)
        text.append(f"{safe(trigger.get('detail'))}\n")
    text.append("\nPositions\n", BOLD)
    for p in details.get("positions") or []:
        sure = p.get("confidence")
        text.append(f"  {safe(p.get('name') or p.get('slug'))}", BOLD)
        text.append(f" ({safe(p.get('role'))})" if p.get("role") else "", DIM)
        text.append(f": {safe(p.get('position'))}")
        text.append(f"  confidence {sure:.2f}\n" if isinstance(sure, (int, float)) else "\n", DIM)
        if p.get("rationale"):
            text.append(f"    {safe(p['rationale'])}\n", DIM)
    return text


def recommendation_text(details: dict[str, Any]) -> Text:
    """The facilitator's recommendation (what Enter accepts): shown above the positions, never scrolled away."""
    text = Text()
    text.append("The facilitator recommends: ", BOLD)
    text.append(safe(details.get("recommendation") or "—"))
    text.append("  (Enter accepts it)", DIM)
    return text


class EscalationModal(Dialog[EscalationAnswer | None]):
    """Asks for the operator's decision; Escape leaves it open for later (key `a` on the stage)."""

    DEFAULT_CSS = """
    EscalationModal { align: center middle; }
    EscalationModal > Vertical { width: 100; max-width: 95%; height: 90%; border: thick $warning;
                                 background: $surface; padding: 0 2; }
    EscalationModal VerticalScroll { height: 1fr; }
    EscalationModal Label { width: 1fr; }
    EscalationModal #recommendation { height: auto; max-height: 6; margin-bottom: 1; }
    EscalationModal Horizontal { height: auto; margin-top: 1; }
    EscalationModal Button { margin-right: 1; }
    """
    BINDINGS = [Binding("escape", "later", "Later", id="escalation.later",
                        tooltip="Close this dialog and answer later (the roundtable waits)")]

    def __init__(self, details: dict[str, Any]) -> None:
        super().__init__()
        self.details = details

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("The roundtable needs your decision", classes="title")
            yield Static(recommendation_text(self.details), id="recommendation", markup=False)
            with VerticalScroll():
                yield Static(escalation_text(self.details), markup=False)
            yield LineInput(placeholder="Your own decision (for “Decide myself”)", id="own", select_on_focus=False)
            with Horizontal():
                yield Button("Accept the recommendation", variant="primary", id="accept")
                yield Button("Decide myself", id="own-button")
                yield Button("Continue the discussion", id="continue")

    def on_mount(self) -> None:
        """Enter accepts the recommendation; Tab reaches the other answers and your own decision."""
        self.query_one("#accept", Button).focus()

    def on_key(self, event: Key) -> None:
        """A letter typed while a button has the focus goes to your own decision (instead of being
        lost): the field takes the focus and the letter. Space and Enter still press the button."""
        field = self.query_one("#own", Input)
        character = event.character
        if self.focused is not field and character and character.isprintable() and not character.isspace():
            field.focus()
            field.insert_text_at_cursor(character)
            event.stop()
            event.prevent_default()

    @on(Button.Pressed, "#accept")
    def accept(self) -> None:
        """Take the facilitator's recommendation."""
        self.dismiss(EscalationAnswer("accept"))

    @on(Button.Pressed, "#continue")
    def go_on(self) -> None:
        """Let the discussion continue."""
        self.dismiss(EscalationAnswer("continue"))

    @on(Input.Submitted)
    def _submitted(self, message: Input.Submitted) -> None:
        """Decide with the words as they were when enter was pressed."""
        message.stop()
        self.own(message.value)

    @on(Button.Pressed, "#own-button")
    def _pressed(self) -> None:
        self.own(self.query_one("#own", Input).value)

    def own(self, typed: str) -> None:
        """Decide with the operator's own words (asks for them, saying so, if the field is empty)."""
        text = typed.strip()
        if not text:
            self.notify("Type your own decision first, or choose another answer (esc: later).", severity="warning")
            self.query_one("#own", Input).focus()
            return
        self.dismiss(EscalationAnswer("own", text))

    def action_later(self) -> None:
        """Close without answering."""
        self.dismiss(None)
