"""The factorial view of a sweep over two choices: the main effect of each and their interaction.

A sweep of isolation × coordinator is a two-factor experiment. Per metric:

- paired (the cells share seeds): a two-way repeated-measures ANOVA with the seed as subject
  (`statsmodels.stats.anova.AnovaRM`), on the seeds known in every cell (the others dropped and
  named). Its F tests assume roughly normal values and, for a factor of three or more levels,
  sphericity (equal variances of the differences between its levels); no correction is applied;
- unpaired: a two-way ANOVA of the runs with interaction (`statsmodels` OLS, `anova_lm`, type II sums
  of squares), needing a run in every cell.

Each term reports F, its degrees of freedom, p, and the partial eta squared F·df₁ / (F·df₁ + df₂), the
share of the variance left after the other terms that the term explains. The main effects' level
means are the means over the data used. The p-values of every term of every metric form one family,
adjusted together (`multiplicity`), apart from the pairwise table's.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from promptdesk.core.experiments.stats.design import Sample, Unit
from promptdesk.core.experiments.stats.multiplicity import adjust

FACTORS = ("isolation", "coordinator")
INTERACTION = "isolation × coordinator"
TERMS = {"isolation": "isolation", "coordinator": "coordinator", "isolation:coordinator": INTERACTION}
"""statsmodels' names of the terms, and ours."""


@dataclass
class Term:
    """One term of one metric's ANOVA."""

    term: str
    f: float | None
    df_num: float
    df_den: float
    p_value: float | None
    partial_eta_sq: float | None
    untested: str | None = None
    """Why this term has no F (no effect at all, or nothing to test it against)."""
    p_adjusted: float | None = None
    significant: bool = False


@dataclass
class Factorial:
    """One metric's factorial analysis, or why there is none (`untested`)."""

    metric: str
    design: str
    units: int = 0
    """Seeds used (paired) or runs (unpaired)."""
    dropped: list[Unit] = field(default_factory=list)
    means: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per factor, per level, the mean over the data used."""
    terms: list[Term] = field(default_factory=list)
    untested: str | None = None
    label: str = ""
    """The conditions' label when it is analysed per label (a benchmark's model), else ""."""

    @property
    def name(self) -> str:
        """The metric as a table names it: with its label (`tokens (openai:gpt-5-mini)`) when it has one."""
        return f"{self.metric} ({self.label})" if self.label else self.metric

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _sig(x: Any) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(f"{float(x):.6g}")


def _frame(rows: list[tuple[Any, str, str, float]]) -> Any:
    import pandas as pd
    return pd.DataFrame(rows, columns=["unit", "isolation", "coordinator", "y"])


def _terms(table: Any, f: str, df1: str, df2: str, p: str, flat: dict[str, str]) -> list[Term]:
    """Our terms from statsmodels' table; a term whose sums of squares are nothing but rounding
    (`flat`) has no F, and says why."""
    out = []
    for name, ours in TERMS.items():
        row = table.loc[name]
        value, num, den = float(row[f]), float(row[df1]), float(row[df2])
        if ours in flat:
            out.append(Term(ours, None, num, den, None, None, flat[ours]))
            continue
        eta = value * num / (value * num + den) if math.isfinite(value) else None
        out.append(Term(ours, _sig(value), num, den, _sig(row[p]), _sig(eta)))
    return out


NO_EFFECT = "no difference at all: the same in every cell"
NO_NOISE = "no spread to test against: the same in every seed"


def _flat_terms(rows: list[tuple[Any, str, str, float]]) -> dict[str, str]:
    """The terms a repeated-measures ANOVA cannot test on these data, each with the reason: a term
    whose own sum of squares is zero (beyond rounding) has no effect (F = 0 would be rounding noise),
    and a term whose error (its interaction with the seed) is zero has nothing to divide by. Only
    the structure is computed here, to tell exact zeros from rounding; the F tests are statsmodels'."""
    import numpy as np
    units = sorted({u for u, *_ in rows})
    isolations = list(dict.fromkeys(i for _, i, _, _ in rows))
    coordinators = list(dict.fromkeys(c for _, _, c, _ in rows))
    y = np.zeros((len(units), len(isolations), len(coordinators)))
    for u, i, c, v in rows:
        y[units.index(u), isolations.index(i), coordinators.index(c)] = v
    y = y - y.mean(axis=(1, 2), keepdims=True)  # each seed's own level set aside
    scores = {"isolation": y.mean(axis=2), "coordinator": y.mean(axis=1),
              INTERACTION: (y - y.mean(axis=2, keepdims=True) - y.mean(axis=1, keepdims=True)).reshape(len(units), -1)}
    tolerance = 1e-9 * (float(np.square(y).sum()) + 1e-300)
    flat: dict[str, str] = {}
    for term, score in scores.items():
        effect = float(np.square(score.mean(axis=0)).sum())
        error = float(np.square(score - score.mean(axis=0)).sum())
        if effect <= tolerance:
            flat[term] = NO_EFFECT
        elif error <= tolerance:
            flat[term] = NO_NOISE
    return flat


