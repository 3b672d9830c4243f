"""`promptdesk report RUN_DIR|SWEEP_DIR --html FILE` (or `report PARENT TAKE... --html FILE`, takes side
by side): write one self-contained HTML file, private to you (0600) as the run folder's files are: it holds
the actors' thinking. `--html -` writes the page to standard output instead."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from promptdesk.core.cli.common import command_parser, exit_codes, refuse
from promptdesk.core.errors import EXIT_CLOSED, PromptdeskError
from promptdesk.core.experiments.report import report
from promptdesk.core.record.run_folder import open_private


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk report", "A shareable HTML page of a run or a sweep (or of a run and its takes).",
                       exit_codes("the page was written", None, "not a run or sweep, or the file cannot be written"))
    p.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR | SWEEP_DIR",
                   help="a run, a sweep, or a run and its takes (promptdesk branch), side by side")
    p.add_argument("--html", type=Path, required=True, metavar="FILE",
                   help="the HTML file to write (`-`: standard output)")
    return p


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    try:
        from promptdesk.core.experiments.take_sweep import is_take_sweep
        from promptdesk.core.experiments.takes_report import take_sweep_report, takes_report

        command = shlex.join(["promptdesk", "report", *argv])
        if len(ns.paths) > 1:
            text = takes_report(ns.paths, command)
        elif is_take_sweep(ns.paths[0]):
            text = take_sweep_report(ns.paths[0], command)
        else:
            text = report(ns.paths[0], command)
    except PromptdeskError as exc:
        return refuse(str(exc))
    if str(ns.html) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return EXIT_CLOSED
    try:
        with open_private(ns.html, "w") as page:  # it holds the actors' thinking, as the run folder does
            page.write(text)
    except OSError as exc:
        return refuse(f"INVALID_CONFIG: cannot write --html {ns.html}: {exc.strerror}")
    print(f"Report: {ns.html}", file=sys.stderr)
    return EXIT_CLOSED
