"""The statistics of `compare`: exact tests against an enumeration written here, intervals that agree
with their tests, effect sizes and adjustments against the libraries, a planted effect only the paired
test can see, and a false-positive rate at the nominal level."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from promptdesk.core.experiments.stats.effects import independent_effect, paired_effect, seeds_for_power
from promptdesk.core.experiments.stats.multiplicity import adjust, holm
from promptdesk.core.experiments.stats.rows import Options, differences
from promptdesk.core.experiments.stats.shift import fewest_pairs, independent_test, paired_test
from promptdesk.core.experiments.stats.signed_rank import signed_rank_test


def enumerated_paired_p(d: np.ndarray, shift: float = 0.0) -> float:
    """Every sign flip of the differences (minus `shift`), counted by hand."""
    d = d - shift
    observed = abs(d.mean())
    flips = [abs((np.array(signs) * d).mean()) >= observed - 1e-12 for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(flips) / len(flips)


def enumerated_independent_p(a: np.ndarray, b: np.ndarray, shift: float = 0.0) -> float:
    """Every deal of the pooled runs into groups of the same sizes, counted by hand."""
    pooled, observed = np.concatenate([a, b - shift]), abs((b - shift).mean() - a.mean())
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), len(b)):
        mask = np.zeros(len(pooled), bool)
        mask[list(chosen)] = True
        total += 1
        hits += abs(pooled[mask].mean() - pooled[~mask].mean()) >= observed - 1e-12
    return hits / total


def paired_samples(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-4, 7, size=n).astype(float) if seed % 2 else rng.normal(0.6, 1.0, size=n)


@pytest.mark.parametrize("seed", range(24))
def test_the_sign_flip_test_and_its_interval_agree_with_an_enumeration(seed):
    d = paired_samples(int(np.random.default_rng(seed).integers(2, 11)), seed)
    found = paired_test(list(d))
    assert found.exact and found.arrangements == 2 ** len(d)
    assert found.p_value == pytest.approx(enumerated_paired_p(d), abs=1e-12)
    for end, outside in ((found.low, found.low - 1e-6), (found.high, found.high + 1e-6)):
        if math.isfinite(end):  # each end is the last shift the test accepts: just past it, it rejects
            assert enumerated_paired_p(d, end) > 0.05 >= enumerated_paired_p(d, outside)
    assert found.contains(0.0) == (found.p_value > 0.05)


@pytest.mark.parametrize("seed", range(12))
def test_the_two_sample_test_and_its_interval_agree_with_an_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    a = rng.integers(0, 6, size=int(rng.integers(2, 6))).astype(float)
    b = rng.integers(1, 8, size=int(rng.integers(2, 6))).astype(float)
    found = independent_test(list(a), list(b))
    assert found.exact and found.arrangements == math.comb(len(a) + len(b), len(b))
    assert found.p_value == pytest.approx(enumerated_independent_p(a, b), abs=1e-12)
    for end, outside in ((found.low, found.low - 1e-6), (found.high, found.high + 1e-6)):
        if math.isfinite(end):
            assert enumerated_independent_p(a, b, end) > 0.05 >= enumerated_independent_p(a, b, outside)
    assert found.contains(0.0) == (found.p_value > 0.05)


def test_the_exact_tests_give_scipys_p_values():
    from scipy.stats import permutation_test, wilcoxon
    rng = np.random.default_rng(7)
    for _ in range(10):
        x, y = rng.normal(size=8), rng.normal(0.5, 1, size=8)
        paired = permutation_test((x, y), lambda u, v, axis=-1: np.mean(v - u, axis=axis), permutation_type="samples",
                                  vectorized=True, n_resamples=np.inf).pvalue
        assert paired_test(list(y - x)).p_value == pytest.approx(paired, abs=1e-9)
        two = permutation_test((x, y), lambda u, v, axis=-1: np.mean(v, axis=axis) - np.mean(u, axis=axis),
                               vectorized=True, n_resamples=np.inf).pvalue  # equal sizes: a symmetric null
        assert independent_test(list(x), list(y)).p_value == pytest.approx(two, abs=1e-9)
        d = rng.integers(-3, 6, size=9).astype(float)
        if np.any(d):
            assert signed_rank_test(list(d)).p_value == pytest.approx(wilcoxon(d).pvalue, abs=1e-9)


def test_many_pairs_are_tested_with_seeded_random_flips():
    d = list(np.random.default_rng(3).normal(0.3, 1, size=30))
    first, again = paired_test(d), paired_test(d)
    assert first == again and not first.exact and first.arrangements == 20_001
    assert first.contains(0.0) == (first.p_value > 0.05)


def test_the_signed_rank_interval_agrees_with_its_test_ties_and_zeros_included():
    rng = np.random.default_rng(11)
    for _ in range(60):
        d = rng.integers(-3, 6, size=int(rng.integers(4, 14))).astype(float)
        found = signed_rank_test(list(d))
        assert found.contains(0.0) == (found.p_value > 0.05), d


def test_effect_sizes_and_their_intervals():
    # d_z = mean / sd of the differences; its interval inverts the noncentral t at t = d_z √n.
    from scipy.stats import nct
    d = [1.0, 2.0, 3.0, 4.0, 5.5]
    dz = paired_effect(d)
    assert dz.name == "d_z" and dz.value == pytest.approx(np.mean(d) / np.std(d, ddof=1))
    t = dz.value * math.sqrt(5)
    assert nct.cdf(t, 4, dz.low * math.sqrt(5)) == pytest.approx(0.975, abs=1e-6)
    assert nct.cdf(t, 4, dz.high * math.sqrt(5)) == pytest.approx(0.025, abs=1e-6)
    # Hedges' g: Cohen's d times J ≈ 1 − 3 / (4 df − 1).
    g = independent_effect([1.0, 2.0, 3.0, 4.0, 5.5], [3.0, 4.0, 5.0, 6.0, 8.0])
    pooled = math.sqrt((np.var([1, 2, 3, 4, 5.5], ddof=1) + np.var([3, 4, 5, 6, 8], ddof=1)) / 2)
    assert g.value == pytest.approx((5.2 - 3.1) / pooled * (1 - 3 / (4 * 8 - 1)), rel=2e-3)
    assert g.low < g.value < g.high
    assert paired_effect([2.0, 2.0, 2.0]) is None        # no spread: a standardized effect is undefined


def test_the_power_note_is_the_t_tests_and_never_below_the_exact_tests_floor():
    from statsmodels.stats.power import TTestIndPower, TTestPower
    for effect in (0.3, 0.8, 1.5):
        for alpha in (0.05, 0.001):
            assert seeds_for_power(effect, alpha, paired=True) == max(
                fewest_pairs(alpha), math.ceil(TTestPower().solve_power(effect, alpha=alpha, power=0.8)))
            assert seeds_for_power(effect, alpha, paired=False) >= math.ceil(
                TTestIndPower().solve_power(effect, alpha=alpha, power=0.8))
    assert seeds_for_power(20.0, 0.05, paired=True) == 6      # 2 / 2^6 = 0.031: five pairs can never reach 0.05
    assert seeds_for_power(0.0, 0.05, paired=True) is None


def test_the_power_note_holds_where_scipys_lower_tail_gives_no_number():
    """At the small levels a table's adjustment asks for, scipy's noncentral t returns nan for the
    far lower tail (a negligible share); the power is then the upper tail, never the normal
    approximation of the whole power, which overstates it (and made the power fall with more seeds)."""
    from scipy.stats import nct, t as student
    from promptdesk.core.experiments.stats.effects import _power
    effect, alpha = 1.48329, 0.05 / 120                   # a paired row of a 2 x 3 sweep's 120-test table
    n = np.arange(6, 40)
    critical = student.ppf(1 - alpha / 2, n - 1)
    upper = nct.sf(critical, n - 1, effect * np.sqrt(n))  # the lower tail is below 1e-12 here
    assert np.isnan(nct.cdf(-critical, n - 1, effect * np.sqrt(n))).any()   # the case this test is about
    assert _power(effect, n, alpha, True) == pytest.approx(upper, abs=1e-9)
    assert np.all(np.diff(_power(effect, n, alpha, True)) > 0)
    needed = seeds_for_power(-effect, alpha, paired=True)
    assert needed == int(n[np.argmax(upper >= 0.8)]) == 15


def test_holm_and_benjamini_hochberg_are_statsmodels_adjustments():
    from statsmodels.stats.multitest import multipletests
    p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.002]
    assert adjust(p, "holm") == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert adjust(p, "bh") == pytest.approx(list(multipletests(p, method="fdr_bh")[1]))
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    with pytest.raises(ValueError, match="holm, bh"):
        adjust(p, "bonferroni")


def table(values: dict[str, list[float]], **options) -> list:
    """A one-metric table of conditions whose runs are seeds 1..n."""
    samples = {"x": {c: list(enumerate(v, start=1)) for c, v in values.items()}}
    return differences(samples, Options(**options))


def test_a_small_effect_in_every_seed_is_found_paired_and_missed_unpaired():
    # Seeds vary widely (2 to 92); B is lower than A by 1 to 2 in every one of them.
    rng = np.random.default_rng(5)
    base = rng.integers(2, 93, size=10).astype(float)
    a, b = base + 1.5, base - rng.uniform(0, 0.5, size=10)
    paired = table({"A": list(a), "B": list(b)}).rows[0]
    unpaired = table({"A": list(a), "B": list(b)}, unpaired=True).rows[0]
    assert paired.design == "paired" and paired.pairs == 10 and paired.p_value < 0.01
    assert paired.p_value == pytest.approx(2 / 1024, rel=1e-5) and paired.ci_high < 0 and paired.effect < -1
    assert unpaired.design == "unpaired" and unpaired.p_value > 0.5 and unpaired.ci_low < 0 < unpaired.ci_high


def test_with_no_effect_the_false_positive_rate_stays_at_the_nominal_level():
    # 400 simulated tables, seeded. Paired: both conditions share each seed's level and differ by noise
    # only. Unpaired: two independent samples of one distribution (6 runs each: 924 deals, exact).
    rng = np.random.default_rng(2024)
    rejected = {"paired": 0, "wilcoxon": 0, "unpaired": 0}
    for _ in range(400):
        seeds = rng.normal(50, 20, size=10)
        a, b = seeds + rng.normal(0, 3, size=10), seeds + rng.normal(0, 3, size=10)
        rejected["paired"] += table({"A": list(a), "B": list(b)}).rows[0].p_value <= 0.05
        rejected["wilcoxon"] += table({"A": list(a), "B": list(b)}, test="wilcoxon").rows[0].p_value <= 0.05
        x, y = rng.normal(50, 20, size=6), rng.normal(50, 20, size=6)
        rejected["unpaired"] += table({"A": list(x), "B": list(y)}, unpaired=True).rows[0].p_value <= 0.05
    for name, count in rejected.items():
        assert 0.025 <= count / 400 <= 0.075, (name, count)


def test_missing_seeds_drop_their_pairs_and_too_few_pairs_get_no_p_value():
    samples = {"turns": {"a-C": [(1, 2.0), (2, 3.0), (3, 2.0), (4, 5.0)], "b-C": [(1, 6.0), (2, None), (4, 8.0)]},
               "goal": {"a-C": [(1, 1.0), (2, None), (3, None), (4, None)], "b-C": [(1, 0.0), (2, 1.0), (4, None)]}}
    turns, goal = differences(samples).rows
    assert (turns.pairs, turns.dropped, turns.diff) == (2, [2, 3], 3.5)
    assert turns.p_value == 0.5 and turns.ci_unbounded          # 2 pairs: 4 flips, nothing can be rejected
    assert (goal.pairs, goal.untested, goal.p_value, goal.p_adjusted) == (1, "too few pairs", None, None)


def test_the_adjustment_spans_the_whole_table_not_one_metric():
    samples = {m: {"A": [(s, float(s)) for s in range(1, 11)], "B": [(s, s + 1.0 + 0.01 * s) for s in range(1, 11)]}
               for m in ("x", "y", "z")}
    found = differences(samples)
    assert found.family == 3 and [d.p_value for d in found.rows] == [pytest.approx(2 / 1024, rel=1e-5)] * 3
    assert [d.p_adjusted for d in found.rows] == [pytest.approx(3 * 2 / 1024, rel=1e-5)] * 3
    bh = differences(samples, Options(adjust="bh"))
    assert [d.p_adjusted for d in bh.rows] == [pytest.approx(2 / 1024, rel=1e-5)] * 3
