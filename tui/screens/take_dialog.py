"""The small dialog that asks how to take a scene again from a beat (replay's `f`): a world event, a
note to every actor or to one, or nothing; returned as a `promptdesk.core.casting.branch.Change`."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Input, Select, Static

from promptdesk.core.record.takes import Change
from promptdesk.tui.dialog import Dialog
from promptdesk.tui.lines import safe
from promptdesk.tui.line_input import LineInput

NOTHING, EVENT, NOTE_ALL = "__nothing__", "__event__", "__note__"
NOTE_TO = "note:"
"""The value of "a note to one actor" is this prefix and the actor's slug."""


def explanation(run: str, beat: int) -> str:
    """What a take from the start of `beat` of `run` keeps, what it plays again, and where it is written."""
    kept = ("nothing of it is kept" if beat == 0 else
            "beat 0 is kept as recorded" if beat == 1 else f"beats 0 to {beat - 1} are kept as recorded")
    return (f"A take of {safe(run)} from the start of beat {beat}: {kept} (not played or paid for again); "
            f"beat {beat} and every beat after it are played again, live, with the change chosen here. "
            "The take is a new run folder beside this one; this run stays as it is.")


class TakeDialog(Dialog[Change | None]):
    """Asks what changes at the beat a take starts from; dismisses with the change (None: cancelled)."""

    DEFAULT_CSS = """
    TakeDialog { align: center middle; }
    TakeDialog > VerticalScroll { width: 76; max-width: 95%; height: auto; max-height: 100%; border: thick $accent;
                                  background: $surface; padding: 1 2; scrollbar-size-vertical: 1; }
    TakeDialog #explanation { width: 1fr; height: auto; }
    TakeDialog Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    TakeDialog Select, TakeDialog Input { margin-top: 1; }
    TakeDialog.-small > VerticalScroll { padding: 0 1; }
    TakeDialog.-small Select, TakeDialog.-small Input, TakeDialog.-small Horizontal { margin-top: 0; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="take.cancel", tooltip="Close without starting a take")]

    def __init__(self, run: str, beat: int, cast: dict[str, str]) -> None:
        super().__init__()
        self.run, self.beat, self.cast = run, beat, dict(cast)

    def compose(self) -> ComposeResult:
        options = [(Content("A world event every actor receives"), EVENT), (Content("A note to every actor"), NOTE_ALL),
                   *((Content(f"A note to {safe(name)}"), NOTE_TO + slug) for slug, name in self.cast.items()),
                   (Content("Nothing: the same scene again"), NOTHING)]
        with VerticalScroll():
            yield Static(Content(explanation(self.run, self.beat)), id="explanation")
            yield Select(options, value=EVENT, allow_blank=False, id="kind")
            yield LineInput(placeholder="The phone rings", id="text")
            with Horizontal():
                yield Button("Start the take", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#text", Input).focus()

    def on_resize(self) -> None:
        """A small terminal gets the dialog without its margins, so that everything in it shows."""
        self.set_class(self.size.height < 24 or self.size.width < 70, "-small")

    @on(Select.Changed, "#kind")
    def _kind(self, message: Select.Changed) -> None:
        """With nothing to change, the text is not asked for."""
        self.query_one("#text", Input).disabled = message.value == NOTHING

    @on(Input.Submitted)
    def _submitted(self, message: Input.Submitted) -> None:
        """Start with the text as it was when enter was pressed (keys typed ahead after it are not part of it)."""
        message.stop()
        self.start(message.value)

    @on(Button.Pressed, "#start")
    def _pressed(self) -> None:
        self.start(self.query_one("#text", Input).value)

    def start(self, typed: str) -> None:
        """Dismiss with the change; a world event or a note with no text starts nothing, and says what to type."""
        kind = str(self.query_one("#kind", Select).value)
        text = typed.strip()
        if kind == NOTHING:
            self.dismiss(Change())
        elif not text:
            what = "the world event" if kind == EVENT else "the note"
            self.notify(f"No take started: type {what} first, or choose “Nothing: the same scene again” "
                        "(esc closes).", severity="warning")
            self.query_one("#text", Input).focus()
        elif kind == EVENT:
            self.dismiss(Change(event=text))
        else:
            self.dismiss(Change(note=text, to=kind[len(NOTE_TO):] if kind.startswith(NOTE_TO) else None))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Dismiss with nothing."""
        self.dismiss(None)
