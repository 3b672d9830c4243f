"""One row per metric and pair of conditions: the difference, its interval, its test, its effect size
and its power note, adjusted across the whole table.

`differences(samples, options)` takes, per metric, per condition, a `design.Sample` (values keyed by
unit) and decides the design once for the table: *paired* when the conditions share units (unless
`options.unpaired`), else *unpaired*. Then, per metric and pair of conditions `a`, `b`:

- paired: the pairs both conditions know (`design.pair`; the others dropped and named); `diff` is
  the mean of the differences b − a; the test is the exact sign-flip permutation test of that mean
  (`shift.paired_test`) or, with `options.test == "wilcoxon"`, the signed-rank test
  (`signed_rank.signed_rank_test`: then `diff` is its Hodges–Lehmann shift); the effect size d_z;
- unpaired: every known value of each; `diff` is b's mean minus a's; the two-sample permutation test
  (`shift.independent_test`); the effect size Hedges' g.

The interval is the test turned around (the shifts it does not reject at `alpha`), so the interval
excludes 0 exactly when p ≤ alpha. Fewer than 2 pairs (or 2 known values a side) leave the row
untested, with its reason, and never a p-value. The family is every row that could reject (a row
where every difference is 0 has p = 1 whatever the seeds, and is not counted); its p-values are
adjusted together (`multiplicity`), and `significant` is the adjusted p ≤ alpha. The power note is
computed at alpha / m, the level the adjustment asks of the first of m tests (exact for Bonferroni,
a safe bound for Holm and for Benjamini–Hochberg).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from itertools import combinations
from statistics import mean
from typing import Any

from promptdesk.core.experiments.stats import effects
from promptdesk.core.experiments.stats.design import Sample, known, pair, shares_units
from promptdesk.core.experiments.stats.multiplicity import adjust
from promptdesk.core.experiments.stats.shift import (EXACT_ARRANGEMENTS, EXACT_PAIRS, RANDOM_ARRANGEMENTS, SEED, ShiftTest,
                                                     fewest_pairs, fewest_per_group, independent_test, paired_test)

ALPHA = 0.05
POWER = 0.8
PAIRED_TESTS = ("sign-flip", "wilcoxon")
TOO_FEW_PAIRS = "too few pairs"
NO_COMMON = "no {unit} in common"
"""The reason of a paired row whose two conditions share no unit at all (not one run failed: nothing pairs)."""
TOO_FEW_VALUES = "fewer than 2 known values on a side"


@dataclass(frozen=True)
class Options:
    """How to analyse: force the unpaired analysis, which paired test, which adjustment, alpha, power,
    and what the units that pair are called (for the reasons a row gives)."""

    unpaired: bool = False
    test: str = "sign-flip"
    adjust: str = "holm"
    alpha: float = ALPHA
    power: float = POWER
    unit: str = "seed"


def _sig(x: float | None) -> float | None:
    """A float rounded to 6 significant digits (what a reader or a JSON file needs); None stays None."""
    return None if x is None else float(f"{float(x):.6g}")


@dataclass
class Difference:
    """One metric, one pair of conditions."""

    metric: str
    a: str
    b: str
    design: str
    """`paired` or `unpaired`."""
    n_a: int
    n_b: int
    """Known values on each side."""
    pairs: int | None = None
    """Pairs used (a paired design)."""
    dropped: list[Any] = field(default_factory=list)
    """Units left out of the pairs: missing on one side, or unknown on either."""
    diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_unbounded: bool = False
    """No shift can be rejected with so few units: the interval is the whole line."""
    ci_excludes_zero: bool | None = None
    """The interval's verdict on "no difference" (equal to p ≤ alpha: the interval is the test turned around;
    it also settles an end that lies exactly on 0, which the signed-rank interval may leave out)."""
    effect: float | None = None
    effect_low: float | None = None
    effect_high: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    significant: bool = False
    seeds_needed: int | None = None
    all_equal: bool = False
    untested: str | None = None
    """Why there is no test (too few pairs, too few values), None when there is one."""
    exact: bool | None = None
    arrangements: int | None = None
    test: str = ""
    """Which test: `sign-flip` or `wilcoxon` (paired), `permutation` (unpaired); the interval is that
    test turned around."""
    adjustment: str = ""
    """How `p_adjusted` was adjusted across the table: `holm` or `bh`."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def tested(self) -> bool:
        """There is a p-value (enough pairs, or values a side)."""
        return self.p_value is not None

    @property
    def n_text(self) -> str:
        """n as a cell: the pairs of a paired row, each side's known values of an unpaired one."""
        return str(self.pairs) if self.design == "paired" else f"{self.n_a}/{self.n_b}"


