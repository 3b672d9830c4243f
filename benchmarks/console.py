"""Console benchmark: 10,000 transcript lines and 10,000 thinking lines through the real event path.

Events are published the way the engine publishes them (synchronously, a beat at a time, the heap
settled after each beat as the engine settles it at its safe point) into the real `SessionBridge`,
whose coalesced messages the real `StageScreen` renders into the real widgets, headless at 120x40.
Reported:

- `console_append_s`: seconds for all 20,000 lines, a thousand of each kind at a time: from the
  first publish of a thousand to the frame that shows its last line (every event applied, every
  log scrolled to its end, nothing left to redraw), summed. The collector's full pass between
  thousands counts; what the harness itself waits for does not (Textual's test pilot detects an
  idle app by sleeping 20 ms at a time, and a simulated key press waits for idle twice);
- `console_growth_ratio`: cost (CPU seconds, so that idle frame waits do not count) of the last
  thousand lines of each kind over the first thousand (flat is 1.0; one widget per line would
  grow quadratically). As `timeit` does, the garbage collector is paused while a thousand is
  timed and run between thousands (inside `console_append_s`), so that a collection landing in
  one thousand rather than another does not pass for growth;
- `console_key_ms`: how long a key press (pause) takes to be acted on while lines stream in.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time

from promptdesk.core.record.events import GenericEvent, SpeakEvent, ThinkEvent

LINES = int(os.environ.get("BENCH_LINES", 10_000))
"""Lines of each kind (transcript, thinking); `BENCH_LINES` overrides it for a longer soak."""
CHUNK = 1_000
CAST = {"alice": "Alice", "bob": "Bob", "charlie": "Charlie", "dana": "Dana"}
SIZE = (120, 40)


def _beat(n: int) -> list:
    """One parallel beat's worth of events: a marker, then each actor's thinking and speech."""
    slugs, size = list(CAST), len(CAST)
    events: list = [GenericEvent(t=n * 0.5, **{"from": "coordinator"}, type="beat", text=f"Beat {n}", beat=n)]
    for i in range(size):
        slug, other = slugs[(n + i) % size], slugs[(n + i + 1) % size]
        events.append(ThinkEvent(t=n * 0.5, **{"from": slug}, beat=n,
                                 text=f"Thought {n}.{i}: what {CAST[other]} said landed harder "
                                      f"than I'd like; I should keep calm and [not] show it."))
        events.append(SpeakEvent(t=n * 0.5, **{"from": slug}, beat=n, action="speak", target=other,
                                 tone="measured", nonverbal="leans forward",
                                 text=f"Line {n}.{i}: we should talk about the deadline [whispers] honestly."))
    return events


async def _measure(lines: int = LINES) -> dict[str, float]:
    from promptdesk.tui.app import create_app
    from promptdesk.tui.scripted import ScriptedSession
    from promptdesk.tui.widgets.transcript import Transcript

    session = ScriptedSession(CAST, "Benchmark")
    app = create_app(session=session)
    chunk_times: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        transcript = app.screen.query_one(Transcript)
        beats_per_chunk = CHUNK // len(CAST)
        total = 0.0
        beat = 0
        key_ms = 0.0
        for chunk in range(lines // CHUNK):
            started = time.perf_counter()
            gc.collect()
            gc.disable()
            try:
                t0 = time.process_time()
                for step in range(beats_per_chunk):
                    session.publish(_beat(beat))
                    beat += 1
                    await asyncio.sleep(0)
                    if chunk == lines // CHUNK // 2 and step == beats_per_chunk // 2:
                        waited = time.perf_counter()
                        key_ms = await _key_latency(pilot, session)
                        started += time.perf_counter() - waited
                await drawn(app.screen)
                chunk_times.append(time.process_time() - t0)
                total += time.perf_counter() - started
            finally:
                gc.enable()
            await pilot.pause()
        shown = sum(1 for line in transcript.plain_lines() if line.startswith(tuple(CAST.values())))
        session.stop()
        await pilot.pause()
    assert shown == lines, f"only {shown} speech lines reached the transcript"
    return {"console_append_s": round(total, 4),
            "console_growth_ratio": round(chunk_times[-1] / chunk_times[0], 4),
            "console_key_ms": round(key_ms, 2)}


async def drawn(stage) -> None:
    """Return at the frame that shows everything published so far: the bridge drained, no batch
    waiting for its frame window, and the screen with nothing left to lay out, scroll or repaint
    once its after-refresh callbacks (a log's scroll to its end) have run."""
    while True:
        if not stage.bridge.pending and stage._flush_timer is None:
            drawn = asyncio.Event()
            stage.call_after_refresh(drawn.set)
            await drawn.wait()
            if not (stage.bridge.pending or stage._flush_timer or stage._dirty_widgets or stage._layout_required
                    or stage._repaint_required or stage._scroll_required):
                return
        else:
            await asyncio.sleep(0.001)


async def _key_latency(pilot, session) -> float:
    """Milliseconds from pressing `p` to the pause reaching the session (then resume)."""
    reached: list[float] = []
    pause = session.pause
    session.pause = lambda: (reached.append(time.perf_counter()), pause())
    started = time.perf_counter()
    press = asyncio.ensure_future(pilot.press("p"))
    while not reached:
        await asyncio.sleep(0)
    await press
    session.pause = pause
    await pilot.press("r")
    return (reached[0] - started) * 1000


def run() -> dict[str, float]:
    """Run the benchmark once and return its figures."""
    return asyncio.run(_measure())


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
