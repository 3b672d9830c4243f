"""`make bench`'s engine figures are measured on one clock: a beat's recorded span and its calls
both in wall time (a run on the improviser alone would otherwise be on simulated time, where the
calls cost nothing and the ratio reads tens)."""

from __future__ import annotations

from benchmarks import engine


def test_beat_overhead_ratio_compares_a_beat_with_its_slowest_call_on_the_wall_clock():
    ratio = engine.beat_overhead_ratio(beats_wanted=3, latency=(50, 100))
    assert 0.99 <= ratio < 2, f"a beat's span over its slowest call: {ratio}"
