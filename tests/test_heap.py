"""A long run's garbage collection stays flat: between beats, what survived is frozen out of the
collector's reach, so a full collection does not walk every event recorded so far."""

from __future__ import annotations

import gc

from helpers import example_scene


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
