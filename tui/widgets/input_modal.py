"""The small dialog that takes a world event or a director's note, returned as typed data."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Label, Select

from promptdesk.core.protocol.bounded import DIRECTION_MAX_CHARS
from promptdesk.tui.line_input import LineInput

from promptdesk.tui.dialog import Dialog
from promptdesk.tui.lines import safe

EVERYONE = "__everyone__"


@dataclass(frozen=True)
class WorldEvent:
    """A world event to inject: every actor receives it at the next beat."""

    text: str


@dataclass(frozen=True)
class DirectorNote:
    """A director's note for every actor (`to` is None) or for one (`to` is a cast slug)."""

    text: str
    to: str | None = None


class InputModal(Dialog[WorldEvent | DirectorNote | None]):
    """Asks for one line of text (and, for a note, whom it is for); dismisses with the typed request."""

    DEFAULT_CSS = """
    InputModal { align: center middle; }
    InputModal > Vertical { width: 72; max-width: 95%; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    InputModal Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    InputModal Select { margin-top: 1; }
    InputModal Label { width: 1fr; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="modal.cancel", tooltip="Close without sending anything")]

    def __init__(self, kind: str, cast: dict[str, str] | None = None) -> None:
        super().__init__()
        self.kind = kind
        self.cast = dict(cast or {})

    def compose(self) -> ComposeResult:
        event = self.kind == "event"
        with Vertical():
            yield Label("Inject a world event (every actor gets it at the next beat)" if event
                        else "Director's note (delivered at the next beat)")
            yield LineInput(placeholder="The lights flicker and go out" if event else "Keep it short and warmer",
                        id="text")
            if not event:
                options = [(Content("Everyone"), EVERYONE)] + [(Content(safe(n)), s) for s, n in self.cast.items()]
                yield Select(options, value=EVERYONE, allow_blank=False, id="to")
            with Horizontal():
                yield Button("Send", variant="primary", id="send")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#text", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, message: Input.Submitted) -> None:
        """Send the text as it was when enter was pressed (keys typed ahead after it are not part of it)."""
        message.stop()
        self.send(message.value)

    @on(Button.Pressed, "#send")
    def _pressed(self) -> None:
        self.send(self.query_one("#text", Input).value)

    def send(self, typed: str) -> None:
        """Dismiss with the request; a blank text is not sent, and the dialog says what to type."""
        text = typed.strip()
        if not text:
            what = "world event" if self.kind == "event" else "note"
            self.notify(f"Nothing sent: type the {what} first (esc closes without sending).", severity="warning")
            self.query_one("#text", Input).focus()
            return
        if len(text) > DIRECTION_MAX_CHARS:  # refused here, so that what was typed stays to be shortened
            what = "world event" if self.kind == "event" else "note"
            self.notify(f"Not sent: the {what} is {len(text):,} characters; at most {DIRECTION_MAX_CHARS:,} (every "
                        "actor receives it in each request after it). Shorten it here, or esc.",
                        severity="warning", markup=False)
            self.query_one("#text", Input).focus()
            return
        if self.kind == "event":
            self.dismiss(WorldEvent(text))
            return
        to = self.query_one("#to", Select).value
        self.dismiss(DirectorNote(text, None if to == EVERYONE else str(to)))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Dismiss with nothing."""
        self.dismiss(None)
