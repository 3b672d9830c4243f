"""Runs side by side: per run, or per condition (isolation-coordinator) with mean ± sd over seeds.

A difference between two conditions *exceeds the seed-to-seed spread* when the distance between
their means is larger than the sum of their standard deviations, and each has at least two runs.
It is a reading aid, not a significance test: with five seeds it says where to look.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from statistics import mean, stdev
from typing import Any

from core.experiments.metrics import NotARunFolder, RunMetrics, metrics_of
from core.experiments.sweep import PLAN_FILE, read_plan, read_results

METRICS = ("beats", "goal_achieved", "success", "duration_s", "turns", "silences", "interruptions", "reactions",
           "mean_speech_words", "echo", "failures", "corrections", "tokens", "cost_usd", "cache_read_share")
"""The rows of a comparison: every number of `RunMetrics` (booleans count as 0/1)."""


@dataclass
class Stat:
    """A metric over the runs of one column."""

    mean: float | None
    sd: float
    n: int

    def text(self) -> str:
        if self.mean is None:
            return "—"
        if self.n < 2:
            return number(self.mean)
        return f"{number(self.mean)} ± {number(self.sd)} (n={self.n})"


def number(x: float) -> str:
    """A number as a reader wants it: thousands with separators, small values to 3 significant digits."""
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}"


@dataclass
class Comparison:
    """Columns (runs or conditions), a `Stat` per metric and column, and the notable differences."""

    by: str
    runs: list[RunMetrics]
    columns: dict[str, list[RunMetrics]]
    table: dict[str, dict[str, Stat]]
    beyond_spread: dict[str, list[tuple[str, str]]]

    def to_dict(self) -> dict[str, Any]:
        return {"by": self.by, "columns": list(self.columns),
                "metrics": {m: {c: vars(s) for c, s in row.items()} for m, row in self.table.items()},
                "beyond_spread": {m: [list(p) for p in pairs] for m, pairs in self.beyond_spread.items()},
                "runs": [r.to_dict() for r in self.runs]}


def value(run: RunMetrics, metric: str) -> float | None:
    """A metric of a run as a number (True/False as 1/0), None when unknown."""
    raw = getattr(run, metric)
    return None if raw is None else float(raw)


def stat(runs: list[RunMetrics], metric: str) -> Stat:
    values = [v for v in (value(r, metric) for r in runs) if v is not None]
    if not values:
        return Stat(None, 0.0, 0)
    return Stat(round(mean(values), 6), round(stdev(values), 6) if len(values) > 1 else 0.0, len(values))


def exceeds(a: Stat, b: Stat) -> bool:
    """True when two columns' means differ by more than their summed standard deviations."""
    if a.mean is None or b.mean is None or a.n < 2 or b.n < 2:
        return False
    return abs(a.mean - b.mean) > a.sd + b.sd


def compare(runs: list[RunMetrics], by: str = "run") -> Comparison:
    """Group runs by `run` (one column each) or `condition`, and measure every metric per column."""
    columns: dict[str, list[RunMetrics]] = {}
    for run in runs:
        columns.setdefault(run.run if by == "run" else run.condition(), []).append(run)
    table = {m: {c: stat(rs, m) for c, rs in columns.items()} for m in METRICS}
    beyond = {m: [(a, b) for a, b in combinations(columns, 2) if exceeds(row[a], row[b])] for m, row in table.items()}
    return Comparison(by, runs, columns, table, {m: pairs for m, pairs in beyond.items() if pairs})


def is_sweep(path: Path) -> bool:
    return (path / PLAN_FILE).is_file()


def sweep_runs(folder: Path) -> list[Path]:
    """The finished runs of a sweep folder, in plan order (runs without a result are left out)."""
    done = {row.get("run") for row in read_results(folder)}
    return [folder / c.name for c in read_plan(folder).combinations() if c.name in done]


def folders_of(paths: list[Path]) -> tuple[list[Path], str]:
    """The run folders named (run folders, or one sweep folder's finished runs) and how to group them."""
    if len(paths) == 1 and is_sweep(paths[0]):
        folders = sweep_runs(paths[0])
        if not folders:
            raise NotARunFolder(f"{paths[0]} is a sweep with no finished run yet; run the sweep first")
        return folders, "condition"
    for path in paths:
        if not (path / "events.jsonl").is_file():
            raise NotARunFolder(f"{path} is not a run folder (no events.jsonl in it) nor a sweep folder (no {PLAN_FILE})")
    return paths, "run"


def load(paths: list[Path], audit: bool = True) -> tuple[list[RunMetrics], str]:
    """The runs named measured, and how to group them."""
    folders, by = folders_of(paths)
    return [metrics_of(folder, audit=audit) for folder in folders], by


def summary_line(comparison: Comparison) -> str:
    """The sentence under the table: which differences exceed the seed-to-seed spread."""
    if comparison.by == "run":
        return "One run per column: no seed-to-seed spread to compare against (compare a sweep for that)."
    if not comparison.beyond_spread:
        return "No difference between conditions exceeds the seed-to-seed spread (|Δmean| > sd₁ + sd₂)."
    parts = [f"{m} ({'; '.join(f'{a} vs {b}' for a, b in pairs)})" for m, pairs in comparison.beyond_spread.items()]
    return "Differences beyond the seed-to-seed spread (|Δmean| > sd₁ + sd₂): " + ", ".join(parts) + "."
