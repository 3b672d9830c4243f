"""`promptdesk metrics RUN_DIR [--json]`: one run's metrics as a table or as JSON."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import textwrap
import unicodedata
from pathlib import Path

from promptdesk.core.cli.common import command_parser, exit_codes, refuse
from promptdesk.core.errors import EXIT_CLOSED, PromptdeskError
from promptdesk.core.experiments.metrics import NESTED, NotARunFolder, RunMetrics, metrics_of
from promptdesk.core.experiments.takes import metrics_after, read_take
from promptdesk.core.protocol.sanitize import strip_controls
from promptdesk.core.record.cut import cut_of_folder
from promptdesk.core.record.takes import shown

ACTOR_COLUMNS = ("turns", "silences", "interruptions", "reactions", "words", "talk_share", "tokens", "cost_usd",
                 "cache_read_share", "echo", "failures", "corrections", "salvaged")


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk metrics", "Measure one run from its events.jsonl alone.",
                       exit_codes("measured", None, "not a run folder"))
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the run folder")
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    return p


def main(argv: list[str]) -> int:
    p = parser()
    ns, extra = p.parse_known_args(argv)
    if extra and not any(arg.startswith("-") for arg in extra):
        given = [str(ns.run_dir), *extra]
        return refuse(f"INVALID_CONFIG: metrics measures one run, and {len(given)} were given ({', '.join(given)}): "
                      f"name one, or put them side by side with `{shlex.join(['promptdesk', 'compare', *given])}`")
    if extra:
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        metrics = metrics_of(ns.run_dir)
    except NotARunFolder as exc:
        return refuse(f"{exc}{_sweep_hint(Path(ns.run_dir))}")
    except PromptdeskError as exc:
        return refuse(str(exc))
    print(json.dumps(metrics.to_dict(), indent=2) if ns.json else table(metrics))
    if cut := cut_of_folder(ns.run_dir):
        print(f"NOTICE: the record is cut short, so these are the metrics of a run that never finished: {cut}",
              file=sys.stderr)
    if take := take_notice(ns.run_dir):
        print(take, file=sys.stderr)
    return EXIT_CLOSED


def _sweep_hint(folder: Path) -> str:
    """For a sweep's folder (or a sweep of takes') given as a run: what measures it, and one of its runs."""
    if not any((folder / plan).is_file() for plan in ("sweep.yaml", "takes.yaml")):
        return ""
    runs = sorted(p.name for p in folder.iterdir() if (p / "events.jsonl").is_file()) if folder.is_dir() else []
    one = f"; `promptdesk metrics {shlex.quote(str(folder / runs[0]))}` measures one of its runs" if runs else ""
    return (f". It is a sweep's folder: `promptdesk compare {shlex.quote(str(folder))}` measures its runs side by "
            f"side{one}")


def take_notice(run_dir: Path) -> str | None:
    """For a take (`promptdesk branch`): that its metrics are of the whole record, its parent's part with them,
    and what of it is its own (the beats from its branch beat on), as its summary said; None for any other run."""
    take = read_take(run_dir)
    if take.parent is None or not take.beat:
        return None  # a run, or a take from beat 0 (nothing of its parent's but the start)
    own = metrics_after(take, take.beat)
    return (f"NOTICE: {shown(str(run_dir))} is a take of {shown(Path(take.parent).name)} from beat {take.beat}: these "
            f"metrics are of its whole record, {'beat 0' if take.beat == 1 else f'beats 0 to {take.beat - 1}'} its parent's, "
            f"copied and not paid again; its "
            f"own, beat {take.beat} on: {own.beats} beats, {own.turns} turns, {own.tokens:,} tokens, "
            f"${own.cost_usd or 0:.4f} (`promptdesk compare` of it beside its parent measures from the beat they part)")


def grid(rows: list[list[str]]) -> str:
    """Rows of cells as aligned plain-text columns (first column left, the rest right), measured in a
    terminal's cells: a Chinese or Japanese character (a tone `平静`, a folder `実行1`) takes two, a
    combining mark none."""
    widths = [max(cells(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell + " " * (w - cells(cell)) if i == 0 else " " * (w - cells(cell)) + cell
                               for i, (cell, w) in enumerate(zip(row, widths))) for row in rows)


def cells(text: str) -> int:
    """The terminal cells `text` takes: two for a wide or full-width character, none for a combining
    mark or a format character (a zero-width joiner, a direction mark), one for any other."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.category(c) in ("Mn", "Me", "Cf") else 2 if unicodedata.east_asian_width(c) in "WF"
               else 1 for c in text)


