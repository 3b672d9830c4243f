"""The crowd benchmark through the real OpenAI SDK: its figures computed from the beat marks and the
model server's own timings, checked on made-up numbers and on a small real scene."""

from __future__ import annotations

import pytest

from benchmarks import crowd_sdk


def test_figures_are_beat_spans_over_each_beats_slowest_draw_and_the_median_fanout():
    # beats 1 and 2 (marks on the monotonic clock; CPU time beside), a third mark closing beat 2
    marks = {1: (10.0, 1.0), 2: (11.2, 1.1), 3: (12.0, 1.3)}
    requests = [  # headers, the request sent (its headers, or an early one's last chunk), body whole, reply sent, draw
        {"head": 10.01, "sent": 10.01, "body": 10.02, "done": 11.0, "latency": 0.9},
        {"head": 10.02, "sent": 10.02, "body": 10.05, "done": 11.1, "latency": 1.0},
        {"head": 10.5, "sent": 11.21, "body": 11.22, "done": 11.9, "latency": 0.6},  # opened early, in beat 1
        {"head": 11.23, "sent": 11.23, "body": 11.31, "done": 11.95, "latency": 0.7},
        {"head": 11.6, "sent": 12.02, "body": 12.03, "done": 12.5, "latency": 0.5},  # beat 3: the next beat's first
    ]
    got = crowd_sdk.figures(marks, requests, beats=2)
    assert got["ratio"] == pytest.approx((1.2 + 0.8) / (1.0 + 0.7))
    assert got["fanout_ms"] == pytest.approx((40 + 100) / 2)  # beat 1: 10.05 - 10.01; beat 2: 11.31 - 11.21
    assert got["between_ms"] == pytest.approx((110 + 70) / 2)  # 11.21 - 11.1; 12.02 - 11.95
    assert got["cpu_ms"] == pytest.approx(150)


def test_a_beat_without_a_request_is_an_error_not_a_figure():
    with pytest.raises(ValueError, match="beat 1 sent no request"):
        crowd_sdk.figures({1: (0.0, 0.0), 2: (1.0, 0.0)}, [{"head": 1.5, "sent": 1.5, "body": 1.5, "done": 2, "latency": 1}], 1)


def test_a_request_belongs_to_the_beat_it_was_sent_in_not_the_one_it_was_opened_in():
    marks = {1: (10.0, 1.0), 2: (11.0, 1.1)}
    opened_before = {"head": 9.5, "sent": 10.1, "body": 10.12, "done": 10.8, "latency": 0.6}
    got = crowd_sdk.figures(marks, [opened_before], beats=1)
    assert got["fanout_ms"] == pytest.approx(20) and got["ratio"] == pytest.approx(1 / 0.6)


def test_a_small_crowd_through_the_sdk_is_measured_on_the_servers_clock():
    got = crowd_sdk.measure(4, seed=3, beats=2, latency=(0.05, 0.1))
    assert 1.0 <= got["ratio"] < 3, got  # a beat never takes less than its slowest call
    assert 0 < got["fanout_ms"] < 1000 and got["between_ms"] > 0 and got["cpu_ms"] > 0, got
