"""A long run's garbage collection stays flat: between beats, what survived is frozen out of the
collector's reach, so a full collection does not walk every event recorded so far."""

from __future__ import annotations

import gc

import pytest
from helpers import example_scene
from loopback import CANARY, loopback  # noqa: F401 - fixture

from promptdesk.core.engine import heap
from promptdesk.core.record.recorder import Recorder


async def test_events_recorded_before_a_beat_are_frozen_out_of_the_collector(run_scene):
    seen: dict[str, int] = {}

    def watch(session) -> None:
        def on_event(event) -> None:
            if event.type == "beat" and event.beat == 3:
                first = session.recorder.events[0]
                seen["tracked_before"] = any(o is first for o in gc.get_objects())
        session.subscribe(on_event)

    before = gc.get_freeze_count()
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 5}), isolation="b", coordinator="C",
                          before_run=watch)
    assert run.result.beats >= 4
    assert gc.get_freeze_count() > before
    assert seen["tracked_before"] is False, "the start event was frozen at an earlier safe point"


@pytest.mark.parametrize("turns", ["parallel", "sequential"])
async def test_a_parallel_beat_settles_the_heap_once_its_requests_are_out(run_scene, monkeypatch, turns):
    """A parallel beat settles when its first turn is back (the heap's 2 ms then delay no request);
    a sequential scene still settles between beats, after one beat ends and before the next."""
    marks: list[str] = []
    monkeypatch.setattr(heap, "settle", lambda: marks.append("settle"))
    asked = Recorder.record_prompt

    def record_prompt(self, t, request) -> None:
        marks.append("ask")
        asked(self, t, request)

    monkeypatch.setattr(Recorder, "record_prompt", record_prompt)

    def watch(session) -> None:
        session.subscribe(lambda e: marks.append(e.type) if e.type in ("beat", "beat_end") else None)

    run = await run_scene(example_scene("the-apology", turns=turns, limits={"max_beats": 4}), isolation="b",
                          coordinator="C", before_run=watch)
    assert run.result.beats >= 3
    beats = " ".join(marks).split("beat ")[1:]  # from each beat's mark to the next one's
    played = [b for b in beats if "beat_end" in b][:-1]  # the last one is followed by the close, not a beat
    assert len(played) >= 2
    for beat in played:
        asks, rest = beat.split("beat_end")
        if turns == "parallel":
            assert asks.count("settle") == 1 and asks.index("settle") > asks.index("ask"), beat
            assert "settle" not in rest, beat
        else:
            assert "settle" not in asks and rest.count("settle") == 1, beat


def test_the_collector_is_held_off_inside_paused_and_left_as_it_was_found():
    assert gc.isenabled()
    with heap.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), heap.paused():
        raise RuntimeError("a beat that failed while its turns were started")
    assert gc.isenabled()
    gc.disable()
    try:
        with heap.paused():
            pass
        assert not gc.isenabled(), "off before, off after"
    finally:
        gc.enable()


async def test_a_beat_that_sends_ahead_builds_its_requests_with_the_collector_held_off(run_scene, loopback, monkeypatch):
    """Its turns are started one after another, each request leaving before the next is built: no
    collection runs in between (at fifty actors they took 4 ms of the beat's fan-out)."""
    from test_early_calls import play

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    states: list[bool] = []
    asked = Recorder.record_prompt

    def record_prompt(self, t, request) -> None:
        if request.purpose == "turn" and request.beat:
            states.append(gc.isenabled())
        asked(self, t, request)

    monkeypatch.setattr(Recorder, "record_prompt", record_prompt)
    await play(run_scene, loopback)
    assert len(states) == 9 and not any(states)  # beats 1-3, three actors each
    assert gc.isenabled()
