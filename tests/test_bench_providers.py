"""`cache_saving_b` and `cache_input_usd_b`: the share of the input's price that caching saved, and
the price paid, for one run (a short one here), agree with each other and with the run's calls."""

from __future__ import annotations

import pytest

from benchmarks import providers


def test_the_share_saved_is_one_minus_the_price_paid_over_the_uncached_price(monkeypatch):
    seen: list[tuple[float, float]] = []
    real = providers.input_cost
    monkeypatch.setattr(providers, "input_cost", lambda events: seen.append(real(events)) or seen[-1])
    got = providers.cache_saving_b(beats=6)
    (uncached, paid), = seen
    assert got["cache_input_usd_b"] == pytest.approx(paid, abs=1e-4) and 0 < paid < uncached, got
    assert got["cache_saving_b"] == pytest.approx(1 - paid / uncached, abs=2e-4), got
