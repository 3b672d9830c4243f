"""Screen bindings as command-palette commands, so that every control is also reachable by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen


def binding_commands(screen: Screen, prefix: str = "") -> Iterator[SystemCommand]:
    """One palette command per binding of `screen` that can act now (dimmed ones are left out); a binding
    of an app action (quit) is left to the app's own command, so that it is listed once."""
    for binding in screen.BINDINGS:
        if not isinstance(binding, Binding) or binding.action.startswith("app."):
            continue
        name = binding.action.split("(", 1)[0]
        if screen.check_action(name, ()):
            yield SystemCommand(f"{prefix}{binding.description}", binding.tooltip,
                                lambda action=binding.action: screen.call_later(screen.run_action, action))


def copy_run_folder(screen: Screen, run_dir: str | Path) -> SystemCommand:
    """The palette command that copies a run folder's full path to the clipboard."""
    def copy() -> None:
        path = str(Path(run_dir).resolve())
        screen.app.copy_to_clipboard(path)
        screen.notify(f"Copied: {path}", title="Run folder", markup=False, timeout=4)
    return SystemCommand("Copy the run folder's path", "Put the full path of this run's folder on the clipboard",
                         copy)


def copy_selection(screen: Screen) -> None:
    """`ctrl+c`: copy the text selected with the mouse and say how much was copied (nothing selected:
    the key goes on to the app, as Textual's own copy does)."""
    from textual.actions import SkipAction

    text = screen.get_selected_text()
    if not text:
        raise SkipAction()
    screen.app.copy_to_clipboard(text)
    lines = text.count("\n") + 1
    screen.notify(f"Copied {len(text)} character{'s' if len(text) != 1 else ''}"
                  f"{f' ({lines} lines)' if lines > 1 else ''} to the clipboard", title="Copied",
                  markup=False, timeout=3)
