"""A crowd's beat as users see it: isolation (b) through the real OpenAI SDK to a loopback model.

The town meeting (`benchmarks.crowd`) with 20 and 50 actors, parallel turns, isolation (b), every
actor on the `openai` provider with `send_ahead: true` (`promptdesk.core.providers.early`: each
actor's next request opened as soon as its turn is done) whose server is `benchmarks.model_server` (its own process, each call
U(0.4, 1.0) s drawn from a seeded RNG, realistic replies streamed). Beat 0 (one opener) is left
out; beats 1-`BEATS` are measured, each with the next beat's mark after it.

- `crowd_sdk_ratio_20` (goal <= 1.03), `crowd_sdk_ratio_50` (<= 1.05): the sum of beat spans (a
  beat's `beat` event to the next one's, as a subscriber sees them) over the sum of each beat's
  slowest call as the model drew it (the latency-only bound: what a beat would take if requests
  left, arrived and were answered in no time).
- `crowd_sdk_fanout_ms_50` (<= 25): per beat, from the first request sent to the last request's body
  received whole; the median beat. A request is sent when its headers reach the server, or, for one
  opened ahead of its turn (`promptdesk.core.providers.early`: its headers and the body as far as the
  thread goes arrived during the beat before), when the last chunk of its body, what only the turn
  knew, begins to arrive.
- `crowd_sdk_between_ms_50` (<= 10): per beat, from the server's sending the beat's last reply to the
  next beat's first request sent (the engine's time between beats); the median beat.
- `crowd_sdk_cpu_ms_per_beat_50`: this process's CPU time over the measured beats, per beat (the SDK
  included): a figure that other work on a shared machine moves much less than wall time.

`REPEATS` scenes per size (different seeds), medians kept.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.crowd import write_crowd
from benchmarks.long_scene import Endless
from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.casting.scene_file import scene_from_dict
from promptdesk.core.clock import RealClock

ROOT = Path(__file__).resolve().parent.parent
BEATS = 10
REPEATS = 3
KEY = "sk-bench-not-a-real-key"


class ModelServer:
    """`benchmarks.model_server` in a child process (a context manager); `requests` once it is closed."""

    def __init__(self, seed: int, latency: tuple[float, float] | None = None) -> None:
        self.seed, self.latency = seed, latency
        self.requests: list[dict] = []

    def __enter__(self) -> ModelServer:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        bounds = [str(b) for b in self.latency] if self.latency else []
        self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.model_server", str(self.seed), *bounds], cwd=ROOT,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())  # type: ignore[union-attr]
        return self

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc: object) -> None:
        out, _ = self.proc.communicate("", timeout=30)
        self.requests = json.loads(out.strip().splitlines()[-1])


def crowd_sdk_scene(slugs: list[str], beats: int, base_url: str):
    """The town meeting of `slugs` on the openai provider at `base_url`, `beats` beats long."""
    return scene_from_dict({
        "name": "crowd-sdk", "characters": slugs, "turns": "parallel", "setting": "The town hall",
        "prompt": "Residents argue about the new road.", "goal": "They agree on a route.",
        "limits": {"max_beats": beats, "soft_cap_per_character": 10 * beats, "hard_cap_per_character": 20 * beats,
                   "stall_beats": beats},
        "provider": {"name": "openai", "model": "gpt-4.1-mini", "base_url": base_url,
                     "max_retries": 0, "send_ahead": True}})


async def _play(scene, folder: Path):
    """Play `scene` to its last beat; each beat's mark (monotonic clock) and the CPU time at it."""
    options = RunOptions(isolation="b", coordinator="C", seed=1, runs_root=folder / "runs",
                         characters_dirs=[folder / "characters"], write_character_journals=False)
    session = build_session(scene, options)
    session.coordinator = Endless()
    session.clock = RealClock()
    marks: dict[int, tuple[float, float]] = {}

    def mark(event) -> None:
        if event.type == "beat" and event.beat is not None:
            marks.setdefault(event.beat, (time.monotonic(), time.process_time()))

    session.subscribe(mark)
    await session.run()
    for actor in session.actors.values():
        close = getattr(actor.provider, "aclose", None)
        if close is not None:
            await close()
    return session, marks


def figures(marks: dict[int, tuple[float, float]], requests: list[dict], beats: int) -> dict[str, float]:
    """One scene's figures from its beat marks and the server's request timings (see the module
    docstring); a request belongs to the beat whose span it was sent in (`sent`)."""
    spans = bound = 0.0
    fanout, between = [], []
    for beat in range(1, beats + 1):
        start, end = marks[beat][0], marks[beat + 1][0]
        mine = [r for r in requests if start <= r["sent"] < end]
        following = [r["sent"] for r in requests if r["sent"] >= end]
        if not mine:
            raise ValueError(f"beat {beat} sent no request")
        spans += end - start
        bound += max(r["latency"] for r in mine)
        fanout.append(max(r["body"] for r in mine) - min(r["sent"] for r in mine))
        if following:
            between.append(min(following) - max(r["done"] for r in mine))
    cpu = (marks[beats + 1][1] - marks[1][1]) / beats
    return {"ratio": spans / bound, "fanout_ms": statistics.median(fanout) * 1000,
            "between_ms": statistics.median(between) * 1000 if between else float("nan"), "cpu_ms": cpu * 1000}


def measure(size: int, seed: int, beats: int = BEATS, latency: tuple[float, float] | None = None) -> dict[str, float]:
    """One scene of `size` actors, `beats` measured beats, the server seeded with `seed` (its
    latencies U(0.4, 1.0) s unless `latency` says otherwise)."""
    os.environ.setdefault("OPENAI_API_KEY", KEY)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        slugs = write_crowd(folder / "characters", size)
        with ModelServer(seed, latency) as server:
            _, marks = asyncio.run(_play(crowd_sdk_scene(slugs, beats + 2, server.url()), folder))
        return figures(marks, server.requests, beats)


def crowd(size: int, repeats: int = REPEATS) -> dict[str, float]:
    """Medians over `repeats` scenes of `size` actors."""
    runs = [measure(size, seed) for seed in range(1, repeats + 1)]
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def run() -> dict[str, float]:
    twenty, fifty = crowd(20), crowd(50)
    return {"crowd_sdk_ratio_20": twenty["ratio"], "crowd_sdk_ratio_50": fifty["ratio"],
            "crowd_sdk_fanout_ms_50": fifty["fanout_ms"], "crowd_sdk_between_ms_50": fifty["between_ms"],
            "crowd_sdk_cpu_ms_per_beat_50": fifty["cpu_ms"], "crowd_sdk_fanout_ms_20": twenty["fanout_ms"]}


if __name__ == "__main__":
    if sys.argv[1:2] == ["one"]:
        print(json.dumps(measure(int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1)))
    else:
        for name, value in run().items():
            print(f"{name}: {value:.4f}")
