"""Screen bindings as command-palette commands, so that every control is also reachable by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen


def binding_commands(screen: Screen, prefix: str = "") -> Iterator[SystemCommand]:
    """One palette command per binding of `screen` that can act now (dimmed ones are left out)."""
    for binding in screen.BINDINGS:
        if not isinstance(binding, Binding):
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
