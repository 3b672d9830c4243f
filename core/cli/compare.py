"""`promptdesk compare RUN_DIR... | SWEEP_DIR... [--metrics LIST] [--unpaired] [--test sign-flip|wilcoxon]
[--adjust holm|bh] [--json | --csv | --csv-differences | --tui]`."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import textwrap
from pathlib import Path

from promptdesk.core.experiments.takes import kin_note
from promptdesk.core.record.takes import shown as shown_name
from promptdesk.core.experiments.compare import (METRICS, Comparison, check_sweeps, compare, folders_of, left_out, measure,
                                                 parse_metrics)
from promptdesk.core.experiments.column_stat import YES_NO
from promptdesk.core.experiments.compare_text import (difference_cells, difference_header, factorial_header,
                                                      factorial_rows, notes, shown_differences)
from promptdesk.core.experiments.evaluation_compare import (evaluation_metrics, means_json, means_text_rows, measured,
                                                              unit_for, unknown_json)
from promptdesk.core.experiments.stats.multiplicity import ADJUSTMENTS
from promptdesk.core.experiments.stats.rows import PAIRED_TESTS, Difference, Options
from promptdesk.core.errors import EXIT_CLOSED, PromptdeskError
from promptdesk.core.cli.common import (NO_CONSOLE, Console, command_parser, exit_codes, has_terminal, in_background,
                                        no_terminal, cannot_draw, refuse, refuse_on_terminal)
from promptdesk.core.cli.metrics import grid

CSV_KEYS = ("run", "scene", "isolation", "coordinator", "seed", "close_reason", *METRICS, "audit")
DIFFERENCE_KEYS = tuple(Difference.__dataclass_fields__)


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk compare", "Put runs, or the conditions of one or more sweeps, side by side, with "
                       "the statistics their design allows.",
                       exit_codes("compared (or the Compare screen was quit)", None,
                                  "invalid input: not runs, not comparable (runs of different scenes, unless "
                                  "--unpaired), or an unknown metric"))
    p.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR | SWEEP_DIR",
                   help="run folders, or sweep folders (their runs, by condition)")
    p.add_argument("--metrics", metavar="LIST",
                   help=f"only these metrics, comma-separated (default all: {','.join(METRICS)}; not with --tui)")
    p.add_argument("--unpaired", action="store_true",
                   help="compare conditions as independent samples even when they share seeds (and allow runs of "
                        "different scenes)")
    p.add_argument("--test", choices=PAIRED_TESTS, default="sign-flip",
                   help="the paired test: the exact sign-flip permutation test of the mean difference (default) or "
                        "Wilcoxon's signed-rank test")
    p.add_argument("--adjust", choices=tuple(ADJUSTMENTS), default="holm",
                   help="the adjustment across every test of the comparison: holm (family-wise error rate, default) or "
                        "bh (Benjamini-Hochberg, false discovery rate)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    form.add_argument("--csv", action="store_true", help="one row per run, for pandas")
    form.add_argument("--csv-differences", dest="csv_differences", action="store_true",
                      help="one row per metric and pair of conditions (b − a, CI, effect, p-values), for pandas")
    form.add_argument("--tui", action="store_true", help="open the Compare screen of the console")
    return p


def main(argv: list[str], console: Console | None = None) -> int:
    """The command; `--tui` opens the console's Compare screen through `console` (`promptdesk.core.cli.main.Console`)."""
    ns = parser().parse_args(argv)
    try:
        if ns.tui:
            if ns.metrics is not None:
                return refuse("INVALID_CONFIG: --metrics does not apply to --tui (the Compare screen shows every metric)")
            check_sweeps(ns.paths, Options(unpaired=ns.unpaired))
            runs, by, takes = measure(ns.paths, audit=False)
            compare(runs, by, METRICS, takes)   # a design the screen cannot compare is refused here, with its reason
            if console is None:
                return refuse(NO_CONSOLE)
            if not has_terminal():
                return refuse(no_terminal("without --tui the comparison is printed"))
            if refusal := (in_background("without --tui the comparison is printed")
                           or cannot_draw("without --tui the comparison is printed")):
                return refuse_on_terminal(refusal)
            return console.compare(*folders_of(ns.paths))
        check_sweeps(ns.paths, Options(unpaired=ns.unpaired))
        runs, by, takes = measure(ns.paths, audit=ns.json or ns.csv)
        known = (*METRICS, *evaluation_metrics(runs))
        metrics = known if ns.metrics is None else parse_metrics(ns.metrics, known)
        comparison = compare(runs, by, metrics, takes, Options(unpaired=ns.unpaired, test=ns.test, adjust=ns.adjust),
                             unit_for(runs, ns.paths), measured)
        comparison.left_out = left_out(ns.paths)
        if takes is None and (given := folders_of(ns.paths))[1] == "run":
            comparison.kin = kin_note(given[0])
    except PromptdeskError as exc:
        return refuse(str(exc))
    if ns.json:
        print(json.dumps({**comparison.to_dict(), "evaluation": means_json(comparison),
                          "evaluation_unknown": unknown_json(comparison)}, indent=2))
    elif ns.csv:
        write_csv(comparison, sys.stdout)
    elif ns.csv_differences:
        write_differences_csv(comparison, sys.stdout)
    else:
        print(text(comparison))
    return EXIT_CLOSED


