"""The help screen (`?`): every key of the screen below it and of the console, from their bindings.

Nothing here is written by hand: each row is a binding's key as the terminal sends it (after any
remapping by `PROMPTDESK_KEYMAP`), its description and its tooltip, and whether it can act now.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.style import Style
from rich.table import Table
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


def help_table(screen: Screen, app_node: DOMNode) -> Table:
    """The help's rows: the screen's own keys, then the console's, each with what it does and whether
    it can act now."""
    table = Table(box=None, show_header=False, expand=True, padding=(0, 1))
    table.add_column("key", style=KEY, no_wrap=True)
    table.add_column("what")
    for title, node in ((screen_name(screen), screen), ("Anywhere", app_node)):
        table.add_row(Text(title, KEY), "")
        for keys, binding in key_rows(node):
            name = binding.action.split("(", 1)[0].removeprefix("app.").removeprefix("screen.")
            available = node.check_action(name, ())
            what = Text(binding.description or name)
            if not available:
                what.append("  (not now)", DIM)
            if binding.tooltip:
                what.append(f" · {binding.tooltip}", DIM)
            table.add_row(Text(f"  {keys}"), what)
        table.add_row("", "")
    return table


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
    HelpScreen VerticalScroll { height: 1fr; }
    """
    BINDINGS = [Binding("escape,question_mark", "close", "Close", id="help.close", tooltip="Close the help")]

    def __init__(self, below: Screen) -> None:
        super().__init__()
        self.below = below

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Keys · {screen_name(self.below)} (esc closes)")
            with VerticalScroll():
                yield Static(help_table(self.below, self.app), markup=False)

    def action_close(self) -> None:
        """Back to the screen below."""
        self.dismiss(None)
