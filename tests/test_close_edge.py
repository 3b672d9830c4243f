"""Controls at the edge of a close: a world event or note is recorded, or refused with "the scene has
closed"; never accepted and then dropped from `events.jsonl`."""

from __future__ import annotations

import pytest
from helpers import example_scene, run_session

from promptdesk.core.engine.stage import SceneClosed


async def test_an_event_sent_after_the_last_safe_point_is_recorded_before_the_close(tmp_path):
    def inject_during_the_last_beat(session) -> None:
        def on_event(event) -> None:
            if event.type == "speak" and event.beat == 2 and not session._pending:
                session.inject_event("The lights go out")
                session.add_note("Wrap it up", to="bob")
        session.subscribe(on_event)

    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 3}), isolation="b",
                            coordinator="C", before_run=inject_during_the_last_beat)
    records = run.records()
    types = [r["type"] for r in records]
    event = next(i for i, r in enumerate(records) if r["type"] == "event" and r["from"] == "operator")
    note = next(i for i, r in enumerate(records) if r["type"] == "note" and r["from"] == "operator")
    assert records[event]["text"] == "The lights go out" and records[note]["target"] == "bob"
    assert event < types.index("close") and note < types.index("close")


async def test_an_event_sent_once_the_scene_has_closed_is_refused(tmp_path):
    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 2}), isolation="b",
                            coordinator="C")
    with pytest.raises(SceneClosed, match="the scene has closed"):
        run.session.inject_event("Too late")
    with pytest.raises(SceneClosed, match="the scene has closed"):
        run.session.add_note("Too late")
    assert "Too late" not in (run.dir / "events.jsonl").read_text()


async def test_an_event_sent_as_the_close_is_recorded_is_refused(tmp_path):
    refused: list[str] = []

    def inject_at_the_close(session) -> None:
        def on_event(event) -> None:
            if event.type == "close":
                try:
                    session.inject_event("At the very end")
                except SceneClosed as exc:
                    refused.append(str(exc))
        session.subscribe(on_event)

    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 2}), isolation="b",
                            coordinator="C", before_run=inject_at_the_close)
    assert refused == ["the scene has closed"]
    assert "At the very end" not in (run.dir / "events.jsonl").read_text()