def write_csv(comparison: Comparison, stream) -> None:
    """One row per run with every metric (true/false as yes/no, as `metrics` and the tables say it:
    pandas reads them with `true_values=["yes"], false_values=["no"]`; unknown as empty), an evaluation's
    dimensions (the mean of the run's actors) after them."""
    keys = [k for k in CSV_KEYS if k not in METRICS or k in comparison.metrics]
    scored = [m for m in comparison.metrics if m not in METRICS]
    writer = csv.DictWriter(stream, fieldnames=[*keys, "condition", *scored], lineterminator="\n")
    writer.writeheader()
    for run in comparison.runs:
        row = run.to_dict()
        writer.writerow({**{k: cell(row[k]) for k in keys}, "condition": run.condition(),
                         **{m: cell(measured(run, m)) for m in scored}})


def write_differences_csv(comparison: Comparison, stream) -> None:
    """One row per metric and pair of columns, every field of `Difference` (unknown as empty; the units
    dropped from the pairs separated by spaces, a benchmark's as `scene:seed`; true/false as yes/no)."""
    writer = csv.DictWriter(stream, fieldnames=list(DIFFERENCE_KEYS), lineterminator="\n")
    writer.writeheader()
    for d in comparison.differences:
        row = d.to_dict()
        row["dropped"] = " ".join(f"{u[0]}:{u[1]}" if isinstance(u, (tuple, list)) else str(u) for u in d.dropped)
        writer.writerow({k: cell(v) for k, v in row.items()})


def cell(value):
    """A CSV field: unknown as empty, true/false as yes/no (issue 34: yes/no instead of True everywhere)."""
    return "" if value is None else ("yes" if value else "no") if isinstance(value, bool) else value


def text(comparison: Comparison) -> str:
    """The table (a row per metric, a column per run or condition; `*` marks a metric with a difference
    significant after adjustment), the differences table, the factorial table of a two-choice sweep,
    and the notes."""
    marked = {d.metric for d in comparison.significant}
    header = ["metric", *map(shown_name, comparison.columns)]
    rows = [[f"{comparison.label(m)}{' *' if m in marked else ''}", *(s.text(m in YES_NO) for s in comparison.table[m].values())]
            for m in comparison.metrics]
    parts = [grid([header, *rows])]
    if comparison.takes is not None:
        parts.insert(0, "Takes:\n" + "\n".join(comparison.takes.tree_lines()))
    shown = shown_differences(comparison)
    if shown:
        parts.append(grid([difference_header(comparison), *(difference_cells(d) for d in shown)]))
    if factorial_rows(comparison):
        parts.append(grid([factorial_header(comparison), *factorial_rows(comparison)]))
    parts += [f"{title}\n{grid(rows)}\n" + "\n".join(textwrap.fill(note, 100) for note in notes)
              for title, rows, notes in means_text_rows(comparison)]
    return "\n\n".join(parts) + "\n\n" + "\n".join(textwrap.fill(note, 100) for note in notes(comparison))
