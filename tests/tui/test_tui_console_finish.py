"""The console finished: selections that show and say what was copied, speech previews without
headers, a footer that lists only what acts now, the stage's panes and panel per format."""

from __future__ import annotations

import re

import pytest

from promptdesk.core.record.events import DeltaEvent, SpeakEvent, ThinkEvent
from loopback import loopback  # noqa: F401  (fixture)
from tui_support import held, hold_at, screen_text, session_for, wait_for

from promptdesk.tui.app import create_app
from promptdesk.tui.scripted import ScriptedSession
from promptdesk.tui.widgets.state_panel import StatePanel
from promptdesk.tui.widgets.transcript import Transcript

SIZE = (120, 40)


def spoken(n: int) -> list:
    return [SpeakEvent(t=0, **{"from": "alice"}, text=f"Line number {i}.", beat=0) for i in range(n)]


def background_of(app, widget, x: int, y: int):
    """The background colour of the cell at `(x, y)` of `widget` (its own coordinates)."""
    region = widget.content_region
    strip = app.screen._compositor.render_strips()[region.y + y]
    column = 0
    for segment in strip:
        if column <= region.x + x < column + segment.cell_length:
            return segment.style.bgcolor
        column += segment.cell_length
    raise AssertionError("no such cell")


async def test_a_drag_over_the_transcript_is_highlighted_and_the_copy_says_how_much():
    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        session.publish(spoken(5))
        await pilot.pause()
        await pilot.pause()
        transcript = app.screen.query_one(Transcript)
        plain = background_of(app, transcript, 1, 1)
        await pilot.mouse_down(transcript, offset=(2, 1))
        await pilot.hover(transcript, offset=(15, 2))
        await pilot.pause()
        assert background_of(app, transcript, 4, 1) != plain, "not highlighted while dragging"
        await pilot.mouse_up(transcript, offset=(15, 2))
        await pilot.pause()
        assert background_of(app, transcript, 4, 1) != plain, "not highlighted after the drag"
        assert background_of(app, transcript, 1, 1) == plain and background_of(app, transcript, 4, 0) == plain
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == 'ice  "Line number 1."\nAlice  "Line num'
        told = [(n.title, n.message) for n in app._notifications]
        assert ("Copied", "Copied 38 characters (2 lines) to the clipboard") in told


async def test_a_drag_over_a_thinking_pane_is_highlighted_and_confirmed():
    from promptdesk.tui.widgets.thinking_pane import ThoughtLog

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        session.publish([ThinkEvent(t=0, **{"from": "bob"}, text="She knows. Say it first.", beat=0)])
        await pilot.pause()
        await pilot.pause()
        log = app.screen.query_one("#thinking-bob").query_one(ThoughtLog)
        plain = background_of(app, log, 12, 1)
        await pilot.mouse_down(log, offset=(0, 1))
        await pilot.hover(log, offset=(9, 1))
        await pilot.mouse_up(log, offset=(9, 1))
        await pilot.pause()
        assert background_of(app, log, 2, 1) != plain
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "She knows."
        assert "Copied 10 characters to the clipboard" in [n.message for n in app._notifications]


def test_the_speech_preview_shows_words_only_and_fails_closed():
    from promptdesk.tui.widgets.live_speech import spoken_so_far

    assert spoken_so_far('[TONE: measured] "I wanted to') == "I wanted to"
    assert spoken_so_far('[TO: Bob, TONE: x, *folds arms*] *sighs* "Fine.') == "Fine."
    assert spoken_so_far("[TONE: meas") == ""
    assert spoken_so_far("[TO: [Evil] Bob") == ""
    assert spoken_so_far('"Hello," she') == "Hello, she"
    assert spoken_so_far('"Fine." <thinking>my secret') == ""
    assert spoken_so_far("[SILENT]") == ""


async def test_the_streaming_preview_on_stage_hides_the_protocol_header():
    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        session.publish([DeltaEvent(t=1.0, **{"from": "alice"}, channel="speech", text='[TONE: measured] "I wan',
                                    beat=0)])
        await pilot.pause()
        await pilot.pause()
        text = screen_text(app)
        assert "Alice ▸ I wan" in text
        assert "TONE" not in text and "measured" not in text


