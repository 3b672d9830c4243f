"""Engine figures: how close a parallel beat comes to its slowest actor, and the engine's own
cost per recorded event (parse, record, route), both on the offline improviser, real clock (a run
on the improviser alone would otherwise be on simulated time, where a call costs no wall time and a
beat's recorded duration is simulated seconds).

- `beat_overhead_ratio`: over 50 beats of 5 actors with simulated latencies, the sum of beat
  durations divided by the sum of each beat's slowest call (measured around `complete`).
- `engine_ms_per_event`: a scene with no simulated latency; wall time minus time spent inside
  the provider, divided by the number of events recorded.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from promptdesk.core.clock import RealClock
from promptdesk.core.providers.base import Provider
from promptdesk.core.casting.scene_file import scene_from_dict
from promptdesk.core.casting.build import RunOptions, build_session

ROOT = Path(__file__).resolve().parent.parent
CAST = ["alice", "bob", "charlie", "maria-stern", "sam-reed"]


class TimedProvider(Provider):
    """Measures wall time spent inside another provider's `complete`, per call."""

    def __init__(self, inner: Provider) -> None:
        self.inner, self.name, self.model = inner, inner.name, inner.model
        self.calls: list[tuple[int | None, float]] = []
        self.purposes: list[str] = []

    def prepare(self) -> None:
        self.inner.prepare()

    async def complete(self, request, on_delta=None, on_reset=None):
        started = time.perf_counter()
        try:
            return await self.inner.complete(request, on_delta, on_reset)
        finally:
            self.calls.append((request.beat, time.perf_counter() - started))
            self.purposes.append(request.purpose)


def _scene(latency: tuple[int, int] | None, max_beats: int):
    return scene_from_dict({
        "name": "bench", "characters": CAST, "turns": "parallel", "setting": "A long meeting room",
        "prompt": "Five colleagues argue about a missed deadline.", "goal": "They agree on a plan.",
        "limits": {"max_beats": max_beats, "soft_cap_per_character": 200, "hard_cap_per_character": 300,
                   "stall_beats": 50},
        "provider": {"name": "offline", "latency_ms": list(latency) if latency else None}})


async def _run(scene, seed: int, out: Path):
    options = RunOptions(isolation="b", coordinator="C", seed=seed, runs_root=out, clock=RealClock(),
                         characters_dirs=[ROOT / "characters"], write_character_journals=False)
    session = build_session(scene, options)
    timed = {}
    for actor in session.actors.values():
        timed.setdefault(id(actor.provider), TimedProvider(actor.provider))
        actor.provider = timed[id(actor.provider)]
    started = time.perf_counter()
    await session.run()
    return session, list(timed.values())[0], time.perf_counter() - started


def beat_overhead_ratio(beats_wanted: int = 50, latency=(100, 600)) -> float:
    """Sum of beat durations over sum of slowest calls, for `beats_wanted` full-cast beats.

    Only turn calls count: the journals written at the close carry the last beat's number but are
    made after its span ends."""
    spent = slowest = 0.0
    counted, seed = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        while counted < beats_wanted:
            session, timed, _ = asyncio.run(_run(_scene(latency, beats_wanted + 1), seed, Path(tmp)))
            events = session.recorder.events
            for beat in range(1, session.state.beat + 1):
                in_beat = [e for e in events if e.beat == beat and e.type in ("beat", "speak", "route", "system")]
                calls = [d for (b, d), purpose in zip(timed.calls, timed.purposes)
                         if b == beat and purpose == "turn"]
                if len(calls) < len(CAST) or counted >= beats_wanted:
                    continue
                spent += in_beat[-1].t - in_beat[0].t
                slowest += max(calls)
                counted += 1
            seed += 1
    return spent / slowest


def engine_ms_per_event(max_beats: int = 50) -> float:
    """Engine milliseconds per recorded event, provider time excluded."""
    with tempfile.TemporaryDirectory() as tmp:
        session, timed, wall = asyncio.run(_run(_scene(None, max_beats), 1, Path(tmp)))
        provider_s = sum(d for _, d in timed.calls)
        return (wall - provider_s) * 1000 / len(session.recorder.events)


def run() -> dict[str, float]:
    return {"beat_overhead_ratio": beat_overhead_ratio(), "engine_ms_per_event": engine_ms_per_event()}
