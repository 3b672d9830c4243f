"""Standardized effect sizes with their intervals, and the seeds a design needs for a given power.

- *d_z* (paired): the mean of the per-unit differences over their standard deviation (n − 1).
- *Hedges' g* (independent): b's mean minus a's over the pooled standard deviation, times the small-
  sample correction J = Γ(ν/2) / (√(ν/2) Γ((ν−1)/2)), ν = n_a + n_b − 2.

Both intervals invert the noncentral t distribution (`scipy.stats.nct`): t = d_z √n (ν = n − 1), or
t = d / √(1/n_a + 1/n_b); the interval's ends are the noncentrality parameters λ for which the observed
t is the 97.5th and the 2.5th percentile, scaled back (and, for g, times J). They assume roughly
normal values; with no spread at all (every difference equal) a standardized effect is undefined.
Where scipy's noncentral t gives no number (a huge t, far in its tail), the interval is the normal
approximation with Hedges and Olkin's standard error.

*Seeds for power*: the fewest units (pairs, or runs per condition) with which the t-test of the
design (paired, or two-sample) has `power` to find an effect of the observed standardized size at
`alpha`, taking the observed size as the true one; never fewer than the exact permutation test needs
to reach `alpha` at all (`shift.fewest_pairs`, `shift.fewest_per_group`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import mean, stdev

from promptdesk.core.experiments.stats.shift import fewest_pairs, fewest_per_group

MOST_SEEDS = 100_000
"""The largest answer the power note gives (beyond it: "more than 100,000")."""


@dataclass(frozen=True)
class Effect:
    """A standardized effect (`name`: d_z or g), with its interval."""

    name: str
    value: float
    low: float
    high: float


def _noncentrality(t: float, df: float, alpha: float) -> tuple[float, float] | None:
    """The λ for which `t` is the (1 − alpha/2) and the (alpha/2) quantile of nct(df, λ); None where
    scipy's noncentral t gives no number (far in its tail: a huge t)."""
    from scipy.optimize import brentq
    from scipy.special import nctdtr  # the noncentral t's distribution function, as `scipy.stats.nct.cdf` calls it

    def cdf(lam: float) -> float:
        return float(nctdtr(df, lam, t))

    def bound(target: float) -> float:
        step = 2.0 + abs(t)
        low, high = t - step, t + step
        while cdf(low) < target:
            low -= step
        while cdf(high) > target:
            high += step
        return float(brentq(lambda lam: cdf(lam) - target, low, high, xtol=1e-10))
    try:
        found = bound(1 - alpha / 2), bound(alpha / 2)
    except (ValueError, RuntimeError):
        return None
    return found if all(math.isfinite(x) for x in found) else None


def _normal(value: float, se: float, alpha: float) -> tuple[float, float]:
    """The normal-approximation interval value ± z · se (Hedges & Olkin's standard errors)."""
    from scipy.stats import norm
    z = float(norm.ppf(1 - alpha / 2))
    return value - z * se, value + z * se


def paired_effect(differences: list[float], alpha: float = 0.05) -> Effect | None:
    """d_z of paired differences with its interval; None with fewer than 2 or no spread."""
    if len(differences) < 2 or stdev(differences) == 0:
        return None
    n = len(differences)
    dz = mean(differences) / stdev(differences)
    found = _noncentrality(dz * math.sqrt(n), n - 1, alpha)
    if found is None:
        return Effect("d_z", dz, *_normal(dz, math.sqrt(1 / n + dz ** 2 / (2 * n)), alpha))
    return Effect("d_z", dz, found[0] / math.sqrt(n), found[1] / math.sqrt(n))


def correction(df: float) -> float:
    """Hedges' small-sample correction J for `df` degrees of freedom (exact, by the gamma function)."""
    return math.exp(math.lgamma(df / 2) - math.lgamma((df - 1) / 2)) / math.sqrt(df / 2)


def independent_effect(a: list[float], b: list[float], alpha: float = 0.05) -> Effect | None:
    """Hedges' g of b against a with its interval; None with fewer than 2 a side or no spread."""
    if len(a) < 2 or len(b) < 2:
        return None
    df = len(a) + len(b) - 2
    pooled = math.sqrt(((len(a) - 1) * stdev(a) ** 2 + (len(b) - 1) * stdev(b) ** 2) / df)
    if pooled == 0:
        return None
    d = (mean(b) - mean(a)) / pooled
    scale = math.sqrt(1 / len(a) + 1 / len(b))
    j = correction(df)
    found = _noncentrality(d / scale, df, alpha)
    if found is None:
        low, high = _normal(d, math.sqrt(scale ** 2 + d ** 2 / (2 * (len(a) + len(b)))), alpha)
        return Effect("g", j * d, j * low, j * high)
    return Effect("g", j * d, j * found[0] * scale, j * found[1] * scale)


def _power(effect: float, n: object, alpha: float, paired: bool) -> object:
    """The two-sided t-test's power at `alpha` for `n` units (an array), by the noncentral t: the share
    past the upper critical value plus the share below the lower one. Each tail on its own falls back
    to the normal distribution where scipy's noncentral t gives no number for it (far in its tail,
    which at the small levels of an adjusted table is often the negligible lower one: the whole power's
    normal approximation there would overstate it)."""
    import numpy as np
    from scipy.special import nctdtr, stdtrit  # the noncentral t's and Student's t's functions, as scipy.stats calls them
    from scipy.stats import norm
    n = np.asarray(n, dtype=float)
    df = n - 1 if paired else 2 * n - 2
    lam = effect * (np.sqrt(n) if paired else np.sqrt(n / 2))
    critical = stdtrit(df, 1 - alpha / 2)
    with np.errstate(all="ignore"):
        upper = 1 - nctdtr(df, lam, critical)
        lower = nctdtr(df, lam, -critical)
    upper = np.where(np.isnan(upper), norm.sf(critical - lam), upper)
    lower = np.where(np.isnan(lower), norm.cdf(-critical - lam), lower)
    return upper + lower


def seeds_for_power(effect: float | None, alpha: float, paired: bool, power: float = 0.8) -> int | None:
    """Units (pairs, or runs per condition) for `power` at `alpha`; None when there is no effect to
    find; `MOST_SEEDS + 1` when more than `MOST_SEEDS` would be needed."""
    import numpy as np
    from scipy.stats import norm
    if effect is None or effect == 0 or not math.isfinite(effect):
        return None
    floor = fewest_pairs(alpha) if paired else fewest_per_group(alpha)
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    guess = (z / abs(effect)) ** 2 * (1 if paired else 2)
    if guess > MOST_SEEDS:
        return MOST_SEEDS + 1
    start = max(2, floor, int(guess) - 3)
    candidates = np.arange(start, start + 64)
    while True:
        enough = np.nonzero(_power(abs(effect), candidates, alpha, paired) >= power)[0]
        if len(enough):
            return int(candidates[enough[0]])
        if candidates[-1] > MOST_SEEDS:
            return MOST_SEEDS + 1
        candidates = candidates + 64
