"""The live stage: stop, inject, notes, pause and resume, quitting, themes, private thinking."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, Select

from promptdesk.core.clock import RealClock
from helpers import requests_text
from tui_support import held, hold_at, screen_text, session_for, wait_for

from promptdesk.tui.app import create_app
from promptdesk.tui.screens.replay import ReplayScreen
from promptdesk.tui.screens.stage import StageScreen
from promptdesk.tui.themes import THEMES
from promptdesk.tui.widgets.confirm_modal import ConfirmModal
from promptdesk.tui.widgets.input_modal import InputModal
from promptdesk.tui.widgets.stage_view import StageView
from promptdesk.tui.widgets.transcript import Transcript

SIZE = (120, 40)


def records(session) -> list[dict]:
    path = Path(session.state.run_dir) / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def finished(stage: StageScreen) -> bool:
    return stage.bridge.worker is not None and stage.bridge.worker.is_finished


async def started(pilot, session, beat: int = 1) -> StageScreen:
    """Wait until the scene has reached `beat`, then return the stage."""
    stage = pilot.app.screen
    assert isinstance(stage, StageScreen)
    await wait_for(pilot, lambda: session.state.beat >= beat and session.state.status == "running", f"beat {beat}")
    return stage


class TestControls:
    async def test_stop_closes_the_scene_and_still_writes_the_run_folder(self, workspace):
        session = session_for(workspace, latency=True, clock=RealClock())
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            stage = await started(pilot, session)
            await pilot.press("s")
            await wait_for(pilot, lambda: finished(stage), "the stop")
            await pilot.pause()
            assert session.state.close_reason == "stop"
            types = [r["type"] for r in records(session)]
            assert types[-1] == "close" and "stop" in types and records(session)[-1]["reason"] == "stop"
            assert (Path(session.state.run_dir) / "transcript.md").is_file()
            assert stage.check_action("stop", ()) is False and stage.check_action("inject", ()) is False
            assert any(line.startswith("■ Scene closed (stop") for line in stage.query_one(Transcript).plain_lines())

    async def test_an_injected_event_reaches_every_actor_at_the_next_beat(self, workspace):
        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            stage = await held(pilot, session)
            await pilot.press("e")
            assert isinstance(app.screen, InputModal)
            await pilot.press(*"The fire alarm goes off", "enter")
            assert app.screen is stage
            await pilot.press("r")
            await wait_for(pilot, lambda: finished(stage), "the close")
            rows = records(session)
            at = next(i for i, r in enumerate(rows) if r["type"] == "event" and r["from"] == "operator")
            assert rows[at]["text"] == "The fire alarm goes off"
            assert any(r["type"] == "beat" for r in rows[at + 1:])
            prompts = requests_text(Path(session.state.run_dir))
            assert prompts.count("The fire alarm goes off") >= len(session.state.cast)
            await wait_for(pilot, lambda: "⚡ EVENT (from you): The fire alarm goes off"
                           in stage.query_one(Transcript).plain_lines(), "the transcript line")

    async def test_a_directors_note_can_go_to_one_actor(self, workspace):
        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            stage = await held(pilot, session)
            await pilot.press("n")
            app.screen.query_one(Select).value = "bob"
            app.screen.query_one(Input).focus()
            await pilot.press(*"Be kinder", "enter")
            await pilot.press("r")
            await wait_for(pilot, lambda: finished(stage), "the close")
            note = next(r for r in records(session) if r["type"] == "note" and r["from"] == "operator")
            assert (note["text"], note["target"]) == ("Be kinder", "bob")
            await wait_for(pilot, lambda: "✎ Director's note to Bob: Be kinder"
                           in stage.query_one(Transcript).plain_lines(), "the transcript line")

    async def test_pause_holds_the_scene_and_resume_lets_it_go_on(self, workspace):
        session = session_for(workspace, latency=True, clock=RealClock())
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            stage = await started(pilot, session)
            await pilot.press("p")
            await held(pilot, session)
            beat = session.state.beat
            assert stage.check_action("pause", ()) is False and stage.check_action("resume", ())
            for _ in range(50):
                await pilot.pause()
            assert session.state.beat == beat and session.state.status == "paused"
            await pilot.press("r")
            await wait_for(pilot, lambda: session.state.beat > beat, "the next beat")
            types = [r["type"] for r in records(session)]
            assert types.index("pause") < types.index("resume")

    async def test_plus_and_minus_set_the_pace_shown_in_the_state_panel(self, workspace):
        session = hold_at(session_for(workspace, pace=1.5))
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            stage = await held(pilot, session)
            assert "Pace      ≥ 1.5 s/beat" in screen_text(app)
            await pilot.press("+")
            assert session.state.pace_s == session.pace.seconds == 2.0
            await pilot.pause()
            assert "Pace      ≥ 2 s/beat" in screen_text(app)
            await pilot.press(*"-----")
            await pilot.pause()
            assert session.pace.seconds == 0 and "Pace      off" in screen_text(app)
            assert "+- Pace" in screen_text(app)
            assert stage.check_action("pace", (1,))

    async def test_a_cancelled_dialog_sends_nothing(self, workspace):
        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            await held(pilot, session)
            await pilot.press("e", *"ignored", "escape")
            assert not session._pending


class TestQuit:
    async def test_quitting_a_running_scene_asks_first_and_closes_the_run_cleanly(self, workspace):
        session = session_for(workspace, latency=True, clock=RealClock())
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            await started(pilot, session)
            await pilot.press("q")
            assert isinstance(app.screen, ConfirmModal)
            await pilot.press("n")
            assert isinstance(app.screen, StageScreen) and session.state.status == "running"
            await pilot.press("q")
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, "the app to exit")
        run_dir = Path(session.state.run_dir)
        assert session.state.close_reason == "stop"
        assert json.loads((run_dir / "metadata.json").read_text())["reason"] == "stop"

    async def test_quitting_after_the_close_does_not_ask(self, workspace):
        session = session_for(workspace)
        app = create_app(session=session)
        async with app.run_test(size=SIZE) as pilot:
            stage = app.screen
            await wait_for(pilot, lambda: finished(stage), "the close")
            await pilot.press("q")
            await wait_for(pilot, lambda: not app.is_running, "the app to exit")


async def test_the_theme_switches_at_run_time(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.screen.query_one(Transcript)
        dark = transcript.styles_by_role()["speaker-0"]
        await pilot.press("t")
        await pilot.pause()
        assert app.theme_name == "light" and app.theme == "textual-light"
        assert (str(THEMES["light"].path), "") in app.stylesheet.source
        assert (str(THEMES["dark"].path), "") not in app.stylesheet.source
        assert transcript.styles_by_role()["speaker-0"] != dark
        await pilot.press("t")
        await pilot.pause()
        assert app.theme_name == "dark" and transcript.styles_by_role()["speaker-0"] == dark


async def test_thinking_is_shown_only_in_its_actors_private_pane(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: finished(stage), "the close")
        await pilot.pause()
        view = stage.query_one(StageView)
        thoughts = [r for r in records(session) if r["type"] == "think"]
        assert thoughts
        transcript = "\n".join(view.query_one(Transcript).plain_lines())
        for thought in thoughts:
            assert thought["text"].strip() in view.pane(thought["from"]).thoughts
            assert thought["text"].strip() not in transcript
        assert str(view.pane("alice").border_title).startswith("PRIVATE")


async def test_a_closed_run_opens_in_the_replay_and_escape_comes_back(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        assert stage.check_action("replay", ()) is False
        await wait_for(pilot, lambda: finished(stage), "the close")
        await pilot.pause()
        await pilot.press("o")
        assert isinstance(app.screen, ReplayScreen) and app.screen.run_dir == Path(session.state.run_dir)
        await pilot.press("end")
        assert app.screen.playback.done
        await pilot.press("escape")
        assert app.screen is stage


async def test_every_available_control_is_in_the_command_palette(workspace):
    session = hold_at(session_for(workspace))
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = await held(pilot, session)
        titles = [command.title for command in app.get_system_commands(stage)]
        assert {"Stop", "World event", "Note", "Resume", "Switch theme", "Quit"} <= set(titles)
        assert "Pause" not in titles
        resume = next(c for c in app.get_system_commands(stage) if c.title == "Resume")
        resume.callback()
        await wait_for(pilot, lambda: session.state.status != "paused", "the resume")
        for binding in stage.BINDINGS + app.BINDINGS:
            assert binding.id and binding.tooltip, binding


def spoken(n: int, start: int = 0) -> list:
    from promptdesk.core.record.events import SpeakEvent

    return [SpeakEvent(t=0, **{"from": "alice"}, text=f"Line number {i}.", beat=0) for i in range(start, start + n)]


async def test_scrolled_up_the_transcript_holds_still_and_counts_the_new_lines_until_end():
    from promptdesk.tui.scripted import ScriptedSession

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.screen.query_one(Transcript)
        session.publish(spoken(60))
        await pilot.pause()
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y > 0
        transcript.scroll_to(y=10, animate=False, immediate=True)
        await pilot.pause()
        session.publish(spoken(3, start=60))
        await pilot.pause()
        await pilot.pause()
        assert transcript.scroll_y == 10
        assert "▼ 3 new lines · end to follow" in screen_text(app)
        await pilot.press("end")
        await pilot.pause()
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y and "new lines" not in screen_text(app)
        session.publish(spoken(5, start=63))
        await pilot.pause()
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y and "Line number 67." in screen_text(app)


async def test_scrolling_back_to_the_bottom_follows_again():
    from promptdesk.tui.scripted import ScriptedSession

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.screen.query_one(Transcript)
        session.publish(spoken(60))
        await pilot.pause()
        await pilot.pause()
        transcript.scroll_to(y=5, animate=False, immediate=True)
        session.publish(spoken(1, start=60))
        await pilot.pause()
        assert "▼ 1 new line · end" in screen_text(app)
        transcript.scroll_to(y=transcript.max_scroll_y, animate=False, immediate=True)
        await pilot.pause()
        assert transcript.auto_scroll and transcript.unseen == 0
        session.publish(spoken(4, start=61))
        await pilot.pause()
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y


async def test_the_palette_copies_the_run_folders_path(workspace):
    session = hold_at(session_for(workspace))
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = await held(pilot, session)
        command = next(c for c in app.get_system_commands(stage) if c.title == "Copy the run folder's path")
        command.callback()
        assert app.clipboard == str(Path(session.state.run_dir).resolve())


async def test_a_world_event_past_its_limit_is_refused_on_stage_naming_the_limit(workspace):
    """A page pasted by mistake into the event dialog is not queued for every actor's every request:
    the stage says how long it is and what the limit is, and nothing is recorded."""
    session = hold_at(session_for(workspace))
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await held(pilot, session)
        await pilot.press("e")
        assert isinstance(app.screen, InputModal)
        app.screen.query_one(Input).value = "Thunder. " * 2223
        await pilot.press("enter")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("20,006 characters" in m and "at most 20,000" in m for m in messages), messages
        assert not any("queued" in m for m in messages)
        assert isinstance(app.screen, InputModal), "the dialog stays open, its text there to be shortened"
        assert app.screen.query_one(Input).value == "Thunder. " * 2223
        session.stop()
    assert "Thunder" not in (Path(session.state.run_dir) / "events.jsonl").read_text()


async def test_a_note_past_its_limit_stays_in_its_dialog_and_once_shortened_is_queued(workspace):
    """A note a character too long is refused where it was typed: the dialog keeps it, so that the
    director shortens it rather than pasting it again; shortened, it is queued."""
    session = hold_at(session_for(workspace))
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await held(pilot, session)
        await pilot.press("n")
        field = app.screen.query_one(Input)
        field.value = "w" * 20_001
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, InputModal) and field.value == "w" * 20_001
        field.value = "w" * 20_000
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, InputModal)
        assert any("queued" in n.message for n in app._notifications)
        session.stop()


async def test_a_world_event_sent_after_the_close_is_refused_on_stage_not_queued(workspace):
    session = hold_at(session_for(workspace))
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = await held(pilot, session)
        await pilot.press("e")
        assert isinstance(app.screen, InputModal)
        session.stop()
        await wait_for(pilot, lambda: finished(stage), "the close")
        await pilot.press(*"Too late", "enter")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert "World event not sent: the scene has closed" in messages
        assert not any("queued" in m for m in messages)
        assert "Too late" not in (Path(session.state.run_dir) / "events.jsonl").read_text()


async def test_why_an_actor_failed_is_on_the_system_line_and_notified_once_per_kind():
    from promptdesk.core.record.events import GenericEvent
    from promptdesk.tui.scripted import ScriptedSession

    def failed(slug: str, name: str, reason: str, beat: int) -> GenericEvent:
        return GenericEvent(t=beat, **{"from": "coordinator"}, type="system", text=f"{name} unable to respond",
                            target=slug, reason=reason, beat=beat)

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        session.publish([failed("bob", "Bob", "HTTP 401: invalid x-api-key", 1),
                         failed("alice", "Alice", "HTTP 401: invalid x-api-key", 1),
                         failed("bob", "Bob", "Connection refused (127.0.0.1:9)", 2)])
        await pilot.pause()
        await pilot.pause()
        lines = app.screen.query_one(Transcript).plain_lines()
        assert "[SYSTEM] Bob unable to respond — HTTP 401: invalid x-api-key" in lines
        assert "[SYSTEM] Bob unable to respond — Connection refused (127.0.0.1:9)" in lines
        told = [(n.title, n.message) for n in app._notifications]
        assert told == [("Actor failure (authentication)", "Bob unable to respond: HTTP 401: invalid x-api-key"),
                        ("Actor failure (connection)", "Bob unable to respond: Connection refused (127.0.0.1:9)")]


async def test_a_turn_salvaged_to_silence_is_neither_told_nor_shown_as_a_failure():
    from promptdesk.core.record.events import GenericEvent
    from promptdesk.tui.scripted import ScriptedSession

    silenced = GenericEvent(t=1, **{"from": "coordinator"}, type="system", target="bob", reason="silenced", beat=1,
                            text="Bob silent this turn: no well-formed <speech> after 2 corrections (no <speech>)")
    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        session.publish([silenced])
        await pilot.pause()
        await pilot.pause()
        lines = app.screen.query_one(Transcript).plain_lines()
        assert any(line.startswith("[SYSTEM] Bob silent this turn") and "— silenced" not in line for line in lines)
        assert not [n for n in app._notifications if n.title.startswith("Actor failure")]


def test_failure_kinds_read_as_an_operator_would_name_them():
    from promptdesk.tui.failures import failure_kind

    assert failure_kind("Response timeout") == "timeout"
    assert failure_kind("HTTP 429 rate limited; retry after 20 s") == "rate limit"
    assert failure_kind("HTTP 403 forbidden") == "authentication"
    assert failure_kind("[Errno 111] Connect call failed") == "connection"
    assert failure_kind("HTTP 529 overloaded") == "server error"
    assert failure_kind("the model said nothing") == "other"


async def test_a_broken_stream_retried_takes_back_the_speech_and_thinking_it_had_shown():
    """A `reset` delta (the provider retries a stream that broke mid-way) clears what that actor's
    live speech and thinking pane were showing; the retried text then streams from the start."""
    from promptdesk.core.record.events import DeltaEvent
    from promptdesk.tui.scripted import ScriptedSession
    from promptdesk.tui.widgets.live_speech import LiveSpeech

    def delta(channel: str, text: str) -> DeltaEvent:
        return DeltaEvent(t=1.0, **{"from": "alice"}, channel=channel, text=text, beat=0)

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        session.publish([delta("think", "half a thought"), delta("speech", "Half a sen")])
        await pilot.pause()
        live = app.screen.query_one(LiveSpeech)
        assert live.buffers.get("alice") == "Half a sen"
        session.publish([delta("reset", ""), delta("speech", "Whole sentence.")])
        await pilot.pause()
        assert live.buffers.get("alice") == "Whole sentence."
        assert "half a thought" not in screen_text(app)


async def test_a_world_event_or_note_sent_blank_says_what_to_type_and_sends_nothing():
    from promptdesk.tui.scripted import ScriptedSession

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        for key, what in (("e", "world event"), ("n", "note")):
            await pilot.press(key)
            assert isinstance(app.screen, InputModal)
            await pilot.press("space", "enter")
            await pilot.pause()
            assert isinstance(app.screen, InputModal), "the dialog stays open for the text"
            messages = [n.message for n in app._notifications]
            assert any(f"type the {what} first" in m and "esc" in m for m in messages), messages
            await pilot.press("escape")
        assert session.controls == []


def scripted_app():
    """A console on a scripted session of Alice and Bob: the session, and the app."""
    from promptdesk.tui.scripted import ScriptedSession

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    return session, create_app(session=session)


def burst(app, keys: list[str]) -> None:
    """Keys queued at once, as a terminal's burst is read: no frame in between."""
    from textual import events

    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_two_world_events_typed_in_one_burst_are_both_sent_and_the_stage_stays():
    """Keys a terminal sends faster than a dialog closes (e, text, enter, e, text, enter, as pasted or
    typed ahead) reach the dialog that is still closing: a second enter there must not close the stage
    below it (which left the scene running unseen and its run folder never closed)."""
    session, app = scripted_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        stage = app.screen
        await pilot.press("e")
        assert isinstance(app.screen, InputModal)
        burst(app, [*"Rain", "enter", "e", *"Hail", "enter"])
        await pilot.pause()
        await pilot.pause()
        assert app.screen is stage or isinstance(app.screen, InputModal) and app.screen_stack[-2] is stage
        assert stage in app.screen_stack, "the stage is still there"
        sent = [args for name, args in session.controls if name == "inject_event"]
        assert sent[0] == ("Rain",) and len(sent) <= 2