def footer_line(app) -> str:
    """The key bar's line, every run of spaces made one (the bar spaces its keys as the width allows)."""
    return " ".join(screen_text(app).splitlines()[-1].split())


async def test_at_80_columns_the_footer_lists_only_what_acts_now_each_key_apart(workspace):
    session = hold_at(session_for(workspace, latency=True))
    app = create_app(session=session)
    async with app.run_test(size=(80, 24)) as pilot:
        stage = await held(pilot, session)
        footer = footer_line(app)
        for shown in ("q Quit", "s Stop", "e World event", "n Note", "r Resume", "+- Pace t Theme", "^p palette"):
            assert shown in footer, (shown, footer)
        for hidden in ("Pause", "Replay", "Decide", "Back", "Room"):
            assert hidden not in footer, (hidden, footer)
        session.stop()
        await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")
        await pilot.pause()
        footer = footer_line(app)
        assert "o Replay" in footer and "t Theme" in footer
        for hidden in ("Stop", "World event", "Note", "Resume", "Pace"):
            assert hidden not in footer, (hidden, footer)


async def test_a_key_that_cannot_act_now_says_why(workspace):
    session = hold_at(session_for(workspace, latency=True))
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await held(pilot, session)
        await pilot.press("p", "o", "a")
        await pilot.pause()
        told = [n.message for n in app._notifications]
        assert "Pause: not now, the scene is already paused (r resumes it)." in told
        assert "Replay: not now, the replay opens once the scene has closed." in told
        assert "Decide: not now, a scene never waits for your decision (only a roundtable's escalation does)." \
            in told, "every key that cannot act says why, the decide key on a scene too"
        assert session.state.status == "paused"


async def test_a_roundtable_at_80x24_waits_readably_and_its_dialog_shows_the_recommendation_first(workspace):
    """`Waiting  your decision (a)` whole on one row, `a Decide` in the footer, the recommendation (what
    Enter accepts) on screen without scrolling; answers counted per participant; no PRIVATE panes (no one
    thinks in private) and no silent-beats row (no one is silent in a roundtable)."""
    from promptdesk.tui.formats.escalation_modal import EscalationModal

    session = session_for(workspace, "roundtable-debate.yaml", isolation="a", coordinator="C")
    app = create_app(session=session)
    async with app.run_test(size=(80, 24)) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: isinstance(app.screen, EscalationModal), "the escalation dialog")
        await pilot.pause()
        dialog = screen_text(app)
        recommended = " ".join(app.screen.details["recommendation"].split()[:2])
        assert f"The facilitator recommends: {recommended}" in dialog and "(Enter accepts it)" in dialog
        await pilot.press("escape")
        await pilot.pause()
        text = screen_text(app)
        assert any("Waiting   your decision (a)" in row for row in text.splitlines()), text
        assert "a Decide" in footer_line(app)
        assert "PRIVATE" not in text and "Silent" not in text and "Turns" not in text
        stage.query_one(StatePanel).scroll_end(animate=False)
        await pilot.pause()
        text = screen_text(app)
        assert "Answers given" in text
        assert any(row.split("│")[-2].split() == ["Alice", "3"] for row in text.splitlines() if "Alice  " in row), text
        await pilot.press("a")
        await pilot.press("enter")
        await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")


async def test_a_collaboration_has_no_private_panes_and_no_silent_beats(workspace):
    session = session_for(workspace, "hiking-plan.yaml", isolation="a", coordinator="C")
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished, "the close")
        await pilot.pause()
        text = screen_text(app)
        assert "PRIVATE" not in text and "Silent" not in text
        assert not stage.query("ThinkingPane")
        assert stage.query_one("#speech").region.height > 30, "the transcript takes the room the panes had"


async def test_a_scene_keeps_its_panes_which_say_no_turn_yet_then_only_you_see_this():
    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "never routed" not in text and text.count("no turn yet") == 2
        session.publish([ThinkEvent(t=0, **{"from": "bob"}, text="She knows.", beat=0)])
        await pilot.pause()
        await pilot.pause()
        text = screen_text(app)
        assert text.count("no turn yet") == 1 and text.count("only you see this") == 1
        assert "Silent    0 beats" in text


