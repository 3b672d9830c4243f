"""Bulk appends to the live stage: a batch of lines costs the logs one repaint each, never a layout
pass of the screen, however many lines it holds (what keeps `console_append_s` down)."""

from __future__ import annotations

from collections import Counter
from contextlib import asynccontextmanager

from promptdesk.core.record.events import GenericEvent, SpeakEvent, ThinkEvent
from tui_support import screen_text, wait_for

from promptdesk.tui.app import create_app
from promptdesk.tui.scripted import ScriptedSession
from promptdesk.tui.widgets.beat_timeline import BeatTimeline
from promptdesk.tui.widgets.thinking_pane import ThinkingPane, ThoughtLog
from promptdesk.tui.widgets.transcript import Transcript
from promptdesk.tui.widgets.wrapped_log import WrappedLog
from promptdesk.tui.wrap import wrap_runs

CAST = {"alice": "Alice", "bob": "Bob"}
SIZE = (120, 40)


def beats(first: int, count: int) -> list:
    """`count` beats from `first`: a marker, then each actor's thought and line."""
    events: list = []
    for n in range(first, first + count):
        events.append(GenericEvent(t=n, **{"from": "coordinator"}, type="beat", text=f"Beat {n}", beat=n))
        for slug in CAST:
            events.append(ThinkEvent(t=n, **{"from": slug}, beat=n, text=f"Thought {n} of {slug}."))
            events.append(SpeakEvent(t=n, **{"from": slug}, beat=n, text=f"Line {n} of {slug}."))
    return events


@asynccontextmanager
async def staged(session: ScriptedSession | None = None):
    """The live stage of a scripted session (of `CAST`, unless one is given), mounted and settled:
    (session, app, pilot)."""
    session = session or ScriptedSession(CAST, "Append")
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield session, app, pilot


def count_refreshes(widgets, counts: Counter) -> None:
    """Count each widget's `refresh` calls: ("layout", widget) for those asking for a layout pass."""
    for widget in widgets:
        original = widget.refresh

        def refresh(*regions, _original=original, _widget=widget, **options):
            counts["layout" if options.get("layout") else "repaint", type(_widget).__name__] += 1
            return _original(*regions, **options)

        widget.refresh = refresh


async def test_a_batch_of_any_size_costs_the_logs_no_layout_pass_and_a_bounded_number_of_repaints():
    async with staged() as (session, app, pilot):
        stage = app.screen
        transcript = stage.query_one(Transcript)
        counts: Counter = Counter()
        count_refreshes([*stage.query(WrappedLog), stage.query_one(BeatTimeline)], counts)
        per_batch = []
        for first, count in ((0, 5), (5, 200)):
            counts.clear()
            session.publish(beats(first, count))  # one tick: the bridge hands them over as one batch
            await wait_for(pilot, lambda: not stage.bridge.pending, "the batch drawn")
            await pilot.pause()
            assert not [key for key in counts if key[0] == "layout"], f"a batch asked for a layout pass: {counts}"
            per_batch.append(counts["repaint", "Transcript"])
        assert max(per_batch) <= 3, f"transcript repaints grow with the batch: {per_batch}"

        lines = transcript.plain_lines()
        assert [line for line in lines if line.startswith(("Alice", "Bob"))] == \
            [f'{CAST[slug]}  "Line {n} of {slug}."' for n in range(205) for slug in CAST]
        thoughts = stage.query(ThoughtLog).first()
        assert transcript.scroll_y == transcript.max_scroll_y > 0 and thoughts.scroll_y == thoughts.max_scroll_y > 0
        assert "Line 204 of bob." in screen_text(app) and "Thought 204 of alice." in screen_text(app)
        assert transcript.vertical_scrollbar.window_virtual_size == transcript.row_count


async def test_the_hidden_timeline_keeps_only_what_it_draws_and_draws_the_same_once_shown():
    async with staged() as (session, app, pilot):
        stage = app.screen
        events = beats(0, 6)
        session.publish(events)
        await wait_for(pilot, lambda: not stage.bridge.pending, "the batch drawn")
        timeline = stage.query_one(BeatTimeline)
        assert not any(isinstance(event, ThinkEvent) for event in timeline.events)
        assert timeline.render().plain == BeatTimeline(CAST, events).render().plain
        timeline.remove_class("-hidden")
        await pilot.pause()
        assert "█" in screen_text(app)


class Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


