"""`promptdesk compare RUN_DIR... | SWEEP_DIR [--metrics LIST] [--json | --csv | --csv-differences | --tui]`."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import textwrap
from pathlib import Path

from promptdesk.core.experiments.compare import (DIFFERENCE_HEADER, METRICS, Comparison, compare, difference_cells, folders_of,
                                      measure, notes, parse_metrics, shown_differences)
from promptdesk.core.experiments.differences import Difference
from promptdesk.core.errors import EXIT_CLOSED, PromptdeskError
from promptdesk.core.cli.common import NO_CONSOLE, NO_TERMINAL, Console, command_parser, exit_codes, has_terminal, refuse
from promptdesk.core.cli.metrics import grid

CSV_KEYS = ("run", "scene", "isolation", "coordinator", "seed", "close_reason", *METRICS, "audit")
DIFFERENCE_KEYS = tuple(Difference.__dataclass_fields__)


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk compare", "Put runs, or a sweep's conditions, side by side.",
                       exit_codes("compared (or the Compare screen was quit)", None,
                                  "invalid input: not runs, not comparable, or an unknown metric"))
    p.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR | SWEEP_DIR",
                   help="run folders, or sweep folders (their runs, by condition)")
    p.add_argument("--metrics", metavar="LIST",
                   help=f"only these metrics, comma-separated (default all: {','.join(METRICS)}; not with --tui)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    form.add_argument("--csv", action="store_true", help="one row per run, for pandas")
    form.add_argument("--csv-differences", dest="csv_differences", action="store_true",
                      help="one row per metric and pair of conditions (b − a, CI, p-values), for pandas")
    form.add_argument("--tui", action="store_true", help="open the Compare screen of the console")
    return p


def main(argv: list[str], console: Console | None = None) -> int:
    """The command; `--tui` opens the console's Compare screen through `console` (`promptdesk.core.cli.main.Console`)."""
    ns = parser().parse_args(argv)
    try:
        if ns.tui:
            if ns.metrics is not None:
                return refuse("INVALID_CONFIG: --metrics does not apply to --tui (the Compare screen shows every metric)")
            if console is None:
                return refuse(NO_CONSOLE)
            if not has_terminal():
                return refuse(NO_TERMINAL)
            return console.compare(*folders_of(ns.paths))
        metrics = METRICS if ns.metrics is None else parse_metrics(ns.metrics)
        runs, by, takes = measure(ns.paths)
    except PromptdeskError as exc:
        return refuse(str(exc))
    comparison = compare(runs, by, metrics, takes)
    if ns.json:
        print(json.dumps(comparison.to_dict(), indent=2))
    elif ns.csv:
        write_csv(comparison, sys.stdout)
    elif ns.csv_differences:
        write_differences_csv(comparison, sys.stdout)
    else:
        print(text(comparison))
    return EXIT_CLOSED


def write_csv(comparison: Comparison, stream) -> None:
    """One row per run with every metric (booleans as true/false, unknown as empty)."""
    keys = [k for k in CSV_KEYS if k not in METRICS or k in comparison.metrics]
    writer = csv.DictWriter(stream, fieldnames=[*keys, "condition"], lineterminator="\n")
    writer.writeheader()
    for run in comparison.runs:
        row = run.to_dict()
        writer.writerow({**{k: "" if row[k] is None else row[k] for k in keys}, "condition": run.condition()})


def write_differences_csv(comparison: Comparison, stream) -> None:
    """One row per metric and pair of columns, every field of `Difference` (unknown as empty)."""
    writer = csv.DictWriter(stream, fieldnames=list(DIFFERENCE_KEYS), lineterminator="\n")
    writer.writeheader()
    for d in comparison.differences:
        writer.writerow({k: "" if v is None else v for k, v in d.to_dict().items()})


def text(comparison: Comparison) -> str:
    """The table (a row per metric, a column per run or condition; `*` marks a metric with a difference
    significant after adjustment), the differences table of a sweep, and the notes."""
    marked = {d.metric for d in comparison.significant}
    header = ["metric", *comparison.columns]
    rows = [[f"{m}{' *' if m in marked else ''}", *(s.text() for s in comparison.table[m].values())]
            for m in comparison.metrics]
    parts = [grid([header, *rows])]
    if comparison.takes is not None:
        parts.insert(0, "Takes:\n" + "\n".join(comparison.takes.tree_lines()))
    shown = shown_differences(comparison)
    if shown:
        parts.append(grid([DIFFERENCE_HEADER, *(difference_cells(d) for d in shown)]))
    return "\n\n".join(parts) + "\n\n" + "\n".join(textwrap.fill(note, 100) for note in notes(comparison))