def test_the_run_folder_breaks_between_names_never_inside_one():
    from promptdesk.tui.widgets.state_panel import path_rows

    rows = path_rows("/tmp/pytest-of-root/pytest-12/runs/roundtable-debate-20261124-000322", 26)
    assert rows == ["/tmp/pytest-of-root/", "pytest-12/runs/roundtable-", "debate-20261124-000322"]
    assert all(len(row) <= 26 for row in rows)
    assert path_rows("runs/the-apology-snapshot", 26) == ["runs/the-apology-snapshot"]


async def test_the_run_folder_on_the_panel_is_not_cut_inside_a_name(workspace):
    session = ScriptedSession({"alice": "Alice"}, run_dir="runs/a-rather-long-scene-name-20261124-000322")
    app = create_app(session=session)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        rows = [row.split("│")[-2].strip() for row in screen_text(app).splitlines() if row.count("│") >= 2]
        start = rows.index("Run folder")
        assert rows[start + 1:start + 3] == ["runs/a-rather-long-scene-", "name-20261124-000322"], rows


def contrast(style) -> float:
    """WCAG contrast ratio of a rendered cell's foreground on its background."""
    def luminance(color) -> float:
        def channel(c: int) -> float:
            c = c / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        r, g, b = color.get_truecolor()
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
    high, low = sorted((luminance(style.color), luminance(style.bgcolor)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def cells_with(app, text: str):
    """The styles of the cells that show `text` (a row may split it into several segments)."""
    return [segment.style for strip in app.screen._compositor.render_strips() if text in strip.text
            for segment in strip if segment.text.strip() and segment.text.strip() in text]


async def test_beat_headings_read_at_4_5_to_1_in_the_light_theme_and_the_dark():
    from promptdesk.core.record.events import GenericEvent

    for theme in ("light", "dark"):
        session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
        app = create_app(session=session, theme=theme)
        async with app.run_test(size=SIZE) as pilot:
            session.publish([GenericEvent(t=0, **{"from": "coordinator"}, type="beat", text="Beat 1", beat=1),
                             ThinkEvent(t=0, **{"from": "bob"}, text="She knows.", beat=1)])
            await pilot.pause()
            await pilot.pause()
            for heading in ("── Beat 1 ──", "· beat 1 ·"):
                styles = cells_with(app, heading)
                assert styles, (theme, heading)
                for style in styles:
                    assert not style.dim and contrast(style) >= 4.5, (theme, heading, style, contrast(style))


async def test_a_world_event_and_a_note_sent_while_paused_show_as_queued_until_the_resume_delivers_them(workspace):
    session = hold_at(session_for(workspace))
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = await held(pilot, session)
        await pilot.press("e", *"The fire alarm", "enter")
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"Slow down", "enter")
        await pilot.pause()
        text = screen_text(app)
        assert "⧗ Queued, delivered after the resume: world event “The fire alarm” · note to everyone “Slow down”" in text
        await pilot.pause()
        assert "Queued" in screen_text(app), "it stays while the scene is paused"
        await pilot.press("r")
        await wait_for(pilot, lambda: "EVENT (from you): The fire alarm" in "\n".join(
            stage.query_one(Transcript).plain_lines()), "the delivery")
        await wait_for(pilot, lambda: "Queued" not in screen_text(app), "the queued line to go")
        stage.bridge.stop()
        await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")


async def test_a_single_call_says_answered_in_the_transcript_the_toast_and_the_panel(workspace):
    from tui_support import run_options

    session = session_for(workspace, "hiking-plan.yaml", isolation="a", coordinator="C")
    app = create_app(session=session, options=run_options(workspace, clock=session.clock, max_beats=2))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        room = app.screen.query_one("#room")
        room.value = "@gpt Name three rivers"
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.stages()) == 2, "the single call's stage")
        single = app.stages()[1]
        await wait_for(pilot, lambda: single.bridge.worker is not None and single.bridge.worker.is_finished, "the answer")
        await pilot.pause()
        assert single.query_one(Transcript).plain_lines()[-1] == "■ Answered: one call, one reply"
        told = [(n.title, n.message) for n in app._notifications if "single-call" in n.message]
        assert len(told) == 1 and told[0][0] == "Single call answered", told
        assert told[0][1].startswith("Answered: one call, one reply. Run folder: ")
        text = screen_text(app)
        assert "Format    single call" in text and "Format    collaborate" not in text


