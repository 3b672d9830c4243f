"""Permutation tests of a difference, and the interval of shifts each test does not reject.

Two designs, one idea. If the condition made no difference, its labels could be dealt again without
changing how likely the data are:

- *paired* (`paired_test`): each unit (a seed) gives one difference d = b − a; swapping the labels
  within a unit flips the sign of its difference. The statistic is the mean difference, and the 2^n
  sign flips are its null distribution: every one of them while n ≤ `EXACT_PAIRS`, else
  `RANDOM_ARRANGEMENTS` random flips (seeded with `SEED`) and the observed one.
- *independent* (`independent_test`): the runs of both conditions are pooled and dealt again into
  groups of the same sizes; the statistic is b's mean minus a's: every one of the C(n_a + n_b, n_b)
  deals while there are at most `EXACT_ARRANGEMENTS`, else random deals and the observed one.

The two-sided p-value is the share of arrangements whose statistic is at least as far from 0 as the
observed one, either way (with random arrangements the observed one counts among them: (k + 1) /
(R + 1), as `scipy.stats.permutation_test` counts).

The interval is the same test turned around (the construction Hodges and Lehmann gave for rank
tests): the shifts δ for which the test of "b − δ against a" does not reject at `alpha`. Each
arrangement's statistic is a line in δ; it is at least as extreme as the observed one up to one
shift on each side of the estimate, and the interval's ends are order statistics of those shifts
(`_invert`). So 0 lies inside the interval exactly when p > alpha: interval and test cannot disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

EXACT_PAIRS = 20
"""Pairs up to which the sign-flip test enumerates every arrangement (2^20 = 1,048,576)."""

EXACT_ARRANGEMENTS = 200_000
"""Deals up to which the two-sample test enumerates every arrangement (10 runs against 10: 184,756)."""

RANDOM_ARRANGEMENTS = 20_000
"""Random arrangements drawn when there are more than that to enumerate."""

SEED = 19
"""The seed of the random arrangements (the same data always give the same numbers)."""


@dataclass(frozen=True)
class ShiftTest:
    """A permutation test's estimate, its interval (±inf when no shift can be rejected at all), the
    two-sided p-value, and how many arrangements it counted (all of them when `exact`)."""

    estimate: float
    low: float
    high: float
    p_value: float
    arrangements: int
    exact: bool
    low_included: bool = True
    high_included: bool = True
    """Whether each end is itself in the interval (always for the permutation tests; the signed-rank
    interval's ends are Walsh averages, where the test can reject)."""

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def contains(self, shift: float) -> bool:
        """Whether the interval holds `shift` (so the test does not reject it)."""
        above = self.low <= shift if self.low_included else self.low < shift
        below = shift <= self.high if self.high_included else shift < self.high
        return above and below


def _invert(null: Any, slope: Any, observed: float, alpha: float, scale: float, exact: bool) -> ShiftTest:
    """The test and its interval from every arrangement's statistic at shift 0 (`null`) and its slope
    in the shift (`slope`; 1 for the observed arrangement, -1 for its mirror image).

    For a shift δ past the estimate, an arrangement stays at least as extreme as the observed one up
    to the larger of the two shifts where |null − δ·slope| meets |observed − δ| (the smaller, below
    the estimate); the observed arrangement and its mirror always do. p(δ) is the share that still
    do, so the interval's ends are the M-th largest and M-th smallest of those shifts, M =
    floor(alpha · N) + 1, and p(0) is read from the same shifts (values within 1e-9 of the data's
    scale from 0 are taken as 0, so ties are counted as ties)."""
    import numpy as np
    with np.errstate(divide="ignore", invalid="ignore"):
        meet = (null + observed) / (1 + slope)
        cross = (observed - null) / (1 - slope)
    always = np.abs(slope) >= 1 - 1e-12
    upper = np.where(always, np.inf, np.maximum(meet, cross))
    lower = np.where(always, -np.inf, np.minimum(meet, cross))
    tolerance = 1e-9 * scale
    upper[np.abs(upper) <= tolerance] = 0.0
    lower[np.abs(lower) <= tolerance] = 0.0
    if abs(observed) <= tolerance:
        observed = 0.0
    count = len(null)
    keep = min(count, math.floor(alpha * count) + 1)
    high = float(np.partition(upper, count - keep)[count - keep])
    low = float(np.partition(lower, keep - 1)[keep - 1])
    extreme = np.count_nonzero(upper >= 0) if observed <= 0 else np.count_nonzero(lower <= 0)
    return ShiftTest(float(observed), low, high, extreme / count, count, exact)


def paired_test(differences: list[float], alpha: float = 0.05) -> ShiftTest:
    """The sign-flip test of the mean of paired differences (b − a per unit), and its interval."""
    import numpy as np
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n <= EXACT_PAIRS:
        sums, sizes = np.zeros(1), np.zeros(1)
        for x in d:  # every subset of the units kept positive, by doubling: 2^n sums in n steps
            sums, sizes = np.concatenate([sums, sums + x]), np.concatenate([sizes, sizes + 1])
        exact = True
    else:
        kept = np.random.default_rng(SEED).integers(0, 2, size=(RANDOM_ARRANGEMENTS, n)).astype(float)
        sums, sizes = np.append(kept @ d, d.sum()), np.append(kept.sum(axis=1), n)
        exact = False
    total = float(d.sum())
    return _invert((2 * sums - total) / n, (2 * sizes - n) / n, total / n, alpha,
                   float(np.abs(d).max(initial=0.0)), exact)


@lru_cache(maxsize=8)
def _deals(pooled: int, group: int) -> Any:
    """Every way to choose `group` of `pooled` positions, one row each (cached: a table of many
    metrics deals the same sizes again and again)."""
    import numpy as np
    from itertools import chain, combinations
    count = math.comb(pooled, group)
    flat = np.fromiter(chain.from_iterable(combinations(range(pooled), group)), dtype=np.int16, count=count * group)
    return flat.reshape(count, group)


def independent_test(a: list[float], b: list[float], alpha: float = 0.05) -> ShiftTest:
    """The two-sample permutation test of b's mean minus a's, and its interval."""
    import numpy as np
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n_a, n_b = len(x), len(y)
    pooled = np.concatenate([x, y])
    exact = math.comb(n_a + n_b, n_b) <= EXACT_ARRANGEMENTS
    if exact:
        chosen = _deals(n_a + n_b, n_b)
    else:
        shuffled = np.argsort(np.random.default_rng(SEED).random((RANDOM_ARRANGEMENTS, n_a + n_b)), axis=1)
        chosen = np.vstack([shuffled[:, :n_b], np.arange(n_a, n_a + n_b)])
    sums = pooled[chosen].sum(axis=1)
    from_b = (chosen >= n_a).sum(axis=1)
    null = sums / n_b - (pooled.sum() - sums) / n_a
    slope = from_b / n_b - (n_b - from_b) / n_a
    return _invert(null, slope, float(y.mean() - x.mean()), alpha, float(np.abs(pooled).max(initial=0.0)), exact)


def fewest_pairs(alpha: float) -> int:
    """The fewest pairs with which the sign-flip test can give p ≤ alpha at all (2 / 2^n ≤ alpha)."""
    n = 1
    while 2 / 2 ** n > alpha:
        n += 1
    return n


def fewest_per_group(alpha: float) -> int:
    """The fewest runs per condition with which the two-sample test can give p ≤ alpha at all
    (2 / C(2n, n) ≤ alpha, n runs against n)."""
    n = 1
    while 2 / math.comb(2 * n, n) > alpha:
        n += 1
    return n
