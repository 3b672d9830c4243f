"""`promptdesk report RUN_DIR|SWEEP_DIR --html FILE` (or `report PARENT TAKE... --html FILE`, takes side
by side): write one self-contained HTML file, private to you (0600) as the run folder's files are: it holds
the actors' thinking. `--html -` writes the page to standard output instead."""

from __future__ import annotations

import argparse
import errno
import shlex
import sys
from pathlib import Path

from promptdesk.core.cli.common import command_parser, exit_codes, refuse
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, PromptdeskError
from promptdesk.core.experiments.report import report
from promptdesk.core.record.run_folder import open_private, write_atomic


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk report", "A shareable HTML page of a run or a sweep (or of a run and its takes).",
                       exit_codes("the page was written", "the disk failed it (full, a lost mount: RECORDING_ERROR)",
                                  "not a run or sweep, or the file cannot be written there"))
    p.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR | SWEEP_DIR",
                   help="a run, a sweep, or a run and its takes (promptdesk branch), side by side")
    p.add_argument("--html", type=Path, required=True, metavar="FILE",
                   help="the HTML file to write (`-`: standard output)")
    return p


DISK_FAULTS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def write_page(path: Path, text: str) -> None:
    """Write the page, private to you (0600: it holds the actors' thinking, as the run folder does). A
    file is replaced in one step, so a full disk leaves no half page (nor a half of the one it replaced);
    a device, a pipe or a link (`/dev/stdout`, a FIFO) is written as it is."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        with open_private(path, "w") as page:
            page.write(text)
    else:
        write_atomic(path, text, durable=False)


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
        write_page(ns.html, text)
    except OSError as exc:
        if exc.errno in DISK_FAULTS:  # the disk's failure, not the flag's: a script tells them apart by the code
            print(f"RECORDING_ERROR: could not write --html {ns.html}: {exc.strerror}; free space there, or give "
                  "another --html", file=sys.stderr)
            return EXIT_FAILED
        return refuse(f"INVALID_CONFIG: cannot write --html {ns.html}: {exc.strerror}")
    print(f"Report: {ns.html}", file=sys.stderr)
    return EXIT_CLOSED
