"""A 500-beat offline scene in isolation (b): does the engine stay flat, and how big is the record?

- `engine_growth_ratio` (goal <= 1.3): engine milliseconds per recorded event over beats 450-499
  divided by the same over beats 1-50. Engine time of a beat is its wall time (from its `beat`
  mark to the next one, on a real clock) minus the time spent inside the provider's `complete`.
- `record_mb_500` (goal < 40): the run folder's size in MB after the scene.

The improviser closes a scene by itself after a dozen beats; here the coordinator never judges a
close (`Endless`), so the scene runs to `max_beats`. Everything else is the ordinary engine.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from benchmarks.engine import TimedProvider, _scene
from promptdesk.core.engine.coordinator import CONTINUE, RuleCoordinator
from promptdesk.core.casting.build import RunOptions, build_session

ROOT = Path(__file__).resolve().parent.parent
BEATS = 500


class Endless(RuleCoordinator):
    """Role C that never closes the scene: the benchmark wants every one of its beats."""

    async def decide(self, view, ask=None, warn=None):
        return CONTINUE


async def _long_run(out: Path, beats: int):
    scene = _scene(None, beats)
    limits = scene.limits.model_copy(update={"soft_cap_per_character": 10 * beats, "hard_cap_per_character": 20 * beats,
                                             "stall_beats": beats})
    scene = scene.model_copy(update={"characters": ["alice", "bob", "charlie"], "limits": limits})
    options = RunOptions(isolation="b", coordinator="C", seed=1, runs_root=out,
                         characters_dirs=[ROOT / "characters"], write_character_journals=False)
    session = build_session(scene, options)
    session.coordinator = Endless()
    timed = TimedProvider(next(iter(session.actors.values())).provider)
    for actor in session.actors.values():
        actor.provider = timed
    marks: dict[int, float] = {}
    session.subscribe(lambda e: marks.setdefault(e.beat, time.perf_counter()) if e.type == "beat" else None)
    await session.run()
    return session, timed, marks


def _window_ms_per_event(session, timed, marks, first: int, last: int) -> float:
    engine_s, events = 0.0, 0
    for beat in range(first, last + 1):
        if beat + 1 not in marks:
            break
        provider_s = sum(d for b, d in timed.calls if b == beat)
        engine_s += marks[beat + 1] - marks[beat] - provider_s
        events += sum(1 for e in session.recorder.events if e.beat == beat)
    return engine_s * 1000 / max(1, events)


def measure(beats: int = BEATS) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        session, timed, marks = asyncio.run(_long_run(Path(tmp), beats))
        size = sum(p.stat().st_size for p in session.recorder.run_dir.rglob("*") if p.is_file())
        early = _window_ms_per_event(session, timed, marks, 1, 50)
        late = _window_ms_per_event(session, timed, marks, beats - 50, beats - 2)
        return {"engine_growth_ratio": late / early, "engine_ms_per_event_1_50": early,
                "engine_ms_per_event_450_500": late, "record_mb_500": size / 1_000_000,
                "beats_played_500": float(session.state.beat + 1)}


def run() -> dict[str, float]:
    return measure()


if __name__ == "__main__":
    import sys

    for name, value in measure(int(sys.argv[1]) if len(sys.argv) > 1 else BEATS).items():
        print(f"{name}: {value:.4f}")