async def test_keys_typed_after_the_enter_that_closes_a_dialog_act_on_the_stage_below():
    """The keys of a burst that follow the `enter` which sends a world event are the stage's: `e`
    opens the next dialog, and its text and `enter` send a second event; none is typed into the
    closing dialog and lost."""
    session, app = scripted_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        stage = app.screen
        await pilot.press("e")
        burst(app, [*"Rain", "enter", "e", *"Hail", "enter"])
        await wait_for(pilot, lambda: len(session.controls) == 2 and app.screen is stage, "both events")
        assert session.controls == [("inject_event", ("Rain",)), ("inject_event", ("Hail",))]


async def test_keys_typed_after_a_blank_enter_stay_in_the_dialog_that_stays_open():
    """A blank `enter` sends nothing and the dialog stays: the text typed after it in the same burst is
    the dialog's, in order, and the next `enter` sends it."""
    session, app = scripted_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        await pilot.press("e")
        burst(app, ["enter", *"Fog", "enter"])
        await wait_for(pilot, lambda: session.controls, "the event")
        assert session.controls == [("inject_event", ("Fog",))]


async def test_a_note_typed_then_tab_and_enter_in_one_burst_opens_the_whom_list_instead_of_sending():
    """Keys keep their order: `tab` moves to the list of whom the note is for before the `enter` after it
    acts, so that `enter` opens the list; nothing is sent until the operator sends it."""
    session, app = scripted_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        await pilot.press("n")
        assert isinstance(app.screen, InputModal)
        burst(app, [*"hush", "tab", "enter"])
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, InputModal) and app.screen.query_one(Select).expanded
        assert session.controls == []
        await pilot.press("down", "enter")
        app.screen.query_one(Input).focus()
        await pilot.press("enter")
        await pilot.pause()
    assert session.controls == [("add_note", ("hush", "alice"))]


async def test_editing_keys_in_a_burst_act_where_they_were_typed():
    """`backspace` and `ctrl+u` sent with the characters around them edit the text at their place in
    the burst: "hush", backspace, "!" is "hus!"; a line cleared with ctrl+u after an enter is not sent
    with the next one."""
    session, app = scripted_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        await pilot.press("n")
        assert isinstance(app.screen, InputModal)
        burst(app, [*"hush", "backspace", "!", "enter"])
        await wait_for(pilot, lambda: session.controls, "the note")
        assert session.controls == [("add_note", ("hus!", None))]
