"""One pre-experiment choice: the question, spec 000's trade-off table, and the options to pick from."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Label, RadioButton, RadioSet, Static

from promptdesk.tui.choices import Choice


def tradeoff_table(choice: Choice) -> Table:
    """The choice's options as a table: option, what it means here, trade-off (plain `Text` cells)."""
    table = Table(expand=True, show_lines=True, header_style="bold")
    table.add_column("Option", ratio=2)
    table.add_column("In Promptdesk", ratio=4)
    table.add_column("Trade-off", ratio=4)
    for option in choice.options:
        table.add_row(Text(option.title, style="bold"), Text(option.here), Text(option.tradeoff))
    return table


class OptionButton(RadioButton):
    """A radio button whose glyph, not only its colour, says whether it is chosen: `●` chosen, `○` not."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 - Textual's name for the glyph
        return "●" if self.value else "○"


class ChoicePicker(VerticalScroll):
    """Presents one choice with nothing pre-selected, unless the scene file or a flag already chose.

    The options come first (at 80x24 they are on screen without scrolling), then spec 000's trade-offs.
    Pick with the arrow keys and Enter/Space, or press an option's letter. A suggestion (the last
    scene's answer) is said, never pre-selected.
    """

    DEFAULT_CSS = """
    ChoicePicker { height: 1fr; padding: 0 1; }
    ChoicePicker > .question { text-style: bold; width: 1fr; }
    ChoicePicker > .intro { margin-top: 1; }
    ChoicePicker > .tradeoffs { height: auto; margin-top: 1; }
    ChoicePicker > .source { color: $text-muted; }
    ChoicePicker > RadioSet { width: 100%; }
    """

    class Chosen(Message):
        """The operator picked (or changed) an option."""

        def __init__(self, picker: ChoicePicker, key: str) -> None:
            super().__init__()
            self.picker = picker
            self.key = key
            """The option picked: a/b for isolation, A/B/C for the coordinator."""

        @property
        def control(self) -> ChoicePicker:
            """The picker (so that `@on(ChoicePicker.Chosen, "#id")` selectors work)."""
            return self.picker

    def __init__(self, choice: Choice, *, suggested: str | None = None, id: str | None = None, **kwargs) -> None:
        super().__init__(id=id or f"choice-{choice.name}", **kwargs)
        self.choice = choice
        self.value: str | None = None
        """The option chosen so far, or None: never a silent default."""
        self.preset_from: tuple[str, str] | None = None
        """(option, where it was chosen) when the scene file or a flag chose it."""
        self.suggested = choice.option(suggested)
        """The last scene's answer, said as a suggestion (never chosen for the operator)."""

    def compose(self) -> ComposeResult:
        yield Label(self.choice.question, classes="question")
        with RadioSet():
            for option in self.choice.options:
                yield OptionButton(Content(option.title), name=option.key)
        yield Static(Content(self.unchosen()), classes="source")
        yield Static(Content(self.choice.intro), classes="intro")
        yield Static(tradeoff_table(self.choice), classes="tradeoffs")

    def unchosen(self) -> str:
        """What the line under the options says while nothing is chosen."""
        letters = " or ".join(o.key for o in self.choice.options)
        if self.suggested is not None:
            return (f"Nothing is pre-selected. Last scene: {self.suggested.title} (press {self.suggested.key} "
                    f"to choose it again). Press {letters}.")
        return f"Nothing is pre-selected. Press {letters}, or use ↑/↓ and Enter."

    def on_mount(self) -> None:
        self.call_after_refresh(self._no_cursor)

    def _no_cursor(self) -> None:
        """Nothing chosen, no row highlighted: Textual puts its cursor on the first row, which reads as
        a pre-selected answer. ↓ brings the cursor back."""
        if self.value is None:
            self.query_one(RadioSet)._selected = None

    def preset(self, key: str | None, source: str) -> None:
        """Show an option already chosen elsewhere (scene file, flag) as chosen; it stays changeable."""
        if key is None or self.choice.option(key) is None:
            return
        self.preset_from = (key, source)
        self._press(key)
        self._say(key)

    def _say(self, key: str) -> None:
        """The line under the options, once `key` is chosen: what was chosen, and where."""
        option = self.choice.option(key)
        if option is None:
            return
        others = " or ".join(o.key for o in self.choice.options if o.key != key)
        where = f" in {self.preset_from[1]}" if self.preset_from and self.preset_from[0] == key else ""
        self.query_one(".source", Static).update(
            Content(f"Chosen{where}: {option.title}. Press {others} to change it."))

    def _press(self, key: str) -> None:
        for button in self.query(RadioButton):
            if button.name == key and not button.value:
                button.value = True
        self.value = key

    @on(RadioSet.Changed)
    def _changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        key = event.pressed.name or ""
        if key:
            self.value = key
            self._say(key)
            self.post_message(self.Chosen(self, key))

    def on_key(self, event: events.Key) -> None:
        """An option's letter (either case) picks it."""
        letter = (event.character or "").lower()
        option = next((o for o in self.choice.options if o.key.lower() == letter), None) if letter else None
        if option is not None:
            event.stop()
            self._press(option.key)
