"""How sure a difference between two conditions is, for one metric: the statistics of `compare`.

For a metric and a pair of conditions `a`, `b` (each a list of per-run values, one per seed):

- `diff` is b's mean minus a's mean;
- `ci_low`..`ci_high` is its 95% percentile bootstrap confidence interval (`scipy.stats.bootstrap`,
  each condition resampled on its own, `N_RESAMPLES` resamples);
- `p_value` is the two-sided permutation test of that difference (`scipy.stats.permutation_test`,
  runs shuffled between the two conditions: exact over every arrangement when there are at most
  `N_RESAMPLES` of them, as with 5 seeds against 5, otherwise `N_RESAMPLES` random arrangements);
- `p_adjusted` is `p_value` Holm-adjusted across that metric's pairs (`holm`), so that comparing
  many pairs does not make a chance difference look real; `significant` is `p_adjusted < ALPHA`;
- `seeds_needed` is a power note: seeds per condition for an 80% chance of finding a difference of
  the observed size significant at `ALPHA` (two-sided), by the two-sample normal approximation
  n = 2 (z₀.₉₇₅ + z₀.₈)² s² / diff², s the pooled standard deviation. It assumes roughly normal
  values with equal spread in both conditions and takes the observed difference as the true one,
  so it is a guide to when to run more seeds, not a promise. It is never below the fewest seeds
  with which the permutation test could reach `ALPHA` at all after the adjustment (`fewest_seeds`:
  4 for one pair, 5 for up to 6 pairs, 6 for up to 23).

Everything but `diff` is None when a side has fewer than two values. Every test starts from its own
generator seeded with `SEED`, so the same runs always give the same numbers. The resample counts are
modest (2,000) to stay fast; the third decimal of a p-value or a bound can move with them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from itertools import combinations
from statistics import mean, variance
from typing import Any

ALPHA = 0.05
"""The significance level, after Holm's adjustment."""

POWER = 0.8
"""The chance of detecting a true difference of the observed size that `seeds_needed` aims for."""

N_RESAMPLES = 2000
"""Bootstrap resamples, and the most permutations tried (fewer arrangements: all of them, exactly)."""

SEED = 19
"""The seed of every resampling generator (a fixed seed: reproducible numbers)."""


@dataclass
class Difference:
    """One metric, one pair of conditions: b minus a, how sure, and how many seeds would tell."""

    metric: str
    a: str
    b: str
    n_a: int
    n_b: int
    diff: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    significant: bool = False
    seeds_needed: int | None = None
    all_equal: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def tested(self) -> bool:
        """Both sides had at least two values, so there is an interval and a p-value."""
        return self.p_value is not None


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given: the k-th smallest of m p-values is multiplied
    by m - k + 1, then made no smaller than the adjusted value before it, and capped at 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [1.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def pooled_sd(a: list[float], b: list[float]) -> float:
    """The pooled standard deviation of two samples of at least two values each."""
    return math.sqrt(((len(a) - 1) * variance(a) + (len(b) - 1) * variance(b)) / (len(a) + len(b) - 2))


def fewest_seeds(pairs: int = 1, alpha: float = ALPHA) -> int:
    """The fewest seeds per condition with which the permutation test can reach `alpha` at all after
    Holm's adjustment over `pairs`: the smallest p of n runs against n is 2 / C(2n, n) (4 for one pair)."""
    n = 2
    while 2 * pairs / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


def seeds_for_power(diff: float, sd: float, pairs: int = 1, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Seeds per condition to detect `diff` with `power` at two-sided `alpha`: the normal approximation
    n = 2 (z + z')² sd² / diff², and never fewer than `fewest_seeds(pairs)`; None when there is no difference."""
    from scipy.stats import norm
    if diff == 0:
        return None
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return max(fewest_seeds(pairs, alpha), math.ceil(2 * (z * sd / diff) ** 2))


def _mean_difference(x: Any, y: Any, axis: int = -1) -> Any:
    """b's mean minus a's, along `axis` (vectorised for scipy's resampling)."""
    import numpy as np
    return np.mean(y, axis=axis) - np.mean(x, axis=axis)


def _sig(x: float) -> float:
    """A float rounded to 6 significant digits (what a reader or a JSON file needs)."""
    return float(f"{float(x):.6g}")


def difference(metric: str, a: str, a_values: list[float], b: str, b_values: list[float], pairs: int = 1) -> Difference:
    """b minus a with its interval, p-value (not yet adjusted) and power note (`pairs`: how many pairs
    the metric's p-values will be adjusted over)."""
    found = Difference(metric, a, b, len(a_values), len(b_values),
                       _sig(mean(b_values) - mean(a_values)) if a_values and b_values else None)
    if len(a_values) < 2 or len(b_values) < 2:
        return found
    found.seeds_needed = seeds_for_power(mean(b_values) - mean(a_values), pooled_sd(a_values, b_values), pairs)
    if len(set(a_values + b_values)) == 1:
        found.ci_low = found.ci_high = 0.0
        found.p_value, found.all_equal = 1.0, True
        return found
    import numpy as np
    from scipy.stats import bootstrap, permutation_test
    data = (np.asarray(a_values, dtype=float), np.asarray(b_values, dtype=float))
    interval = bootstrap(data, _mean_difference, n_resamples=N_RESAMPLES, method="percentile", vectorized=True,
                         random_state=np.random.default_rng(SEED)).confidence_interval
    test = permutation_test(data, _mean_difference, n_resamples=N_RESAMPLES, vectorized=True,
                            random_state=np.random.default_rng(SEED))
    found.ci_low, found.ci_high, found.p_value = _sig(interval.low), _sig(interval.high), _sig(test.pvalue)
    return found


def differences(metric: str, columns: dict[str, list[float]]) -> list[Difference]:
    """Every pair of columns (in column order) for one metric, Holm-adjusted across the tested pairs."""
    pairs = list(combinations(columns, 2))
    found = [difference(metric, a, columns[a], b, columns[b], len(pairs)) for a, b in pairs]
    tested = [d for d in found if d.tested]
    for d, adjusted in zip(tested, holm([d.p_value for d in tested])):
        d.p_adjusted = _sig(adjusted)
        d.significant = adjusted < ALPHA
    return found
