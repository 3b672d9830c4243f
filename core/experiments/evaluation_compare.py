"""Evaluations side by side: each rubric's dimensions as metrics of `compare`, and Sotopia's overall means.

A run evaluated on a rubric (`evaluation.json`) has, per dimension, the mean of its actors' known scores;
`compare` takes those as metrics (`sotopia.goal`, `sotopia.overall`; with several evaluators,
`sotopia.goal@openai:gpt-4o`), through its `measure` hook, with the paired statistics of any metric. A
benchmark sweep's runs are paired by scene and seed (`unit_for`): the same scenario with the same seed
under each model.

Sotopia's own tables report, per model and dimension, the mean over agents and episodes: every agent's
score in every episode counts once (`overall_means`), unknown scores left out and counted (an agent of a
run that was never scored, a failed run or a failed evaluation call, counts as unknown on every
dimension, so that two columns over different episodes say so). That is the
table `compare` prints under the others for each evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from math import sqrt
from statistics import mean, stdev
from typing import Any

from promptdesk.core.experiments.compare import BY_SCENE_AND_SEED, BY_SEED, METRICS, Comparison, Unit, number, value
from promptdesk.core.experiments.metrics import RunMetrics
from promptdesk.core.experiments.sweep import PLAN_FILE, read_plan
from promptdesk.core.protocol.rubrics import RUBRICS

OVERALL = "overall"


def keys_of(runs: list[RunMetrics]) -> list[str]:
    """Every `rubric@evaluator` the runs were evaluated by, in the order first met."""
    return list(dict.fromkeys(key for run in runs for key in run.evaluation))


def metric_name(key: str, dimension: str, single: bool) -> str:
    rubric, _, evaluator = key.partition("@")
    return f"{rubric}.{dimension}" if single else f"{rubric}.{dimension}@{evaluator}"


def dimensions_of(runs: list[RunMetrics], key: str) -> list[str]:
    rubric = key.partition("@")[0]
    known = RUBRICS.get(rubric)
    names = list(known.names) if known else next((list(r.evaluation[key]["dimensions"]) for r in runs
                                                  if key in r.evaluation), [])
    return [*names, OVERALL]


def evaluation_metrics(runs: list[RunMetrics]) -> list[str]:
    """The metric names of the runs' evaluations (none when no run was evaluated)."""
    keys = keys_of(runs)
    return [metric_name(key, d, len(keys) == 1) for key in keys for d in dimensions_of(runs, key)]


def _key(run: RunMetrics, rubric: str, evaluator: str) -> str | None:
    if evaluator:
        return f"{rubric}@{evaluator}"
    return next((key for key in run.evaluation if key.partition("@")[0] == rubric), None)


def measured(run: RunMetrics, metric: str) -> float | None:
    """A metric of a run: an evaluation's (the mean of the run's actors on that dimension), else `value`."""
    if metric in METRICS:
        return value(run, metric)
    head, _, evaluator = metric.partition("@")
    rubric, _, dimension = head.partition(".")
    group = run.evaluation.get(_key(run, rubric, evaluator) or "")
    score = (group or {}).get("mean", {}).get(dimension)
    return None if score is None else float(score)


def is_benchmark(path: Path) -> bool:
    """A sweep folder whose plan has several scenes (a benchmark sweep)."""
    return (Path(path) / PLAN_FILE).is_file() and bool(read_plan(Path(path)).scenes)


def unit_for(runs: list[RunMetrics], paths: list[Path]) -> Unit:
    """Scene and seed for runs of several scenes from a benchmark sweep; the seed otherwise."""
    several = len({r.scene for r in runs}) > 1
    return BY_SCENE_AND_SEED if several and any(is_benchmark(p) for p in paths) else BY_SEED


@dataclass
class Mean:
    """The mean over agents and episodes of one dimension in one column: known scores, and how many are not."""

    mean: float | None
    n: int
    unknown: int
    partial: int = 0
    """The overall only: how many of the `n` agents' overall scores are means of fewer than `of` dimensions."""
    of: int = 0
    sd: float | None = None
    """The standard deviation of the `n` known scores (None under two)."""

    @property
    def ci95(self) -> float | None:
        """The half-width of the mean's 95% t interval, the scores taken as independent (as Sotopia's margin of
        error takes them); None under two scores."""
        if self.sd is None:
            return None
        from scipy.stats import t  # noqa: PLC0415 - scipy is slow to import; only a table of scores needs it
        return float(t.ppf(0.975, self.n - 1)) * self.sd / sqrt(self.n)

    def text(self) -> str:
        if self.mean is None:
            return "unknown" + (f" ({self.unknown} unknown)" if self.unknown else "")
        notes = [f"n={self.n}", *([f"{self.unknown} unknown"] if self.unknown else [])]
        if self.partial:
            notes.append(f"{'each' if self.partial == self.n else f'{self.partial} of them'} a mean of fewer than "
                         f"{self.of} dimensions")
        spread = "" if self.sd is None else f" ± {number(self.sd)}"
        return f"{number(self.mean)}{spread} ({', '.join(notes)})"


