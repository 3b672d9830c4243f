"""Runs side by side: per run, or per condition (isolation-coordinator) with mean ± sd over seeds,
and for a sweep how sure each difference between two conditions is (`promptdesk.core.experiments.differences`:
a bootstrap interval, a permutation-test p-value, Holm-adjusted, and a power note).

A value that is unknown for a run (`success` of an old run folder, a goal no one judged, the echo of
a run without a 3-gram) is left out of the mean and counted as unknown, never read as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from statistics import mean, stdev
from typing import Any

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.experiments.differences import ALPHA, N_RESAMPLES, POWER, SEED, Difference, differences
from promptdesk.core.experiments.metrics import NotARunFolder, RunMetrics, audit_verdict, metrics_of
from promptdesk.core.experiments.take_sweep import is_take_sweep, measure_take_sweep, take_sweep_runs
from promptdesk.core.experiments.takes import Family, family, metrics_after
from promptdesk.core.experiments.sweep import PLAN_FILE, read_plan, read_results

METRICS = ("beats", "goal_achieved", "success", "duration_s", "turns", "silences", "interruptions", "reactions",
           "mean_speech_words", "echo", "failures", "corrections", "salvaged", "tokens", "cost_usd", "cache_read_share")
"""The rows of a comparison: every number of `RunMetrics` (booleans count as 0/1: a mean is a rate)."""


@dataclass
class Stat:
    """A metric over the runs of one column: mean and sd of the known values, n of them, how many unknown.
    With no known value (n = 0) both mean and sd are None (unknown), never 0."""

    mean: float | None
    sd: float | None
    n: int
    unknown: int = 0

    def text(self) -> str:
        if self.mean is None:
            return "unknown"
        missing = f"{self.unknown} unknown" if self.unknown else ""
        if self.n < 2:
            return number(self.mean) + (f" ({missing})" if missing else "")
        return f"{number(self.mean)} ± {number(self.sd)} (n={self.n}{', ' + missing if missing else ''})"


def number(x: float) -> str:
    """A number as a reader wants it: thousands with separators, small values to 3 significant digits."""
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}"


@dataclass
class Comparison:
    """Columns (runs or conditions), a `Stat` per metric and column, and every pair's difference."""

    by: str
    runs: list[RunMetrics]
    columns: dict[str, list[RunMetrics]]
    table: dict[str, dict[str, Stat]]
    differences: list[Difference]
    takes: Family | None = None
    """When the runs are takes of one another (`promptdesk.core.experiments.takes`): where they branched and
    diverge, and their tree; every metric is then of what follows the branch beat."""

    @property
    def metrics(self) -> list[str]:
        return list(self.table)

    @property
    def significant(self) -> list[Difference]:
        """The differences significant at `ALPHA` after Holm's adjustment."""
        return [d for d in self.differences if d.significant]

    def to_dict(self) -> dict[str, Any]:
        return {"by": self.by, "columns": list(self.columns),
                "metrics": {m: {c: vars(s) for c, s in row.items()} for m, row in self.table.items()},
                "differences": [d.to_dict() for d in self.differences],
                "statistics": {"alpha": ALPHA, "power": POWER, "n_resamples": N_RESAMPLES, "seed": SEED,
                               "diff": "b minus a", "ci": "95% percentile bootstrap",
                               "p_value": "two-sided permutation test of the difference of means",
                               "p_adjusted": "Holm, across the metric's pairs"},
                "runs": [r.to_dict() for r in self.runs],
                **({"branched_at": self.takes.branched_at, "diverges_at": self.takes.diverges_at,
                    "takes": self.takes.to_dict()} if self.takes is not None else {})}


def value(run: RunMetrics, metric: str) -> float | None:
    """A metric of a run as a number (True/False as 1/0), None when unknown."""
    raw = getattr(run, metric)
    return None if raw is None else float(raw)


def known(runs: list[RunMetrics], metric: str) -> list[float]:
    """The known values of a metric over runs."""
    return [v for v in (value(r, metric) for r in runs) if v is not None]


def stat(runs: list[RunMetrics], metric: str) -> Stat:
    values = known(runs, metric)
    if not values:
        return Stat(None, None, 0, len(runs))
    return Stat(round(mean(values), 6), round(stdev(values), 6) if len(values) > 1 else 0.0, len(values),
                len(runs) - len(values))


def compare(runs: list[RunMetrics], by: str = "run", metrics: tuple[str, ...] = METRICS,
            takes: Family | None = None) -> Comparison:
    """Group runs by `run` (one column each) or `condition`; measure each metric per column, and the
    difference of every pair of columns. `takes`: the runs are takes of one another (measured after
    their branch beat)."""
    columns: dict[str, list[RunMetrics]] = {}
    for run in runs:
        columns.setdefault(run.run if by == "run" else run.condition(), []).append(run)
    table = {m: {c: stat(rs, m) for c, rs in columns.items()} for m in metrics}
    found = [d for m in metrics for d in differences(m, {c: known(rs, m) for c, rs in columns.items()})]
    return Comparison(by, runs, columns, table, found, takes)