@dataclass
class Table:
    """Every row, the design, how it was analysed, and how many tests the adjustment covered."""

    rows: list[Difference]
    paired: bool
    options: Options
    family: int

    @property
    def effect_name(self) -> str:
        return "d_z" if self.paired else "g"


def _test(found: Difference, test: ShiftTest) -> None:
    found.diff = _sig(test.estimate)
    if test.bounded:
        found.ci_low, found.ci_high = _sig(test.low), _sig(test.high)
    else:
        found.ci_unbounded = True
    found.ci_excludes_zero = not test.contains(0.0)
    found.p_value, found.exact = _sig(test.p_value), test.exact
    found.arrangements = test.arrangements or None


def _effect(found: Difference, effect: effects.Effect | None) -> None:
    if effect is not None:
        found.effect, found.effect_low, found.effect_high = _sig(effect.value), _sig(effect.low), _sig(effect.high)


def paired_row(metric: str, a: str, b: str, left: Sample, right: Sample, options: Options) -> Difference:
    """One row of a paired design."""
    pairs = pair(left, right)
    found = Difference(metric, a, b, "paired", len(known(left)), len(known(right)), len(pairs.units), pairs.dropped)
    d = pairs.differences
    found.diff = _sig(mean(d)) if d else None
    if len(d) < 2:
        shared = {u for u, _ in left} & {u for u, _ in right}
        found.untested = NO_COMMON.format(unit=options.unit) if left and right and not shared else TOO_FEW_PAIRS
        return found
    if not any(d):
        found.ci_low = found.ci_high = 0.0
        found.p_value, found.all_equal, found.ci_excludes_zero = 1.0, True, False
        return found
    if options.test == "wilcoxon":
        from promptdesk.core.experiments.stats.signed_rank import signed_rank_test
        _test(found, signed_rank_test(d, options.alpha))
    else:
        _test(found, paired_test(d, options.alpha))
    _effect(found, effects.paired_effect(d, options.alpha))
    return found


def unpaired_row(metric: str, a: str, b: str, left: Sample, right: Sample, options: Options) -> Difference:
    """One row of an unpaired design."""
    x, y = known(left), known(right)
    found = Difference(metric, a, b, "unpaired", len(x), len(y))
    found.diff = _sig(mean(y) - mean(x)) if x and y else None
    if len(x) < 2 or len(y) < 2:
        found.untested = TOO_FEW_VALUES
        return found
    if len(set(x + y)) == 1:
        found.ci_low = found.ci_high = 0.0
        found.p_value, found.all_equal, found.ci_excludes_zero = 1.0, True, False
        return found
    _test(found, independent_test(x, y, options.alpha))
    _effect(found, effects.independent_effect(x, y, options.alpha))
    return found


def _power_note(found: Difference, level: float, options: Options) -> int | None:
    """Seeds for the row's effect at `level` (see the module docstring); the exact test's floor when
    every difference was the same nonzero amount (an effect too large to standardize)."""
    paired = found.design == "paired"
    if found.effect is None:
        if found.diff:
            return fewest_pairs(level) if paired else fewest_per_group(level)
        return None
    return effects.seeds_for_power(found.effect, level, paired, options.power)


