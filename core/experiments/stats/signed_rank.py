"""Wilcoxon's signed-rank test of paired differences, the other paired test.

The statistic is the sum of the signed ranks of the differences (ranks of |d|, tied ones sharing
their mean rank, `scipy.stats.rankdata`; zero differences dropped, as Wilcoxon did and as
`scipy.stats.wilcoxon` does by default), and its null distribution is the same sign flips as the
paired permutation test's (`promptdesk.core.experiments.stats.shift.paired_test`): exact to 20 pairs, ties
included, where it gives scipy's exact (or, with ties, permutation) p-value. The estimate is the
Hodges–Lehmann shift, the median of the Walsh averages (d_i + d_j) / 2, i ≤ j, and the interval is
the test turned around as for the permutation tests: the shifts δ whose test of d − δ gives p > alpha.
The test's p changes only where δ crosses a Walsh average, so the interval's ends are Walsh averages,
found by bisection outwards from the estimate; an end is in the interval when the test at that very
shift does not reject it (there a difference is zero or tied, and the test may). Between two Walsh
averages p is constant, so the interval's verdict on 0 and the test's agree wherever p falls
steadily away from the estimate.
"""

from __future__ import annotations

from collections.abc import Callable

from promptdesk.core.experiments.stats.shift import EXACT_PAIRS, ShiftTest, paired_test


def _p(differences: list[float], shift: float) -> float:
    """The two-sided p-value of the signed-rank test of the differences minus `shift`."""
    import numpy as np
    from scipy.stats import rankdata
    d = np.asarray(differences, dtype=float) - shift
    d = d[d != 0]
    if not len(d):
        return 1.0
    return paired_test(list(np.sign(d) * rankdata(np.abs(d)))).p_value


def _reach(ends: list[float], start: float, accepted: Callable[[float], bool]) -> float:
    """How far from `start` the test still accepts, walking past the Walsh averages `ends` (in order
    away from `start`): the end of the last accepted stretch between two of them (by bisection), or
    ±inf when even the stretch past the last one is accepted."""
    if not ends:
        return start
    beyond = ends[-1] + (ends[-1] - start or 1.0)
    if accepted(beyond):
        return float("inf") if ends[-1] > start else float("-inf")
    middles = [(a + b) / 2 for a, b in zip([start, *ends[:-1]], ends)]
    if not accepted(middles[0]):
        return start
    low, high = 0, len(middles)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepted(middles[middle]) else (low, middle)
    return ends[low]


def signed_rank_test(differences: list[float], alpha: float = 0.05) -> ShiftTest:
    """The signed-rank test of paired differences, the Hodges–Lehmann estimate and its interval."""
    import numpy as np
    d = np.asarray(differences, dtype=float)
    i, j = np.triu_indices(len(d))
    averages = (d[i] + d[j]) / 2
    estimate = float(np.median(averages))
    walsh = np.unique(averages)

    def accepted(shift: float) -> bool:
        return _p(list(d), shift) > alpha
    high = _reach([float(w) for w in walsh if w > estimate], estimate, accepted)
    low = _reach([float(w) for w in walsh[::-1] if w < estimate], estimate, accepted)
    return ShiftTest(estimate, low, high, _p(list(d), 0.0), 0, len(d) <= EXACT_PAIRS,
                     low_included=bool(np.isfinite(low)) and accepted(low),
                     high_included=bool(np.isfinite(high)) and accepted(high))