def _levels(cells: dict[tuple[str, str], Sample]) -> tuple[list[str], list[str]]:
    isolations = list(dict.fromkeys(i for i, _ in cells))
    coordinators = list(dict.fromkeys(c for _, c in cells))
    return isolations, coordinators


def _means(rows: list[tuple[Any, str, str, float]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, list[float]]] = {"isolation": {}, "coordinator": {}}
    for _, isolation, coordinator, y in rows:
        out["isolation"].setdefault(isolation, []).append(y)
        out["coordinator"].setdefault(coordinator, []).append(y)
    return {k: {level: _sig(sum(v) / len(v)) for level, v in levels.items()} for k, levels in out.items()}


def repeated(metric: str, cells: dict[tuple[str, str], Sample]) -> Factorial:
    """The repeated-measures analysis of one metric (seeds as subjects)."""
    found = Factorial(metric, "repeated measures by seed")
    values = {cell: {u: v for u, v in sample if v is not None} for cell, sample in cells.items()}
    units = list(dict.fromkeys(u for sample in cells.values() for u, _ in sample))
    complete = [u for u in units if all(u in known for known in values.values())]
    found.dropped = [u for u in units if u not in complete]
    found.units = len(complete)
    rows = [(complete.index(u), i, c, values[(i, c)][u]) for u in complete for (i, c) in cells]
    if len(complete) < 2:
        found.untested = "fewer than 2 seeds known in every cell"
        return found
    if _constant(found, rows):
        return found
    from statsmodels.stats.anova import AnovaRM
    with _quiet():
        table = AnovaRM(_frame(rows), "y", "unit", within=list(FACTORS)).fit().anova_table
    flat = _flat_terms(rows)
    if all(flat.get(term) == NO_EFFECT for term in TERMS.values()):
        found.untested = "no difference between the cells within any seed"
        return found
    found.terms = _terms(table, "F Value", "Num DF", "Den DF", "Pr > F", flat)
    return found


def between(metric: str, cells: dict[tuple[str, str], Sample]) -> Factorial:
    """The two-way ANOVA of one metric's runs (no pairing)."""
    found = Factorial(metric, "between runs")
    rows = [(n, i, c, v) for (i, c), sample in cells.items() for n, (_, v) in enumerate(sample) if v is not None]
    found.units = len(rows)
    if any(not any(v is not None for _, v in sample) for sample in cells.values()):
        found.untested = "a cell has no known value"
        return found
    if len(rows) <= len(cells):
        found.untested = "no run to spare for the error term (one run per cell)"
        return found
    if _constant(found, rows):
        return found
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm
    with _quiet():
        model = ols("y ~ C(isolation) * C(coordinator)", data=_frame(rows)).fit()
        table = anova_lm(model, typ=2)
    residual = float(table.loc["Residual", "df"])
    table = table.rename(index={"C(isolation)": "isolation", "C(coordinator)": "coordinator",
                                "C(isolation):C(coordinator)": "isolation:coordinator"})
    table["den"] = residual
    scale = 1e-9 * float(table["sum_sq"].sum())
    flat = {TERMS[name]: NO_EFFECT for name in TERMS if float(table.loc[name, "sum_sq"]) <= scale}
    if float(table.loc["Residual", "sum_sq"]) <= scale:
        flat = {term: flat.get(term, "no spread within the cells to test against") for term in TERMS.values()}
    found.terms = _terms(table, "F", "df", "den", "PR(>F)", flat)
    return found


@contextmanager
def _quiet() -> Iterator[None]:
    """statsmodels and numpy without their warnings (a degenerate design is reported, not warned about)."""
    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _constant(found: Factorial, rows: list[tuple]) -> bool:
    """Record the cell means; True (and why, in `untested`) when every run had the same value."""
    found.means = _means(rows)
    if len({y for *_, y in rows}) == 1:
        found.untested = "every run had the same value"
        return True
    return False


def factorial(metric: str, cells: dict[tuple[str, str], Sample], paired: bool) -> Factorial:
    """One metric's factorial analysis, `cells` keyed by (isolation, coordinator)."""
    return repeated(metric, cells) if paired else between(metric, cells)


def in_units(text: str, unit: str) -> str:
    """Why a repeated-measures analysis was not run, said of its subject (`scene and seed` in a benchmark)."""
    return text.replace("2 seeds", f"2 {unit.replace('scene', 'scenes')}s").replace("any seed", f"any {unit}")


def is_factorial(cells: dict[tuple[str, str], Sample]) -> bool:
    """Two levels or more of each factor, and every combination present."""
    isolations, coordinators = _levels(cells)
    return len(isolations) > 1 and len(coordinators) > 1 and len(cells) == len(isolations) * len(coordinators)


def adjust_all(found: list[Factorial], method: str, alpha: float) -> int:
    """Adjust every tested term of every metric together; returns the family's size."""
    terms = [t for f in found for t in f.terms if t.p_value is not None]
    for term, adjusted in zip(terms, adjust([t.p_value for t in terms], method)):
        term.p_adjusted = _sig(adjusted)
        term.significant = adjusted <= alpha
    return len(terms)
