"""The console finished: selections that show and say what was copied, speech previews without
headers, a footer that lists only what acts now, the stage's panes and panel per format."""

from __future__ import annotations

from core.record.events import DeltaEvent, SpeakEvent, ThinkEvent
from tui_support import screen_text

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
