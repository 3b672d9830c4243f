"""The console over a long, busy session: its counts against the record, and what it shows as the
transcript grows (found driving a 12-actor, 140-beat scene in tmux)."""

from __future__ import annotations

import asyncio
from collections import Counter
import json
from pathlib import Path

from tui_support import screen_text, session_for, wait_for

from promptdesk.core.record.events import GenericEvent, SpeakEvent
from promptdesk.tui.app import create_app
from promptdesk.tui.stage_state import StateFold
from promptdesk.tui.widgets.wrapped_log import WrappedLog


def test_a_stop_between_beats_with_an_event_queued_counts_the_beats_the_panel_shows(workspace):
    """A world event typed in the pace wait after beat 2, then `s`: the event is recorded at the close
    (numbered 3, the beat that never began) and reaches no one. The Session panel (live and replay) says
    `Beats 3`; `metadata.json`'s `totalBeats` and `transcript.txt`'s duration said 4."""
    session = session_for(workspace)

    def on_event(event) -> None:
        if event.type == "beat_end" and event.beat == 2:
            session.inject_event("A gull crashes through the skylight")
            session.stop()

    session.subscribe(on_event)
    asyncio.run(session.run())
    events = session.recorder.events
    assert [e.type for e in events[-3:]] == ["stop", "event", "close"]
    begun = sum(1 for e in events if e.type == "beat")
    fold = StateFold()
    fold.feed(events)
    run_dir = Path(session.state.run_dir)
    assert begun == 3 and fold.state.beats_played == 3
    assert json.loads((run_dir / "metadata.json").read_text())["totalBeats"] == 3
    assert "- Duration: 3 beats" in (run_dir / "transcript.txt").read_text()


async def test_a_takes_stage_lists_its_keys_once_it_runs():
    """A take's session begins with a `branch` event, never a `start`: the key bar kept the keys of a
    stage not yet running (`s Stop  +- Pace`), without `e World event`, `n Note` and `p Pause`, for as
    long as the take ran unpaused (12 beats of a 12-actor take in tmux), though each of them acted."""
    from promptdesk.core.record.events import GenericEvent
    from promptdesk.tui.app import create_app
    from promptdesk.tui.scripted import ScriptedSession
    from tui_support import screen_text, wait_for

    class Take(ScriptedSession):
        """Set up first (a take rebuilds its actors from the parent's record), then run."""

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.set_up = asyncio.Event()

        async def run(self):
            await self.set_up.wait()
            return await super().run()

    session = Take({"alice": "Alice", "bob": "Bob"})
    app = create_app(session=session)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: app.screen.bridge.worker is not None, "the take's worker")
        for _ in range(5):
            await pilot.pause()
        assert "e World event" not in screen_text(app).splitlines()[-1], "not yet: the take is being set up"
        session.set_up.set()
        await wait_for(pilot, lambda: session.state.status == "running", "the take running")
        session.publish([GenericEvent(t=0.0, **{"from": "operator"}, type="branch", beat=4,
                                      text="Take of parent from beat 4")])
        await wait_for(pilot, lambda: " · live · " in screen_text(app).splitlines()[0], "the title saying live")
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        assert all(key in footer for key in ("s Stop", "e World event", "n Note", "p Pause")), footer


async def test_a_lower_terminal_keeps_the_end_of_every_followed_log_in_view():
    """A closed stage (or a paused one: no line comes to scroll it) made lower, 140x45 to 140x36: the
    transcript and the thinking panes kept their old scroll position, so their last rows (the close, the
    journal lines, the last thought) went below the view, though each still followed its end."""
    from promptdesk.core.record.events import CloseEvent
    from test_tui_append import CAST, beats, staged

    async with staged() as (session, app, pilot):
        await pilot.resize_terminal(140, 45)
        session.publish(beats(0, 40))
        session.publish([CloseEvent(t=40, **{"from": "coordinator"}, beat=40, reason="stop", text="Stopped")])
        await wait_for(pilot, lambda: session.state.status == "closed" and not app.screen.bridge.pending, "the close")
        await pilot.pause()
        await pilot.resize_terminal(140, 36)
        for _ in range(3):
            await pilot.pause()
        logs = list(app.screen.query(WrappedLog))
        assert len(logs) == 1 + len(CAST)
        for log in logs:
            assert log.auto_scroll and log.scroll_y == log.max_scroll_y > 0, type(log).__name__
        assert "Line 39 of bob." in screen_text(app) and "Thought 39 of bob." in screen_text(app)


