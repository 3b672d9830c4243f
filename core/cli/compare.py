"""`promptdesk compare RUN_DIR... | SWEEP_DIR [--json | --csv | --tui]`: runs side by side."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from core.experiments.compare import METRICS, Comparison, compare, folders_of, load, summary_line
from core.errors import EXIT_CLOSED, PromptdeskError
from core.cli.common import NO_CONSOLE, Console, refuse
from core.cli.metrics import grid

CSV_KEYS = ("run", "scene", "isolation", "coordinator", "seed", "close_reason", *METRICS, "audit")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="promptdesk compare", description="Put runs, or a sweep's conditions, side by side.")
    p.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR | SWEEP_DIR")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    form.add_argument("--csv", action="store_true", help="one row per run, for pandas")
    form.add_argument("--tui", action="store_true", help="open the Compare screen of the console")
    return p


def main(argv: list[str], console: Console | None = None) -> int:
    """The command; `--tui` opens the console's Compare screen through `console` (`core.cli.main.Console`)."""
    ns = parser().parse_args(argv)
    try:
        if ns.tui:
            if console is None:
                return refuse(NO_CONSOLE)
            return console.compare(*folders_of(ns.paths))
        runs, by = load(ns.paths)
    except PromptdeskError as exc:
        return refuse(str(exc))
    comparison = compare(runs, by)
    if ns.json:
        print(json.dumps(comparison.to_dict(), indent=2))
    elif ns.csv:
        write_csv(comparison, sys.stdout)
    else:
        print(text(comparison))
    return EXIT_CLOSED


def write_csv(comparison: Comparison, stream) -> None:
    """One row per run with every metric (booleans as true/false, unknown as empty)."""
    writer = csv.DictWriter(stream, fieldnames=[*CSV_KEYS, "condition"], lineterminator="\n")
    writer.writeheader()
    for run in comparison.runs:
        row = run.to_dict()
        writer.writerow({**{k: "" if row[k] is None else row[k] for k in CSV_KEYS}, "condition": run.condition()})


def text(comparison: Comparison) -> str:
    """The table: a row per metric, a column per run or condition; `*` marks a metric whose
    difference between some columns exceeds the seed-to-seed spread."""
    header = ["metric", *comparison.columns]
    rows = [[f"{m}{' *' if m in comparison.beyond_spread else ''}", *(s.text() for s in comparison.table[m].values())]
            for m in METRICS]
    return grid([header, *rows]) + "\n\n" + summary_line(comparison)
