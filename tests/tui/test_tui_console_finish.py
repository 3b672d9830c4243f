"""The console finished: selections that show and say what was copied, speech previews without
headers, a footer that lists only what acts now, the stage's panes and panel per format."""

from __future__ import annotations

from core.record.events import DeltaEvent, SpeakEvent, ThinkEvent
from tui_support import screen_text, session_for, wait_for

from tui.app import create_app
from tui.scripted import ScriptedSession
from tui.widgets.transcript import Transcript

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
    from tui.widgets.thinking_pane import ThoughtLog

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
    from tui.widgets.live_speech import spoken_so_far

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
    return screen_text(app).splitlines()[-1]


def hold_at(session, beat: int = 1):
    """Pause the scene the moment `beat` starts (a fixed point)."""
    def on_event(event) -> None:
        if event.type == "beat" and event.beat == beat and session.state.status == "running":
            session.pause()
    session.subscribe(on_event)
    return session


async def held(pilot, session):
    await wait_for(pilot, lambda: session.state.status == "paused" and not session._tasks, "the pause to hold")
    stage = pilot.app.screen
    stage.flush()
    stage.refresh_state()
    await pilot.pause()
    return stage


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
        assert not any(m.startswith("Decide") for m in told), "a scene has no decisions to speak of"
        assert session.state.status == "paused"