def replay_events(path, rows: list[dict]) -> None:
    import json

    path.mkdir()
    (path / "events.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


START = {"t": 0.0, "from": "coordinator", "type": "start", "text": "The scene begins", "isolation": "b",
         "coordinator": "A", "cast": {"alice": "Alice", "bob": "Bob"},
         "scene": {"name": "x", "title": "X", "format": "scene", "turns": "parallel"}}


async def test_replay_knows_both_choices_before_the_first_event(tmp_path):
    replay_events(tmp_path / "run", [START, {"t": 0.1, "from": "coordinator", "type": "beat", "text": "Beat 0",
                                             "beat": 0}])
    app = create_app(replay=tmp_path / "run")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.screen.playback.shown == 0
        text = screen_text(app)
        assert "Isolation (b) thread per actor" in text and "Coord     A — judge + notes" in text
        assert "?" not in text.split("Session", 1)[1]


async def test_replay_time_leaves_pauses_out_and_a_step_shows_something_each_time(tmp_path):
    def row(t: float, type_: str, **extra) -> dict:
        return {"t": t, "from": extra.pop("from_", "coordinator"), "type": type_, "text": extra.pop("text", ""),
                **extra}

    replay_events(tmp_path / "run", [
        START, row(0.1, "beat", text="Beat 0", beat=0), row(0.2, "spawn", target="alice"),
        row(0.2, "brief", target="alice"), row(0.3, "route", target="alice", beat=0),
        row(0.4, "speak", from_="alice", text="Hello.", beat=0),
        row(1.0, "pause", text="Scene paused by the operator", from_="operator"),
        row(61.0, "resume", text="Scene resumed by the operator", from_="operator"),
        row(61.5, "speak", from_="bob", text="Hi.", beat=0)])
    app = create_app(replay=tmp_path / "run")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert screen.playback.duration == 1.5, "the minute spent paused is not on the time axis"
        await pilot.press(".", ".", ".")
        assert [e.type for e in screen.playback.events[:screen.playback.shown]][-1] == "speak"
        assert screen.playback.shown == 6, "spawn, brief and route are taken along with the speech"
        await pilot.press("right")
        assert screen.playback.playhead == pytest.approx(0.55)
        await pilot.press("end")
        assert "1.5 s of 1.5 s" in screen_text(app)


async def test_question_mark_lists_every_key_of_the_current_screen_from_its_bindings(tmp_path, monkeypatch):
    from promptdesk.tui.screens.help import HelpScreen
    from promptdesk.tui.screens.replay import ReplayScreen
    from promptdesk.tui.screens.stage import StageScreen

    monkeypatch.setenv("PROMPTDESK_KEYMAP", "stage.stop=x")
    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        await pilot.press("?")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for binding in StageScreen.BINDINGS:
            assert binding.description in text, binding.description
        assert re.search(r"\bx +Stop", text) and not re.search(r"\bs +Stop", text), "the remapped key is listed"
        assert "Resume  (not now)" in text and "Pause  (not now)" not in text
        assert re.search(r"\? +Keys", text) and re.search(r"\bt +Theme", text)
        await pilot.press("escape")
        assert isinstance(app.screen, StageScreen)

    replay_events(tmp_path / "run", [START])
    app = create_app(replay=tmp_path / "run")
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.press("?")
        await pilot.pause()
        text = screen_text(app)
        assert "Keys · Replay" in text
        for binding in ReplayScreen.BINDINGS:
            assert binding.description in text, binding.description
        await pilot.press("?")
        assert isinstance(app.screen, ReplayScreen)


async def test_an_actor_waited_on_for_a_while_shows_waiting_seconds_on_the_panel():
    from promptdesk.core.record.events import CallEvent, GenericEvent

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    clock = {"now": 0.0}
    session.now = lambda: clock["now"]
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        session.publish([GenericEvent(t=0.0, **{"from": "coordinator"}, type="beat", text="Beat 0", beat=0),
                         CallEvent(t=1.0, **{"from": "coordinator"}, provider="offline", target="alice", beat=0)])
        clock["now"] = 3.0
        stage = app.screen
        stage.flush()
        stage.refresh_state()
        await pilot.pause()
        assert "waiting" not in screen_text(app), "a wait of 3 s is not slow"
        clock["now"] = 12.4
        stage.refresh_state()
        await pilot.pause()
        text = screen_text(app)
        assert "Bob        waiting 12 s" in text and "Alice      waiting" not in text
        session.publish([DeltaEvent(t=12.5, **{"from": "bob"}, channel="speech", text='"Fi', beat=0)])
        stage.flush()
        stage.refresh_state()
        await pilot.pause()
        assert "waiting" not in screen_text(app), "answering is not waiting"


async def test_a_remapped_key_that_cannot_act_says_why_and_its_old_key_says_nothing(monkeypatch):
    monkeypatch.setenv("PROMPTDESK_KEYMAP", "stage.resume=y")
    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        await pilot.press("r")
        await pilot.pause()
        assert not [n for n in app._notifications if n.title == "Not now"]
        await pilot.press("y")
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["Resume: not now, the scene is not paused."]


async def test_a_sequential_turn_waited_on_for_a_while_shows_its_actor_waiting():
    """A sequential beat asks one actor (the beat's target): a slow answer from it reads as a wait too."""
    from promptdesk.core.record.events import GenericEvent

    session = ScriptedSession({"alice": "Alice", "bob": "Bob"})
    session.state.turns_mode = "sequential"
    clock = {"now": 0.0}
    session.now = lambda: clock["now"]
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "running", "the start")
        session.publish([GenericEvent(t=1.0, **{"from": "coordinator"}, type="beat", target="bob", text="Turn 0: Bob",
                                      beat=0)])
        stage = app.screen
        stage.flush()
        clock["now"] = 9.2
        stage.refresh_state()
        await pilot.pause()
        text = screen_text(app)
        assert "Bob        waiting 8 s" in text and "Alice      waiting" not in text
        session.publish([SpeakEvent(t=9.5, **{"from": "bob"}, text="Here.", beat=0)])
        stage.flush()
        stage.refresh_state()
        await pilot.pause()
        assert "waiting" not in screen_text(app), "an answered turn is not waited on"