def test_the_new_lines_marker_says_whole_words_in_a_narrow_pane():
    """Scrolled up in a thinking pane of a 12-actor stage at 140 columns (24 cells inside), 200 lines
    later the marker read `▼ 200 new lines · end to f`: cut mid-word. It says fewer words, whole."""
    log = WrappedLog()
    log.unseen = 200
    assert log.marker(40).text.strip() == "▼ 200 new lines · end to follow"
    assert log.marker(27).text.strip() == "▼ 200 new · end to follow"
    assert log.marker(24).text.strip() == "▼ 200 new · end"
    assert log.marker(12).text.strip() == "▼ 200 new"
    log.unseen = 1
    assert log.marker(40).text.strip() == "▼ 1 new line · end to follow"
    for width in range(8, 40):
        assert len(log.marker(width).text) <= width


async def test_a_resize_while_scrolled_up_keeps_the_line_being_read_in_view():
    """Scrolled up in the transcript of a live scene to an early line, then the terminal resized (140 to
    60 to 200 columns): the view kept its row number, so rows wrapped anew showed other lines (at 200
    columns, beats later than the one being read). The line at the top of the view stays there, still
    held (new lines counted below)."""
    from bisect import bisect_right

    from promptdesk.tui.widgets.transcript import Transcript
    from test_tui_append import CAST, staged

    def beats(first: int, count: int) -> list:
        """Lines that wrap: two to eight rows each, as the terminal narrows."""
        events: list = []
        for n in range(first, first + count):
            events.append(GenericEvent(t=n, **{"from": "coordinator"}, type="beat", text=f"Beat {n}", beat=n))
            events += [SpeakEvent(t=n, **{"from": slug}, beat=n, text=f"Line {n} of {slug}: " + "the lamp needs new "
                                  "glass before the grant runs out, and I say so plainly to all of you " * 2)
                       for slug in CAST]
        return events

    async with staged() as (session, app, pilot):
        await pilot.resize_terminal(140, 45)
        session.publish(beats(0, 40))
        await wait_for(pilot, lambda: not app.screen.bridge.pending, "the lines drawn")
        await pilot.pause()
        transcript = app.screen.query_one(Transcript)
        transcript.focus()
        for _ in range(3):
            await pilot.press("pageup")
        await wait_for(pilot, lambda: not transcript._scroll_animating(), "the scroll up")
        assert not transcript.auto_scroll and 0 < transcript.scroll_y < transcript.max_scroll_y

        def top_line() -> str:
            return transcript.plain_lines()[bisect_right(transcript._ends, int(transcript.scroll_y))]

        reading = top_line()
        for size in ((60, 20), (200, 60), (140, 45)):
            await pilot.resize_terminal(*size)
            for _ in range(3):
                await pilot.pause()
            assert top_line() == reading, size
            assert not transcript.auto_scroll
        session.publish(beats(40, 1))
        await wait_for(pilot, lambda: not app.screen.bridge.pending, "a new beat")
        await pilot.pause()
        assert top_line() == reading and transcript.unseen > 0


def test_the_waiting_rows_name_each_actor_whole_or_marked_as_cut():
    """A slow server keeps twelve actors waiting: the Session panel read `Bram Oyela waiting 5 s`,
    `Dov [Night waiting 5 s`: every name cut at 10 cells, unmarked, with room to spare in the panel."""
    from promptdesk.tui.snapshot import StageState
    from promptdesk.tui.widgets.state_panel import render_state

    cast = {"bram": "Bram Oyelaran", "dov": "Dov [Night] Ashby", "bo": "Bo"}
    state = StageState(format="scene", cast=cast, status="running", slow={"bram": 5.0, "dov": 12.0, "bo": 7.0})
    rows = render_state(state, 32).plain.splitlines()
    assert "  Bram Oyelaran    waiting 5 s" in rows
    assert "  Dov [Night] Ash… waiting 12 s" in rows
    assert "  Bo               waiting 7 s" in rows
    alone = render_state(StageState(format="scene", cast=cast, status="running", slow={"bo": 7.0}), 32)
    assert "  Bo         waiting 7 s" in alone.plain.splitlines(), "as before when every name is short"


