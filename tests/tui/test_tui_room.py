"""The room of a collaboration (spec 001 in the console): commands read by a pure function, new sessions
started side by side without sharing state, the `Collab: n/max` chip and the Stop key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, Static
from tui_support import run_options, screen_text, session_for, wait_for

from promptdesk.core.formats.collaborate.policy import CANCELED
from promptdesk.tui.app import create_app
from promptdesk.tui.formats.room_commands import RoomCommand, RoomError, parse_room
from promptdesk.tui.screens.stage import StageScreen
from promptdesk.tui.widgets.state_panel import StatePanel
from promptdesk.tui.widgets.transcript import Transcript

KNOWN = {"gpt", "claude"}


def records(session) -> list[dict]:
    return [json.loads(line) for line in (Path(session.state.run_dir) / "events.jsonl").read_text().splitlines()]


class TestRoomCommands:
    def test_a_plain_goal_is_a_collaboration_of_the_default_pair(self):
        assert parse_room("  Plan a picnic ", KNOWN) == RoomCommand("Plan a picnic", ("gpt", "claude"))

    def test_at_a_participant_is_a_single_call_of_one_round(self):
        command = parse_room("@gpt Name three rivers", KNOWN)
        assert command == RoomCommand("Name three rivers", ("gpt",), max_rounds=1) and command.single

    def test_the_router_starts_a_collaboration_of_the_two_named_participants(self):
        assert parse_room("@router collaborate claude gpt: Write a haiku: rain", KNOWN) == \
            RoomCommand("Write a haiku: rain", ("claude", "gpt"))
        assert parse_room("@Router collaborate GPT, claude: x", KNOWN) == RoomCommand("x", ("gpt", "claude"))

    @pytest.mark.parametrize(("typed", "says"), [
        ("", "Nothing typed"),
        ("@nobody hi", "No participant called @nobody (known: @claude, @gpt)"),
        ("@gpt", "Nothing to say to @gpt"),
        ("@", "No participant called @?"),
        ("@router collaborate gpt: ", "A collaboration takes two participants, got 1"),
        ("@router collaborate gpt claude", "Put a colon before the goal"),
        ("@router collaborate gpt claude:   ", "The goal is empty"),
        ("@router collaborate gpt gpt: x", "@gpt is named twice"),
        ("@router collaborate gpt nobody: x", "No participant called @nobody"),
        ("@router dance", "@router understands one command"),
    ])
    def test_bad_input_gets_a_message_that_says_what_to_type(self, typed, says):
        result = parse_room(typed, KNOWN)
        assert isinstance(result, RoomError) and says in result.message, result


def room_app(workspace: Path, scene: str = "hiking-plan.yaml"):
    """A collaboration's stage; the room's sessions share its seeded options and virtual clock."""
    session = session_for(workspace, scene, isolation="a", coordinator="C")
    return session, create_app(session=session, options=run_options(workspace, clock=session.clock))


async def type_in_room(pilot, text: str) -> None:
    await pilot.press("g")
    room = pilot.app.screen.query_one("#room", Input)
    assert room.has_focus
    room.value = text
    await pilot.press("enter")
    await pilot.pause()


def finished(stage: StageScreen) -> bool:
    return stage.bridge.worker is not None and stage.bridge.worker.is_finished


async def test_two_collaborations_started_back_to_back_run_side_by_side_without_sharing_state(workspace):
    first, app = room_app(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await type_in_room(pilot, "@router collaborate claude gpt: Plan a picnic for six")
        await wait_for(pilot, lambda: len(app.stages()) == 2, "the second stage")
        await type_in_room(pilot, "@gpt Name three rivers")
        await wait_for(pilot, lambda: len(app.stages()) == 3, "the third stage")
        stages = app.stages()
        await wait_for(pilot, lambda: all(finished(s) for s in stages), "every session to close")
        await pilot.pause()
        sessions = [s.session for s in stages]
        assert sessions[0] is first and len({id(s) for s in sessions}) == 3
        assert len({s.state.run_dir for s in sessions}) == 3
        assert len({s.format_state.session_id for s in sessions}) == 3
        assert all((s.state.isolation, s.state.coordinator) == ("a", "C") for s in sessions)
        goals = [first.scene.goal, "Plan a picnic for six", "Name three rivers"]
        for session, goal, cast in zip(sessions, goals, (["gpt", "claude"], ["claude", "gpt"], ["gpt"])):
            events = records(session)
            assert next(e["text"] for e in events if e["type"] == "human_message") == goal
            assert {e["session_id"] for e in events if "session_id" in e} == {session.format_state.session_id}
            assert list(session.state.cast) == cast
        single = sessions[2]
        assert single.format_state.max_rounds == 1 and single.state.close_reason in ("final", "cap", "no_handoff")
        lines = "\n".join(stages[1].query_one(Transcript).plain_lines())
        assert "Name three rivers" not in lines and first.scene.goal not in lines


async def test_bad_room_input_is_explained_and_starts_nothing(workspace):
    _, app = room_app(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        for typed, says in (("@nobody hi", "No participant called @nobody"),
                            ("@router collaborate gpt: ", "A collaboration takes two participants")):
            await type_in_room(pilot, typed)
            status = app.screen.query_one("#room-status", Static)
            assert says in str(status.render()) and status.has_class("error")
            assert len(app.stages()) == 1 and says in screen_text(app)
            await pilot.press("escape")


async def test_the_chip_counts_rounds_and_stop_ends_the_collaboration_with_the_router_line(workspace):
    session, app = room_app(workspace)
    hold_after = {1, 2}

    def hold(event) -> None:
        if event.type == "agent_response" and (event.model_extra or {}).get("round") in hold_after:
            session.pause()

    session.subscribe(hold)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        panel = stage.query_one(StatePanel)
        for n in (1, 2):
            await wait_for(pilot, lambda: session.state.status == "paused" and panel.snapshot.status == "paused"
                           and panel.snapshot.round == n, f"the hold after round {n}")
            assert f"Collab    {n}/6" in screen_text(app)
            if n == 1:
                await pilot.press("r")
        await pilot.press("s")
        await wait_for(pilot, lambda: finished(stage), "the close")
        await pilot.pause()
        events = records(session)
        stop = [e for e in events if e["type"] == "stop" and e["from"] == "router"]
        assert [e["text"] for e in stop] == [CANCELED]
        assert next(e for e in events if e["type"] == "close")["reason"] == "stop"
        assert any(CANCELED in line for line in stage.query_one(Transcript).plain_lines())


def test_a_collaboration_from_the_room_gets_its_own_limits_not_the_stages():
    from promptdesk.core.casting.scene_file import scene_from_dict
    from promptdesk.tui.formats.registry import get

    room_scene = get("collaborate").room_scene

    base = scene_from_dict({"name": "base", "format": "collaborate", "goal": "g", "characters": ["gpt", "claude"],
                            "collaborate": {"max_rounds": 2}})
    assert room_scene(RoomCommand("Plan a picnic", ("gpt", "claude")), base).collaborate.max_rounds == 6
    assert room_scene(RoomCommand("Hi", ("gpt",), max_rounds=1), base).collaborate.max_rounds == 1


async def test_a_single_call_reads_as_one_call_has_its_own_limits_and_escape_goes_back(workspace):
    session = session_for(workspace, "hiking-plan.yaml", isolation="a", coordinator="C")
    app = create_app(session=session, options=run_options(workspace, clock=session.clock, max_beats=2))
    async with app.run_test(size=(120, 40)) as pilot:
        bottom = app.screen
        assert bottom.check_action("leave", ()) is False
        await type_in_room(pilot, "@gpt Name three rivers")
        await wait_for(pilot, lambda: len(app.stages()) == 2, "the single call's stage")
        single = app.stages()[1]
        assert single.options.max_beats is None
        await wait_for(pilot, lambda: finished(single), "the answer")
        await pilot.pause()
        lines = single.query_one(Transcript).plain_lines()
        assert any(line.startswith('GPT  "') for line in lines), lines
        assert lines[-1] == "■ Answered: one call, one reply"
        text = "\n".join(lines)
        assert "→ GPT" not in text and "hands over to" not in text and "goal not achieved" not in text
        assert "Closed    answered (single call)" in screen_text(app)
        assert single.check_action("leave", ())
        app.set_focus(None)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is bottom, "the stage below")
        assert app.stages() == [bottom]


async def test_escape_on_a_running_stacked_stage_asks_then_stops_it_cleanly(workspace):
    from promptdesk.tui.widgets.confirm_modal import ConfirmModal

    from promptdesk.core.clock import RealClock

    session = session_for(workspace, "hiking-plan.yaml", isolation="a", coordinator="C")
    app = create_app(session=session, options=run_options(workspace, clock=RealClock(), pace=60))
    async with app.run_test(size=(120, 40)) as pilot:
        bottom = app.screen
        await type_in_room(pilot, "@router collaborate claude gpt: Plan a picnic for six")
        await wait_for(pilot, lambda: len(app.stages()) == 2, "the second stage")
        top = app.stages()[1]
        assert top.bridge.live, top.session.state.status
        app.set_focus(None)
        await pilot.press("escape")
        assert isinstance(app.screen, ConfirmModal), (app.screen, app.stages())
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is bottom, "the stage below")
        close = [r for r in records(top.session) if r["type"] == "close"]
        assert close and close[0]["reason"] == "stop"