def cell(value: object) -> str:
    """One value as printed in a table (None, a value the run did not record or cannot have, as `unknown`;
    true and false as yes and no)."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return " ".join(strip_controls(str(value)).split())  # a folder named with an escape or a line break


def table(m: RunMetrics) -> str:
    """The run's metrics: a summary (a condition label only where the run has one), a per-actor table
    and the address matrix."""
    summary = [[k, cell(v) + (" (simulated time)" if k == "duration_s" and m.clock == "simulated" else "")]
               for k, v in m.to_dict().items() if k not in NESTED and not (k == "condition_label" and v is None)]
    actors = [["actor", *ACTOR_COLUMNS]] + [[slug, *(cell(getattr(a, c)) for c in ACTOR_COLUMNS)]
                                            for slug, a in m.actors.items()]
    targets = sorted({t for row in m.addressed.values() for t in row})
    matrix = [["from \\ to", *targets]] + [[slug, *(str(row.get(t, 0)) for t in targets)]
                                          for slug, row in m.addressed.items()]
    addressed = (grid(matrix) if len(targets) <= MATRIX_COLUMNS else addressed_list(m)) if targets else \
        "no speech addressed"
    return "\n\n".join([grid(summary), grid(actors), addressed,
                        arcs_table(m), relationships_table(m), timing_table(m)])


MATRIX_COLUMNS = 12
"""Past this many addressees (a crowd's) the address matrix is printed as a list, one speaker a line with the
names it addressed, most first: a matrix of 28 columns is some 400 characters wide."""


def addressed_list(m: RunMetrics) -> str:
    """The address matrix of a crowd as one speaker a line with the names it addressed and how often, most
    first (`*`: everyone), wrapped under the names at 100 characters."""
    width = max(len(slug) for slug in m.addressed)
    lines = ["Addressed (from: to and speeches; * is everyone)"]
    for slug, row in m.addressed.items():
        said = ", ".join(f"{t} {n}" for t, n in sorted(row.items(), key=lambda kv: (-kv[1], kv[0])) if n) or "-"
        lines += textwrap.wrap(said, 100, initial_indent=slug.ljust(width + 2), subsequent_indent=" " * (width + 2),
                               break_on_hyphens=False)
    return "\n".join(lines)


def arcs_table(m: RunMetrics) -> str:
    """Each actor's tone per beat (`-` where it gave none), under a heading."""
    if not any(tone for row in m.arcs.values() for tone in row):
        return "Tone by beat: no tone recorded"
    beats = max(len(row) for row in m.arcs.values())
    rows = [["actor \\ beat", *(str(b) for b in range(beats))]]
    rows += [[slug, *(tone or "-" for tone in row)] for slug, row in m.arcs.items()]
    return "Tone by beat\n" + grid(rows)


def relationships_table(m: RunMetrics) -> str:
    """Who addressed whom, how often and in which tones, under a heading."""
    rows = [["from", "to", "speeches", "tones"]]
    rows += [[speaker, to, str(r.speeches), ", ".join(f"{tone} {n}" for tone, n in r.tones.items())]
             for speaker, row in m.relationships.items() for to, r in row.items()]
    return "Relationships\n" + (grid(rows) if len(rows) > 1 else "no speech addressed to a cast member")


def timing_table(m: RunMetrics) -> str:
    """Each beat's wall time, slowest call (and whose) and spread, under a heading."""
    rows = [["beat", "wall_s", "calls", "slowest_s", "slowest", "spread_s"]]
    rows += [[str(t.beat), cell(t.wall_s), str(t.calls), cell(t.slowest_s), t.slowest or "-", cell(t.spread_s)]
             for t in m.beat_timing]
    return "Timing per beat\n" + (grid(rows) if len(rows) > 1 else "no beat played")