def differences(samples: dict[str, dict[str, Sample]], options: Options = Options()) -> Table:
    """Every pair of conditions (in column order) for every metric, adjusted across the table."""
    paired = not options.unpaired and any(shares_units(columns) for columns in samples.values())
    make = paired_row if paired else unpaired_row
    rows = [make(metric, a, b, columns[a], columns[b], options)
            for metric, columns in samples.items() for a, b in combinations(columns, 2)]
    for d in rows:
        d.test = (options.test if paired else "permutation") if d.tested else ""
        d.adjustment = options.adjust
    family = [d for d in rows if d.tested and not d.all_equal]
    for d, adjusted in zip(family, adjust([d.p_value for d in family], options.adjust)):
        d.p_adjusted = _sig(adjusted)
        d.significant = adjusted <= options.alpha
    for d in rows:
        if d.all_equal:
            d.p_adjusted = 1.0
        elif d.tested:
            d.seeds_needed = _power_note(d, options.alpha / max(len(family), 1), options)
    return Table(rows, paired, options, len(family))


def method(table: Table) -> dict[str, Any]:
    """How the table was made, in words and numbers (`compare --json`'s `statistics`)."""
    options = table.options
    if table.paired and options.test == "wilcoxon":
        test = ("two-sided Wilcoxon signed-rank test of the paired differences (zero differences dropped), "
                f"exact over every sign flip up to {EXACT_PAIRS} pairs")
        interval = "the shifts the signed-rank test does not reject (Hodges–Lehmann); diff is the Hodges–Lehmann shift"
    elif table.paired:
        test = ("two-sided sign-flip permutation test of the mean paired difference, exact over all 2^n flips up to "
                f"{EXACT_PAIRS} pairs, else {RANDOM_ARRANGEMENTS:,} random flips")
        interval = "the shifts the sign-flip test does not reject (test inversion)"
    else:
        test = ("two-sided permutation test of the difference of means, exact over every deal of the runs up to "
                f"{EXACT_ARRANGEMENTS:,} deals, else {RANDOM_ARRANGEMENTS:,} random deals")
        interval = "the shifts the permutation test does not reject (test inversion)"
    from promptdesk.core.experiments.stats.multiplicity import ADJUSTMENTS, WHAT
    return {"design": "paired" if table.paired else "unpaired", "test": test,
            "ci": f"{1 - options.alpha:.0%} interval: {interval}; it excludes 0 exactly when p <= {options.alpha}",
            "effect": ("d_z: mean difference / sd of the differences" if table.paired else
                       "Hedges' g: difference of means / pooled sd, small-sample corrected")
                      + f", {1 - options.alpha:.0%} noncentral-t interval",
            "p_adjusted": f"{ADJUSTMENTS[options.adjust]} ({WHAT[options.adjust]}) across the {table.family} tests "
                          "of this comparison that could reject",
            "adjustment": options.adjust, "alpha": options.alpha, "power": options.power, "family": table.family,
            "power_level": _sig(options.alpha / max(table.family, 1)), "seed": SEED,
            "seeds_needed": f"{'pairs' if table.paired else 'runs per condition'} for {options.power:.0%} power of the "
                            f"{'paired' if table.paired else 'two-sample'} t-test at alpha / {max(table.family, 1)}, "
                            "taking the observed effect as the true one",
            "diff": "b minus a" + ((" (the Hodges–Lehmann shift: the median of the Walsh averages of the per-seed "
                                    "differences over the pairs)" if options.test == "wilcoxon" else
                                    " (mean of the per-seed differences over the pairs)") if table.paired else "")}


def smallest_p(table: Table) -> float | None:
    """The smallest p-value any row's exact test could give, with the most units of any tested row
    (for the note that says when nothing can reach alpha after the adjustment)."""
    tested = [d for d in table.rows if d.tested and not d.all_equal]
    if not tested:
        return None
    if table.paired:
        most = max(d.pairs or 0 for d in tested)
        return 1 / (RANDOM_ARRANGEMENTS + 1) if most > EXACT_PAIRS else 2 / 2 ** most
    return min((2 if d.n_a == d.n_b else 1) / math.comb(d.n_a + d.n_b, d.n_b) for d in tested)