async def test_the_palette_shows_a_capitalised_name_in_brackets_as_written(tmp_path):
    """A 12-actor cast with `Dov [Night] Ashby`: the palette listed `Hide thinking: Dov  Ashby` (Textual's
    `escape` leaves a capitalised `[Night]` alone, and its markup reads it as a style). Issue 15's own
    examples, `[Evil]` and `Dr. [Redacted]`, vanished the same way, as did a take's change naming them."""
    import json
    import shutil

    from promptdesk.tui.scripted import ScriptedSession
    from test_tui_untrusted import palette_shows

    cast = {"dov": "Dov [Night] Ashby", "evil": "[Evil]", "doc": "Dr. [Redacted]",
            **{f"p{i}": f"Person {i}" for i in range(9)}}
    for name in ("Dov [Night] Ashby", "[Evil]", "Dr. [Redacted]"):
        await palette_shows(create_app(session=ScriptedSession(dict(cast))), (100, 30), "thinking",
                            "Hide thinking:", f"Hide thinking: {name}")
    fixture = Path(__file__).parent / "fixtures" / "replay-run"
    parent, take = shutil.copytree(fixture, tmp_path / "parent"), shutil.copytree(fixture, tmp_path / "take")
    change = {"event": "[Evil] knocks at the door"}
    (take / "private.json").write_text(json.dumps({"take": {"parent": str(parent), "beat": 1, "change": change}}))
    await palette_shows(create_app(replay=parent), (140, 30), "take", "Take: take", 'world event "[Evil] knocks')


async def test_end_in_a_replay_shows_the_end_of_a_transcript_scrolled_up(workspace):
    """Replaying a long run, the transcript scrolled up while it played, then `end`: the playhead went to
    the end but the transcript stayed where it was, its last row saying `▼ 252 new lines · end to follow`,
    and `end` (the replay's own key) never followed. Seeking (`end`, `home`) shows where it went."""
    from promptdesk.tui.screens.replay import ReplayScreen
    from promptdesk.tui.widgets.transcript import Transcript

    session = session_for(workspace, max_beats=20)
    await session.run()
    app = create_app(replay=Path(session.state.run_dir))
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen) and bool(app.screen.query(Transcript)),
                       "the replay")
        replay = app.screen
        transcript = replay.query_one(Transcript)
        for _ in range(10):
            await pilot.press("b")
        await pilot.pause()
        transcript.focus()
        await pilot.press("pageup", "pageup")
        await wait_for(pilot, lambda: not transcript._scroll_animating(), "the scroll up")
        assert not transcript.auto_scroll
        await pilot.press("end")
        await wait_for(pilot, lambda: replay.playback.done, "the end of the replay")
        await pilot.pause()
        assert transcript.auto_scroll and transcript.scroll_y == transcript.max_scroll_y
        assert "end to follow" not in screen_text(app)
        assert "Scene closed" in screen_text(app)


async def test_the_live_beat_timeline_of_a_long_scene_shows_its_latest_beats():
    """The stage's beat timeline (palette: Beat timeline) past the beats its width holds, 200 beats at
    120 columns: it kept showing beats 0 to about 110, so a long scene's timeline stopped moving. Live,
    it shows the latest beats after a `…`, and its legend says which; the Compare screen's (a whole
    finished run) still starts at beat 0."""
    from promptdesk.tui.widgets.beat_timeline import BeatTimeline
    from test_tui_append import CAST, beats, staged

    async with staged() as (session, app, pilot):
        stage = app.screen
        events = beats(0, 199)
        session.publish(events)
        session.publish([GenericEvent(t=199, **{"from": "coordinator"}, type="beat", text="Beat 199", beat=199),
                         SpeakEvent(t=199, **{"from": "alice"}, beat=199, text="The last line.")])
        await wait_for(pilot, lambda: not stage.bridge.pending, "the beats drawn")
        timeline = stage.query_one(BeatTimeline)
        timeline.remove_class("-hidden")
        await pilot.pause()
        await pilot.pause()
        rows = timeline.render().plain.splitlines()
        width = timeline.content_region.width
        alice = next(row for row in rows if row.startswith("Alice"))
        bob = next(row for row in rows if row.startswith("Bob"))
        assert len(alice) == width and alice.endswith("██") and "…" in alice
        assert bob.endswith("█ "), "Bob has not spoken in beat 199: the last column is the latest beat"
        first = width - len("Alice ") - 1
        assert f"beats {200 - first} to 199" in rows[-1]
        whole = BeatTimeline(CAST, events)
        assert "…" not in whole.render().plain, "a finished run's timeline (Compare) is not cut"


def test_a_turns_row_marks_a_name_it_cuts():
    """A character named past the Turns column's 18 cells was cut there without a mark
    (`Dr. Evangeline Mon  12`), reading as a whole name."""
    from promptdesk.tui.snapshot import StageState
    from promptdesk.tui.widgets.state_panel import render_state

    cast = {"eve": "Dr. Evangeline Montgomery", "bo": "Bo"}
    state = StageState(format="scene", cast=cast, status="running", turns=Counter({"eve": 12, "bo": 3}))
    rows = render_state(state, 32).plain.splitlines()
    assert "  Dr. Evangeline Mo…  12" in rows and "  Bo                   3" in rows