def parse_metrics(text: str) -> tuple[str, ...]:
    """`--metrics turns,tokens`: the metrics named, in the order given (raises InvalidConfig naming
    the valid ones)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    wrong = [n for n in names if n not in METRICS]
    if wrong or not names:
        raise InvalidConfig(f"--metrics takes a comma-separated list of {', '.join(METRICS)}; got {text!r}")
    return tuple(dict.fromkeys(names))


def is_sweep(path: Path) -> bool:
    return (path / PLAN_FILE).is_file()


def sweep_runs(folder: Path) -> list[Path]:
    """The finished runs of a sweep folder, in plan order (runs without a result are left out)."""
    done = {row.get("run") for row in read_results(folder)}
    return [folder / c.name for c in read_plan(folder).combinations() if c.name in done]


def folders_of(paths: list[Path]) -> tuple[list[Path], str]:
    """The run folders named (run folders, or one sweep folder's finished runs) and how to group them."""
    if len(paths) == 1 and is_take_sweep(paths[0]):
        folders = take_sweep_runs(paths[0])[0]
        if not folders:
            raise NotARunFolder(f"{paths[0]} is a sweep of takes with no finished take yet; run the sweep first")
        return folders, "condition"
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


def measure(paths: list[Path], audit: bool = True) -> tuple[list[RunMetrics], str, Family | None]:
    """As `load`, but runs that are takes of one another are measured from their branch beat on, and
    their family is returned with them."""
    folders, by = folders_of(paths)
    if len(paths) == 1 and is_take_sweep(paths[0]):
        return measure_take_sweep(paths[0], audit), by, None
    takes = family(folders) if by == "run" else None
    if takes is None:
        return [metrics_of(folder, audit=audit) for folder in folders], by, None
    return [metrics_after(t, takes.branched_at, audit_verdict(t.folder) if audit else "not run")
            for t in takes.takes], by, takes


def signed(x: float) -> str:
    return ("+" if x > 0 else "") + number(x)


def p_text(p: float | None) -> str:
    if p is None:
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


DIFFERENCE_HEADER = ["metric", "a", "b", "b − a", "95% CI", "p", "p (Holm)", "seeds for 80% power"]
"""The columns of the differences table (text, console and HTML alike)."""


def shown_differences(comparison: Comparison) -> list[Difference]:
    """The differences worth a row: tested ones where the runs did not all have the same value."""
    return [d for d in comparison.differences if d.tested and not d.all_equal]


def difference_cells(d: Difference) -> list[str]:
    """One row of the differences table; `*` marks a difference significant after adjustment."""
    ci = "—" if d.ci_low is None else f"{number(d.ci_low)} to {number(d.ci_high)}"
    return [d.metric, d.a, d.b, "—" if d.diff is None else signed(d.diff), ci, p_text(d.p_value),
            p_text(d.p_adjusted) + (" *" if d.significant else ""),
            "—" if d.seeds_needed is None else str(d.seeds_needed)]


def notes(comparison: Comparison) -> list[str]:
    """The sentences under the tables: how the differences were tested, what is significant, and
    where more seeds would be needed."""
    if comparison.by == "run":
        return [*takes_notes(comparison.takes),
                "One run per column: no seed-to-seed spread to test a difference against (compare a sweep for that)."]
    untested = [d for d in comparison.differences if not d.tested]
    equal = [d for d in comparison.differences if d.all_equal]
    out = [f"b − a: the difference of means, with its 95% bootstrap interval (percentile, {N_RESAMPLES:,} resamples) and "
           f"a two-sided permutation-test p ({N_RESAMPLES:,} permutations at most), Holm-adjusted across each metric's "
           f"pairs; fixed seed {SEED}."]
    if equal or untested:
        out.append(f"Not shown: {len(equal)} where every run had the same value (p = 1), {len(untested)} with a side "
                   f"of fewer than 2 known values.")
    significant = comparison.significant
    if significant:
        out.append(f"Significant at {ALPHA} after adjustment (*): "
                   + "; ".join(f"{d.metric} ({d.a} vs {d.b})" for d in significant) + ".")
    else:
        out.append(f"No difference is significant at {ALPHA} after adjustment.")
    have = min((len(rs) for rs in comparison.columns.values()), default=0)
    more = [d for d in shown_differences(comparison) if not d.significant and d.seeds_needed and d.seeds_needed > have]
    out.append(f"Seeds for 80% power: per condition, to find a difference of the observed size significant at {ALPHA} "
               f"(normal approximation with the pooled sd, taking the observed difference as the true one)"
               + (f"; {len(more)} not significant here would need more than the {have} seeds run." if more else "."))
    return out


def takes_notes(takes: Family | None) -> list[str]:
    """What a comparison of takes says first: the shared part, and where the takes part ways."""
    if takes is None:
        return []
    shared = f"beats 0 to {takes.branched_at - 1}" if takes.branched_at else "nothing but their start"
    where = (f"They diverge at beat {takes.diverges_at}." if takes.diverges_at is not None else
             f"They played the same from beat {takes.branched_at} to the close: no divergence.")
    return [f"Takes of one scene: they share {shared} (recorded once, paid once); every metric is of beat "
            f"{takes.branched_at} on. {where}"]