async def test_the_heap_is_left_out_of_full_collections_and_collected_once_as_the_scene_closes():
    """While a session is live the heap is frozen; as it closes, what became garbage meanwhile is collected
    at once (never on a later key) and what survives is frozen again, until the console closes."""
    import gc
    import weakref

    async with staged() as (session, app, pilot):
        stage = app.screen
        await wait_for(pilot, lambda: session.state.status == "running", "the session running")
        assert gc.get_freeze_count() > 10_000, "the startup heap is still rescanned by every full collection"
        dropped = Cycle()
        gone = weakref.ref(dropped)
        gc.freeze()  # it survived a beat, as what a run lets go of has
        del dropped
        assert gone() is not None
        session.stop()
        await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the session closed")
        assert gone() is None, "what the run let go of was not collected as it closed"
        assert gc.get_freeze_count() > 10_000, "the survivors are walked again by the next key's collection"
    assert gc.get_freeze_count() == 0, "the console closed without handing the heap back"


async def test_following_the_end_scrolls_at_once_but_never_undoes_a_scroll_being_animated():
    """A batch moves a following log to its new end before the next frame (no frame is drawn at the
    old end); while a scroll up is being animated, a batch leaves it alone and is counted as unseen."""
    async with staged() as (session, app, pilot):
        transcript = app.screen.query_one(Transcript)
        transcript.add([(("Line", ), ("speech", ))] * 200)
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        await pilot.pause()

        transcript.scroll_to(y=0, animate=True, duration=0.5)
        assert app.animator.is_being_animated(transcript, "scroll_y")
        transcript.add([(("More", ), ("speech", ))] * 5)
        await app.animator.wait_for_idle()
        await pilot.pause()
        assert transcript.scroll_y == 0 and not transcript.auto_scroll and transcript.unseen == 5


async def test_a_pane_is_repainted_for_its_subtitle_only_when_the_subtitle_changes():
    async with staged() as (session, app, pilot):
        pane = app.screen.query(ThinkingPane).first()
        assert str(pane.border_subtitle) == "no turn yet"
        counts: Counter = Counter()
        count_refreshes([pane], counts)
        pane.add_thoughts([(0, "First.")])
        assert str(pane.border_subtitle) == "only you see this" and counts["repaint", "ThinkingPane"] == 1
        pane.add_thoughts([(0, "Second.")])
        assert counts["repaint", "ThinkingPane"] == 1, "the same subtitle was set again"


async def test_a_running_scripted_session_settles_the_heap_after_each_publish_as_the_engine_does_between_beats():
    import gc

    session = ScriptedSession(CAST, "Append")
    gc.unfreeze()
    session.publish(beats(0, 1))
    assert gc.get_freeze_count() == 0, "a session that is not running froze the heap"
    async with staged(session) as (session, app, pilot):
        await wait_for(pilot, lambda: session.state.status == "running", "the session running")
        frozen = gc.get_freeze_count()
        session.publish(beats(1, 1))
        assert gc.get_freeze_count() > frozen
        session.stop()
        await wait_for(pilot, lambda: app.screen.bridge.worker.is_finished, "the session closed")
    assert gc.get_freeze_count() == 0, "the console closed without handing the heap back"


async def test_the_console_benchmark_times_every_line_to_the_frame_that_shows_it():
    """`benchmarks.console` on 2,000 lines: every speech line reaches the transcript (it asserts so), and
    its wait for a thousand's frame returns with everything applied, scrolled to the end and drawn."""
    from benchmarks import console

    figures = await console._measure(2_000)
    assert figures["console_append_s"] > 0 and figures["console_growth_ratio"] > 0 and figures["console_key_ms"] > 0

    async with staged() as (session, app, pilot):
        stage = app.screen
        session.publish(beats(0, 300))
        await console.drawn(stage)
        transcript = stage.query_one(Transcript)
        assert not stage.bridge.pending and len(transcript.entries) > 600
        assert transcript.scroll_y == transcript.max_scroll_y > 0
        assert not (stage._dirty_widgets or stage._repaint_required or stage._layout_required)
        assert "Line 299 of bob." in screen_text(app)


async def test_each_log_counts_rows_from_the_same_texts_it_draws():
    """A log counts an entry's rows from `texts(entry)` (no styles built): the texts of its runs."""
    async with staged() as (session, app, pilot):
        session.publish(beats(0, 3))
        await wait_for(pilot, lambda: not app.screen.bridge.pending, "the batch drawn")
        await pilot.pause()
        logs = list(app.screen.query(WrappedLog))
        assert {type(log).__name__ for log in logs} == {"Transcript", "ThoughtLog"}
        for log in logs:
            assert log.entries
            for entry in log.entries:
                assert list(log.texts(entry)) == [text for text, _ in log.runs(entry)]
            assert log.row_count == sum(len(wrap_runs(log.runs(e), log._width)) for e in log.entries)