async def test_quitting_while_the_journals_are_written_asks_and_stops_them(workspace, loopback):
    """`q` in the journal step (the title says `closing`) is not a silent wait for slow journal calls:
    it asks; yes stops the step (a `stop` event says so), closes the run folder and quits."""
    import json
    from pathlib import Path

    from helpers import served_scene
    from loopback import Reply
    from tui_support import session_for

    from promptdesk.tui.widgets.confirm_modal import ConfirmModal

    line = Reply(text='<thinking>Go on.</thinking><speech>[TONE: calm] "Fine."</speech>')
    loopback.default = lambda seen: Reply(text="An entry.", delay_s=30) if "journal entry" in str(seen.body) else line
    served_scene(workspace / "scenes", loopback)
    session = session_for(workspace, "scene.yaml")
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: session.state.status == "closing", "the journal step", limit=20000)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), "the question")
        assert "journal" in screen_text(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, "the quit", limit=20000)
    run = Path(session.state.run_dir)
    records = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    assert any(r["type"] == "stop" and "Journal step stopped" in r["text"] for r in records)
    assert (run / "metadata.json").is_file() and not (run / ".lock").exists()


async def test_the_keys_of_the_wizards_first_step_say_a_letter_is_typed_there_as_it_is(tmp_path):
    """On the wizard's first step a letter goes to the scene's path (a name may start with `t` or `q`):
    the help says so for `t` and `q`, and says what does act (`^q`); what it lists as acting acts."""
    from promptdesk.tui.screens.help import HelpScreen

    app = create_app(cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("?")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        text = screen_text(app)
        theme_row = re.search(r"\bt +Theme.*", text).group(0)
        assert "(not now)" in theme_row and not re.search(r"(?:/|\s)q +Quit", text), text
        assert re.search(r"\^q +Quit", text)
        await pilot.press("escape")
        await pilot.pause()
        theme = app.theme
        await pilot.press("t")
        await pilot.pause()
        assert app.theme == theme, "the help said t does not switch the theme here"
