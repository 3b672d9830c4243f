"""The small dialog that asks how to take a scene again from a beat (replay's `f`): a world event, a
note to every actor or to one, or nothing; returned as a `promptdesk.core.casting.branch.Change`."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from promptdesk.core.record.takes import Change
from promptdesk.tui.lines import safe

NOTHING, EVENT, NOTE_ALL = "__nothing__", "__event__", "__note__"
NOTE_TO = "note:"
"""The value of "a note to one actor" is this prefix and the actor's slug."""


class TakeDialog(ModalScreen[Change | None]):
    """Asks what changes at the beat a take starts from; dismisses with the change (None: cancelled)."""

    DEFAULT_CSS = """
    TakeDialog { align: center middle; }
    TakeDialog > Vertical { width: 76; max-width: 95%; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    TakeDialog Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    TakeDialog Select, TakeDialog Input { margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="take.cancel", tooltip="Close without starting a take")]

    def __init__(self, run: str, beat: int, cast: dict[str, str]) -> None:
        super().__init__()
        self.run, self.beat, self.cast = run, beat, dict(cast)

    def compose(self) -> ComposeResult:
        options = [(Content("A world event every actor receives"), EVENT), (Content("A note to every actor"), NOTE_ALL),
                   *((Content(f"A note to {safe(name)}"), NOTE_TO + slug) for slug, name in self.cast.items()),
                   (Content("Nothing: the same scene again"), NOTHING)]
        with Vertical():
            yield Label(Content(f"A take of {safe(self.run)} from the start of beat {self.beat}: the beats before it "
                                f"are kept as recorded, beat {self.beat} is played again with this change."))
            yield Select(options, value=EVENT, allow_blank=False, id="kind")
            yield Input(placeholder="The phone rings", id="text")
            with Horizontal():
                yield Button("Start the take", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#text", Input).focus()

    @on(Select.Changed, "#kind")
    def _kind(self, message: Select.Changed) -> None:
        """With nothing to change, the text is not asked for."""
        self.query_one("#text", Input).disabled = message.value == NOTHING

    @on(Input.Submitted)
    @on(Button.Pressed, "#start")
    def start(self) -> None:
        """Dismiss with the change, unless a world event or a note has no text."""
        kind = str(self.query_one("#kind", Select).value)
        text = self.query_one("#text", Input).value.strip()
        if kind == NOTHING:
            self.dismiss(Change())
        elif not text:
            self.query_one("#text", Input).focus()
        elif kind == EVENT:
            self.dismiss(Change(event=text))
        else:
            self.dismiss(Change(note=text, to=kind[len(NOTE_TO):] if kind.startswith(NOTE_TO) else None))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Dismiss with nothing."""
        self.dismiss(None)
