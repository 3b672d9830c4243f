"""The `promptdesk` command: the console, plus every headless command of `promptdesk.core.cli`.

The console is the top of the house: it may import the core, the core never imports it. So the
entry point lives here and hands the core a way to open the console; `--batch` and the other
commands run without Textual ever being imported (`python -m promptdesk.core.cli` is the same, minus the console;
`python -m promptdesk` is the whole command).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from promptdesk import resources
from promptdesk.core.cli.main import main as cli_main


class Console:
    """What `promptdesk.core.cli.main` may ask of the console: open it (on a scene or a replay), or open Compare."""

    def open(self, ns: argparse.Namespace, scene: Path | None = None, replay: Path | None = None) -> int:
        resources.check_console()
        from promptdesk.tui.app import run_console
        return run_console(ns, scene=scene, replay=replay)

    def compare(self, folders: list[Path], by: str) -> int:
        resources.check_console()
        from promptdesk.tui.app import run_compare_app
        return run_compare_app(folders, by)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    return cli_main(sys.argv[1:] if argv is None else list(argv), console=Console())


if __name__ == "__main__":
    raise SystemExit(main())
