"""The stage for every format and cast size: roundtable escalations, collaborations, 2 to 5 actors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tui_support import screen_text, session_for, wait_for

from promptdesk.core.record.events import GenericEvent, SpeakEvent
from promptdesk.tui.app import create_app
from promptdesk.tui.lines import Cast
from promptdesk.tui.render import transcript_line
from promptdesk.tui.scripted import ScriptedSession
from promptdesk.tui.stage_state import StageState, note_progress
from promptdesk.tui.formats.escalation_modal import EscalationModal
from promptdesk.tui.widgets.state_panel import StatePanel, render_state
from promptdesk.tui.widgets.thinking_pane import ThinkingPane
from promptdesk.tui.widgets.transcript import Transcript

NAMES = ["Alice", "Bob", "Charlie", "Dana", "Eve"]


def records(session) -> list[dict]:
    return [json.loads(line) for line in (Path(session.state.run_dir) / "events.jsonl").read_text().splitlines()]


async def test_a_roundtable_escalation_opens_a_dialog_and_the_answer_goes_to_the_engine(workspace):
    session = session_for(workspace, "roundtable-debate.yaml", isolation="a", coordinator="C")
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: isinstance(app.screen, EscalationModal), "the escalation dialog")
        await wait_for(pilot, lambda: "The facilitator recommends" in screen_text(app), "the dialog drawn")
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


async def test_the_console_asks_the_operator_and_holds_the_roundtable_until_the_decision(workspace):
    """The console's own options (from the command line) are not headless: the escalation waits, the
    wait shows in the state panel, and notes.md records the decision as the operator's."""
    from dataclasses import replace

    from promptdesk.core.clock import VirtualClock
    from promptdesk.core.cli.main import parser
    from promptdesk.core.casting.scene_file import load_scene
    from promptdesk.core.casting.build import build_session
    from promptdesk.tui.app import console_options
    from tui_support import fast, run_options

    scene = workspace / "scenes" / "roundtable-debate.yaml"
    options = console_options(parser().parse_args([str(scene), "--isolation", "a", "--coordinator", "C"]))
    local = run_options(workspace, clock=VirtualClock())
    options = replace(options, seed=local.seed, runs_root=local.runs_root, write_character_journals=False,
                      cwd=workspace, clock=local.clock)
    session = build_session(fast(load_scene(scene)), options)
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: isinstance(app.screen, EscalationModal), "the escalation dialog")
        await pilot.press("escape")
        stage.refresh_state()
        await pilot.pause()
        assert "Waiting   your decision (a)" in screen_text(app)
        assert not stage.bridge.worker.is_finished and session.state.status == "running"
        await pilot.press("a")
        await pilot.click("#own-button")
        await pilot.press(*"Ship it", "enter")
        await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")
        await pilot.pause()
        assert "Waiting   your decision" not in screen_text(app)  # the state row, not a participant's words
    types = [r["type"] for r in records(session)]
    assert "decision" in types and not any("without --on-escalate" in r["text"] for r in records(session))
    notes = (Path(session.state.run_dir) / "notes.md").read_text()
    assert "- On escalation: ask the operator" in notes
    assert "- Decision at round " in notes and ": own (by operator): Ship it" in notes


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


def synthesis_event(**extra) -> GenericEvent:
    return GenericEvent(t=1, type="synthesis", text="We mostly\x1b[31m agree", beat=2, round=2,
                        **{"from": "facilitator"}, **extra)


def test_a_synthesis_line_shows_consensus_open_conflicts_next_action_and_recommendation_literally():
    event = synthesis_event(consensus=["ship it [b]soon[/b]"], conflicts=[{"topic": "who\x07 pays"}, "scope"],
                            next_action="escalate", recommendation="Split the work", consensus_count=1,
                            conflict_count=2)
    line = transcript_line(event, Cast({}))
    assert line.plain == ("Synthesis (round 2): We mostly agree · consensus: ship it [b]soon[/b] · open conflicts: "
                          "who pays; scope · next: escalate · recommendation: Split the work")


def test_a_synthesis_with_nothing_agreed_says_none_and_the_panel_counts_from_the_lists():
    state = StageState(format="roundtable")
    note_progress(state, synthesis_event(consensus=[], conflicts=[{"topic": "a"}, {"topic": "b"}]))
    assert (state.consensus_count, state.conflict_count) == (0, 2)
    assert "consensus: none" in transcript_line(synthesis_event(consensus=[]), Cast({})).plain
    assert "Answers   blind (parallel)" in render_state(state).plain


async def answer_escalations(pilot, app, done) -> None:
    """Run until `done()`, accepting the facilitator's recommendation whenever the dialog opens."""
    for _ in range(8000):
        if done():
            return
        if isinstance(app.screen, EscalationModal):
            await pilot.click("#accept")
        await pilot.pause()
    raise AssertionError("timed out waiting for the roundtable to close")


async def test_a_roundtable_stage_shows_the_synthesis_phase_round_counts_and_that_answers_are_not_blind(workspace):
    session = session_for(workspace, "roundtable-free.yaml", isolation="a", coordinator="C")
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        await answer_escalations(pilot, app, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished)
        await pilot.pause()
        syntheses = [r for r in records(session) if r["type"] == "synthesis"]
        assert syntheses
        lines = stage.query_one(Transcript).plain_lines()
        assert sum(line.startswith("Synthesis (round ") for line in lines) == len(syntheses)
        last = syntheses[-1]
        state = stage.query_one(StatePanel).snapshot
        discussion = session.format_state.discussion
        assert (state.format, state.blind, state.round) == ("roundtable", False, discussion.round)
        assert state.phase == discussion.phase.name
        assert (state.consensus_count, state.conflict_count) == (len(last["consensus"]), len(last["conflicts"]))
        text = screen_text(app)
        for row in (f"Round     {state.round}", f"Phase     {state.phase}", f"Consensus {state.consensus_count}",
                    f"Conflicts {state.conflict_count}", "Answers   not blind (sequential)"):
            assert row in text, row


async def test_letters_typed_while_a_button_of_the_escalation_dialog_has_the_focus_go_to_the_decision():
    """Tab from Accept lands on a button: what is typed next is the operator's own decision, not lost."""
    from textual.app import App
    from textual.widgets import Input

    answers = []

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(EscalationModal({"recommendation": "Ship it", "reason": "done"}), answers.append)

    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("tab", *"No, wait", "enter")
        await pilot.pause()
    assert [(a.decision, a.text) for a in answers] == [("own", "No, wait")]


async def test_deciding_myself_with_no_words_says_what_to_type_and_answers_nothing():
    from promptdesk.tui.app import PromptdeskApp
    from promptdesk.tui.screens.compare import CompareScreen

    answers = []
    app = PromptdeskApp(lambda: CompareScreen([], "run"))
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(EscalationModal({"recommendation": "Ship it", "positions": {}}), answers.append)
        await pilot.pause()
        await pilot.click("#own-button")
        await pilot.pause()
        assert isinstance(app.screen, EscalationModal) and answers == []
        assert any("Type your own decision first" in n.message for n in app._notifications)
        app.screen.query_one("#own").focus()
        await pilot.press(*"Ship it", "enter")
        await pilot.pause()
    assert [(a.decision, a.text) for a in answers] == [("own", "Ship it")]
