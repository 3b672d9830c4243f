"""On stage, `suggested_events: ask`: the coordinator's suggested world event waits in the Session
panel until the operator injects it with `y`."""

from __future__ import annotations

import json

from test_tui_stage import SIZE, finished, records
from tui_support import held, hold_at, session_for, wait_for

from promptdesk.tui.app import create_app
from promptdesk.tui.widgets.state_panel import StatePanel, render_state


async def test_y_injects_the_suggested_world_event_at_the_next_beat(workspace):
    session = hold_at(session_for(workspace))
    assert session.suggested_events == "ask", "the console asks by default"
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = await held(pilot, session)
        assert not stage.check_action("accept_suggestion", ()), "nothing to accept yet"
        session.suggest("The lights flicker and go out")
        await wait_for(pilot, lambda: "Suggests" in render_state(app.screen.query_one(StatePanel).snapshot).plain, "the suggestion")
        assert "The lights flicker and go out (y: inject)" in render_state(stage.query_one(StatePanel).snapshot).plain
        assert stage.check_action("accept_suggestion", ())
        await pilot.press("y")
        assert session.state.suggestion is None
        await pilot.press("r")
        await wait_for(pilot, lambda: finished(stage), "the close")
        event = next(r for r in records(session) if r["type"] == "event")
        assert (event["text"], event["from"], event["suggested_by"]) == \
            ("The lights flicker and go out", "operator", "coordinator")


async def test_y_cannot_inject_a_suggestion_withheld_for_carrying_the_coordinator_notes(workspace):
    session = hold_at(session_for(workspace, coordinator="A"))
    notes = " ".join(session.scene.coordinator_notes.split())
    leaky = f"A memo slides under the door: {notes}"
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = await held(pilot, session)
        session.suggest("The lights flicker and go out")
        session.suggest(leaky)
        await wait_for(pilot, lambda: "withheld" in render_state(app.screen.query_one(StatePanel).snapshot).plain,
                       "the withheld suggestion")
        panel = render_state(stage.query_one(StatePanel).snapshot).plain
        assert "withheld: it carried private words" in panel and "memo" not in panel and "lights flicker" not in panel
        assert session.state.suggestion is None, "the withheld suggestion replaced the older one: nothing to accept"
        assert not stage.check_action("accept_suggestion", ())
        await pilot.press("y")
        await pilot.press("r")
        await wait_for(pilot, lambda: finished(stage), "the close")
    events = records(session)
    assert not [r for r in events if r["type"] == "event" and r.get("suggested_by")], "neither suggestion was injected"
    notice = [r for r in events if r["type"] == "system" and r.get("reason") == "withheld"]
    assert len(notice) == 1 and "the coordinator notes" in notice[0]["text"] and "memo" not in notice[0]["text"]
    sent = [line for line in (session.recorder.run_dir / "prompts.jsonl").read_text().splitlines()
            if json.loads(line)["to"] in session.actors]
    assert sent and not any("memo slides" in line or notes[:50] in line for line in sent)


def test_the_panel_says_why_a_suggestion_was_withheld_a_repeat_is_not_called_private():
    from promptdesk.core.engine.suggestions import REPEATED
    from promptdesk.tui.snapshot import StageState

    repeat = render_state(StageState(cast={"ann": "Ann"}, status="running", withheld=REPEATED)).plain
    assert "withheld: a repeat" in repeat and "private" not in repeat
    private = render_state(StageState(cast={"ann": "Ann"}, status="running",
                                      withheld="it carries words of the coordinator notes")).plain
    assert "withheld: it carried private words" in private
