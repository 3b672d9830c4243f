"""The stage for every format and cast size: roundtable escalations, collaborations, 2 to 5 actors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tui_support import screen_text, session_for, wait_for

from core.events import GenericEvent, SpeakEvent
from tui.app import create_app
from tui.scripted import ScriptedSession
from tui.widgets.escalation_modal import EscalationModal
from tui.widgets.state_panel import StatePanel
from tui.widgets.thinking_pane import ThinkingPane
from tui.widgets.transcript import Transcript

NAMES = ["Alice", "Bob", "Charlie", "Dana", "Eve"]


def records(session) -> list[dict]:
    return [json.loads(line) for line in (Path(session.state.run_dir) / "events.jsonl").read_text().splitlines()]


async def test_a_roundtable_escalation_opens_a_dialog_and_the_answer_goes_to_the_engine(workspace):
    session = session_for(workspace, "roundtable-debate.yaml", isolation="a", coordinator="C")
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: isinstance(app.screen, EscalationModal), "the escalation dialog")
        assert "The facilitator recommends" in screen_text(app)
        await pilot.press("escape")
        assert app.screen is stage and stage.check_action("escalation", ())
        await pilot.press("a")
        assert isinstance(app.screen, EscalationModal)
        await pilot.click("#accept")
        await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")
        decision = next(r for r in records(session) if r["type"] == "decision")
        assert (decision["from"], decision["reason"]) == ("operator", "accept")
        await wait_for(pilot, lambda: any(line.startswith("Your decision:")
                                          for line in stage.query_one(Transcript).plain_lines()), "the decision")


async def test_a_collaboration_shows_its_rounds_and_replies(workspace):
    session = session_for(workspace, "hiking-plan.yaml", isolation="a", coordinator="C")
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished, "the close")
        await pilot.pause()
        state = stage.query_one(StatePanel).snapshot
        assert state.format == "collaborate" and state.max_rounds and state.round
        assert f"Collab    {state.round}/{state.max_rounds}" in screen_text(app)
        assert any(line.startswith(("GPT → ", "Claude → ")) for line in stage.query_one(Transcript).plain_lines())


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("actors", [2, 3, 4, 5])
async def test_two_to_five_actors_each_get_a_readable_pane(size, actors):
    cast = {name.lower(): name for name in NAMES[:actors]}
    session = ScriptedSession(cast)
    app = create_app(session=session)
    async with app.run_test(size=size) as pilot:
        session.publish([GenericEvent(t=0, **{"from": "coordinator"}, type="beat", text="Beat 0", beat=0)]
                        + [SpeakEvent(t=0, **{"from": slug}, text=f"I am {name}.", beat=0) for slug, name in cast.items()])
        await pilot.pause()
        panes = list(app.screen.query(ThinkingPane))
        assert len(panes) == actors
        assert all(p.outer_size.width >= 16 and p.outer_size.height >= 5 for p in panes), [p.outer_size for p in panes]
        transcript = app.screen.query_one(Transcript)
        assert transcript.size.width >= 40 and transcript.size.height >= 5
        text = screen_text(app)
        for pane in panes:
            assert "PRIVATE" in f"{pane.border_title} {pane.border_subtitle}"
            assert pane.actor_name in str(pane.border_title)
        assert text.count("PRIVATE") == actors
