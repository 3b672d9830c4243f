"""`promptdesk report RUN_DIR|SWEEP_DIR --html FILE`: write one self-contained HTML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.errors import EXIT_CLOSED, EXIT_INVALID, PromptdeskError
from core.report import report


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="promptdesk report", description="A shareable HTML page of a run or a sweep.")
    p.add_argument("path", type=Path, metavar="RUN_DIR | SWEEP_DIR")
    p.add_argument("--html", type=Path, required=True, metavar="FILE", help="the HTML file to write")
    return p


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    try:
        text = report(ns.path)
    except PromptdeskError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INVALID
    try:
        ns.html.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"INVALID_CONFIG: cannot write --html {ns.html}: {exc.strerror}", file=sys.stderr)
        return EXIT_INVALID
    print(f"Report: {ns.html}", file=sys.stderr)
    return EXIT_CLOSED
