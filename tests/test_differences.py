"""The statistics of `compare`, against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from promptdesk.core.experiments.differences import N_RESAMPLES, difference, differences, fewest_seeds, holm, seeds_for_power


def test_holm_matches_a_hand_checked_example():
    # Sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04, raised to 0.06: monotone).
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]                      # 2 x 0.5 = 1; capped at 1 and kept monotone
    assert holm([0.02]) == [0.02] and holm([]) == []


def test_the_power_note_is_the_two_sample_normal_approximation():
    # n = 2 (z_0.975 + z_0.8)^2 sd^2 / diff^2 = 2 x 2.801585^2 x 10 / 9 = 17.44, so 18 seeds per condition.
    assert seeds_for_power(3.0, math.sqrt(10)) == 18
    assert seeds_for_power(-3.0, math.sqrt(10)) == 18
    assert seeds_for_power(0.0, 1.0) is None                   # no difference to find
    assert seeds_for_power(100.0, 0.1) == 4                    # never fewer than the permutation test can use


def test_the_fewest_seeds_at_which_the_permutation_test_can_reach_005():
    # n against n: the smallest two-sided p is 2 / C(2n, n): 2/20 = 0.1 (n=3), 2/70 = 0.029 (n=4);
    # with Holm over m pairs it is multiplied by m: 5 seeds (2/252) serve up to 6 pairs, 6 (2/924) up to 23.
    assert [fewest_seeds(m) for m in (1, 2, 6, 7, 23, 24)] == [4, 5, 5, 6, 6, 7]


def test_a_difference_with_every_value_equal_is_zero_with_p_1_and_no_resampling():
    d = difference("cost_usd", "a", [0.0, 0.0, 0.0], "b", [0.0, 0.0, 0.0])
    assert (d.diff, d.ci_low, d.ci_high, d.p_value, d.all_equal, d.seeds_needed) == (0.0, 0.0, 0.0, 1.0, True, None)


def test_two_constant_sides_that_differ_get_the_exact_p_of_their_arrangements():
    d = difference("turns", "a", [1.0, 1.0, 1.0], "b", [2.0, 2.0, 2.0])
    # 3 against 3: C(6, 3) = 20 arrangements, the observed one and its mirror are the extremes: p = 2/20.
    assert (d.diff, d.ci_low, d.ci_high, d.p_value) == (1.0, 1.0, 1.0, pytest.approx(0.1))


def test_many_seeds_use_random_permutations_seeded_and_reproducible():
    a = [float(i % 7) for i in range(12)]
    b = [float(i % 5) + 1.5 for i in range(12)]
    assert math.comb(24, 12) > N_RESAMPLES                     # too many arrangements: random ones, seeded
    first, second = difference("x", "a", a, "b", b), difference("x", "a", a, "b", b)
    assert first == second and first.p_value is not None and 0 < first.p_value < 1
    assert first.ci_low < first.diff < first.ci_high


def test_only_the_tested_pairs_are_adjusted():
    found = differences("turns", {"a": [1.0, 2.0, 3.0], "b": [7.0, 8.0, 9.0], "c": [5.0]})
    assert [(d.a, d.b, d.p_adjusted is None) for d in found] == [("a", "b", False), ("a", "c", True), ("b", "c", True)]
    assert found[0].p_adjusted == found[0].p_value == pytest.approx(0.1)   # one tested pair: nothing to adjust
    assert found[1].diff == 3.0
