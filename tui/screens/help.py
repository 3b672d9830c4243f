"""The help screen (`?`): every key of the screen below it and of the console, from their bindings.

Nothing here is written by hand: each row is a binding's key as the terminal sends it (after any
remapping by `PROMPTDESK_KEYMAP`), its description and its tooltip, and whether it can act now.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Label, Static

from promptdesk.tui.dialog import Dialog

KEY, DIM = Style(bold=True), Style(dim=True)


def key_rows(node: DOMNode) -> Iterator[tuple[str, Binding]]:
    """Each binding of `node` with the keys that trigger it now (remapped keys included), in the order
    the bindings were declared; the keys of one action (`ctrl+c,super+c`) are joined with `/`."""
    keys: dict[tuple[str, str], list[str]] = {}
    bindings: dict[tuple[str, str], Binding] = {}
    for key, active in node._bindings.key_to_bindings.items():
        for binding in active:
            if binding.system:
                continue
            what = (binding.action, binding.description)
            remapped = node.app._keymap.get(binding.id or "")
            for each in remapped.split(",") if remapped else [key]:
                keys.setdefault(what, []).append(node.app.get_key_display(binding.with_key(each.strip())))
            bindings.setdefault(what, binding)
    for what, binding in bindings.items():
        yield "/".join(dict.fromkeys(keys[what])), binding


def help_rows(screen: Screen, app_node: DOMNode) -> list[tuple[str, Text]]:
    """The help's rows: a heading (no keys), then the screen's own keys, then the console's, each with
    what it does and whether it can act now."""
    rows: list[tuple[str, Text]] = []
    focused = screen.focused
    for title, node in ((screen_name(screen), screen), ("Anywhere", app_node)):
        rows.append(("", Text(title, KEY)))
        for keys, binding in key_rows(node):
            name = binding.action.split("(", 1)[0].removeprefix("app.").removeprefix("screen.")
            what = Text(binding.description or name)
            typed = [k for k in keys.split("/") if focused and len(k) == 1 and focused.check_consume_key(k, k)]
            if typed:  # a letter the focused widget takes (a field, a list that starts a path) is typed
                keys = "/".join(k for k in keys.split("/") if k not in typed) or keys
            can = node.check_action(name, ())
            if can is None:  # hidden where it is bound: it can never act here (a replay opened alone has no Back)
                continue
            if not can or keys in typed:
                what.append("  (not now)", DIM)
            if binding.tooltip:
                what.append(f" · {binding.tooltip}", DIM)
            if typed:
                what.append(f" ({' and '.join(typed)} is typed where the cursor is)", DIM)
            rows.append((keys, what))
        rows.append(("", Text()))
    return rows


def help_text(rows: list[tuple[str, Text]], width: int) -> Text:
    """The rows as two columns, laid out here (a table would be laid out by Rich on every frame): the keys,
    then what they do, wrapped under itself."""
    column = max((len(keys) for keys, _ in rows), default=0) + 4
    text = Text(no_wrap=True, overflow="crop")
    for keys, what in rows:
        if not keys:
            text.append_text(what)
            text.append("\n")
            continue
        lines = what.wrap(Console(width=max(10, width - column)), max(10, width - column))
        for n, line in enumerate(lines):
            text.append(f"  {keys}".ljust(column) if n == 0 else " " * column, KEY)
            text.append_text(line)
            text.append("\n")
    return text


class KeysText(Static):
    """The help's two columns, laid out again when the width changes."""

    def __init__(self, rows: list[tuple[str, Text]], width: int) -> None:
        super().__init__(help_text(rows, width), markup=False)
        self.rows, self.laid_out = rows, width

    def on_resize(self) -> None:
        if self.content_size.width and self.content_size.width != self.laid_out:
            self.laid_out = self.content_size.width
            self.update(help_text(self.rows, self.laid_out))


def screen_name(screen: Screen) -> str:
    """How the help names the screen it was opened on."""
    names = {"StageScreen": "Stage", "ReplayScreen": "Replay", "WizardScreen": "Wizard",
             "CompareScreen": "Compare", "EscalationModal": "Escalation dialog"}
    return names.get(type(screen).__name__, type(screen).__name__)


class HelpScreen(Dialog[None]):
    """Every key of the screen it was opened on; `esc` or `?` closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 96; max-width: 100%; height: 90%; border: thick $primary;
                            background: $surface; padding: 0 1; }
    HelpScreen VerticalScroll { height: 1fr; scrollbar-size-vertical: 1; }
    """
    BINDINGS = [Binding("escape,question_mark", "close", "Close", id="help.close", tooltip="Close the help"),
                Binding("q", "quit", "Quit", id="help.quit", show=False,
                        tooltip="Close the help and quit (a dialog hides the app's own `q`)")]

    def __init__(self, below: Screen) -> None:
        super().__init__()
        self.below = below

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Keys · {screen_name(self.below)} (esc closes)")
            with VerticalScroll():
                yield KeysText(help_rows(self.below, self.app), min(96, self.app.size.width) - 5)

    def action_close(self) -> None:
        """Back to the screen below."""
        self.dismiss(None)

    def action_quit(self) -> None:
        """Back to the screen below, then quit from there (asking first while a scene runs)."""
        self.dismiss(None)
        self.app.call_later(self.app.run_action, "quit")