def overall_means(comparison: Comparison, key: str) -> dict[str, dict[str, Mean]]:
    """dimension -> column -> the mean over every agent of every run of the column (Sotopia's tables).
    Each agent's overall is taken again from its scores (the record rounds it), and no mean is rounded
    before it is shown, so that the figure shown is the mean's own."""
    table: dict[str, dict[str, Mean]] = {}
    dimensions = dimensions_of(comparison.runs, key)
    for dimension in dimensions:
        row = table.setdefault(dimension, {})
        for column, runs in comparison.columns.items():
            actors = [actor for run in runs for actor in (run.evaluation.get(key) or {}).get("actors", {}).values()]
            scores = [_score(actor, dimension, dimensions) for actor in actors]
            known = [float(s) for s in scores if s is not None]
            unscored = sum(_unscored(run, key) for run in runs)
            row[column] = Mean(mean(known) if known else None, len(known), len(scores) - len(known) + unscored,
                               sd=stdev(known) if len(known) > 1 else None)
            if dimension == OVERALL:
                rated = dimensions[:-1]
                row[column].of = len(rated)
                row[column].partial = sum(1 for actor, score in zip(actors, scores) if score is not None
                                          and any(actor.get(d) is None for d in rated))
    return table


def _unscored(run: RunMetrics, key: str) -> int:
    """The run's cast members with no scores of this evaluation at all (the run failed before it was
    evaluated, or its evaluation call did): each an agent-episode whose every score is unknown."""
    scored = (run.evaluation.get(key) or {}).get("actors", {})
    return sum(1 for slug in run.actors if slug not in scored)


def _score(actor: dict[str, Any], dimension: str, dimensions: list[str]) -> float | None:
    """One agent's score on a dimension; its overall, the mean of its known scores."""
    if dimension != OVERALL:
        return actor.get(dimension)
    known = [actor[d] for d in dimensions if d != OVERALL and actor.get(d) is not None]
    return mean(known) if known else actor.get(OVERALL)


def means_text_rows(comparison: Comparison) -> list[tuple[str, list[list[str]], list[str]]]:
    """Per evaluation: its heading, the rows of its table (a header row first), and its notes (what the
    spread is; why the unknown scores are unknown, per column)."""
    out = []
    for key in keys_of(comparison.runs):
        rubric, _, evaluator = key.partition("@")
        title = RUBRICS[rubric].title if rubric in RUBRICS else rubric
        rows = [["dimension", *comparison.columns]]
        rows += [[dimension, *(cell.text() for cell in row.values())]
                 for dimension, row in overall_means(comparison, key).items()]
        notes = [SPREAD_NOTE, *(f"Unknown scores in {column}: "
                                f"{'; '.join(f'{n} {why}' for why, n in sorted(whys.items(), key=lambda i: -i[1]))}."
                                for column, whys in unknown_whys(comparison, key).items() if whys)]
        out.append((f"{title} by {evaluator}: mean over agents and episodes (as Sotopia's tables report it)", rows,
                    notes))
    return out


SPREAD_NOTE = ("Each cell: the mean ± the standard deviation of the known scores (n), and how many are unknown; "
               "--json adds the half-width of the mean's 95% t interval (ci95), the scores taken as independent, "
               "as Sotopia's margin of error takes them.")
NOT_EVALUATED = "in agent-episodes never scored (their run failed before its evaluation)"
_WHYS = (("the evaluator could not tell", "the evaluator could not tell (null)"),
         ("the answer could not be read", "the evaluator's answer could not be read at all"),
         ("missing", "missing from the answer"), ("no score", "reasoning without a score"),
         ("given", "given more than once"), ("its score is given", "given more than once"))


def _why(reason: str) -> str:
    """The kind of an unknown score's recorded reason (`promptdesk.core.engine.evaluation`), as the notes count it."""
    found = next((label for start, label in _WHYS if reason.startswith(start)), None)
    if found:
        return found
    if reason.startswith("the score "):
        return "out of range (kept apart, never clamped)" if " is outside " in reason else "not a whole number"
    return "another reason"


def unknown_whys(comparison: Comparison, key: str) -> dict[str, dict[str, int]]:
    """column -> why -> how many: the unknown scores of every agent of every run of the column, by why
    (as the record says it: `evaluation.json`'s `unknown`), and the agents never scored at all."""
    out: dict[str, dict[str, int]] = {}
    for column, runs in comparison.columns.items():
        whys: dict[str, int] = {}
        for run in runs:
            for reasons in (run.evaluation.get(key) or {}).get("unknown", {}).values():
                for reason in reasons.values():
                    why = _why(str(reason))
                    whys[why] = whys.get(why, 0) + 1
            group, rated = run.evaluation.get(key) or {}, len(dimensions_of(comparison.runs, key)) - 1
            for slug in (slug for slug in run.actors if slug not in group.get("actors", {})):
                reason = group.get("failed", {}).get(slug)
                why = f"in agent-episodes whose evaluation call failed ({reason[:100]})" if reason else NOT_EVALUATED
                whys[why] = whys.get(why, 0) + rated  # every dimension of the agent
        out[column] = whys
    return out


def means_json(comparison: Comparison) -> dict[str, Any]:
    """The overall means of every evaluation, for `compare --json`."""
    return {key: {dimension: {column: _cell_json(cell, dimension) for column, cell in row.items()}
                  for dimension, row in overall_means(comparison, key).items()} for key in keys_of(comparison.runs)}


def _cell_json(cell: Mean, dimension: str) -> dict[str, Any]:
    """One cell for `--json`: mean, n and unknown; the overall's also says how many are partial means, of how many."""
    out: dict[str, Any] = {"mean": None if cell.mean is None else round(cell.mean, 4), "n": cell.n, "unknown": cell.unknown,
                           "sd": None if cell.sd is None else round(cell.sd, 4),
                           "ci95": None if cell.ci95 is None else round(cell.ci95, 4)}
    return {**out, "partial": cell.partial, "of": cell.of} if dimension == OVERALL else out


def unknown_json(comparison: Comparison) -> dict[str, dict[str, dict[str, int]]]:
    """`rubric@evaluator` -> column -> why -> how many unknown scores (`unknown_whys`), for `compare --json`."""
    return {key: unknown_whys(comparison, key) for key in keys_of(comparison.runs)}

