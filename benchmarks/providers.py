"""Provider figures, with the real SDKs against the loopback server of `tests/loopback.py`.

- `cache_saving_b`: the run's `cache_saving` from metadata.json for a 20-beat scene in isolation (b)
  on Anthropic, where the loopback server bills caching like the API (prefixes end at
  `cache_control` marks; under the model's minimum nothing is cached) and every reply is a
  realistic ~300 tokens (a thought of about 280). The share of the input's price that caching
  saved: each request carries its actor's last thought once, and that part (with the beat heading
  and the ask after it) is never cached, so the share is bounded by the size of the thread it re-sends.
- `cache_input_usd_b`: what the same run paid for its input (cache writes and reads included), in
  US dollars by the price table: the figure the share is a share of.
- `beat0_ratio` (goal <= 1.05): beat 0's wall time (its `beat` event to the next beat's) over its
  slowest call (the `call` event's latency), for a 3-actor Anthropic scene whose replies take
  0.5 s, measured in a fresh interpreter so the SDK import is counted wherever it happens.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

KEY = "sk-bench-not-a-real-key"


def _reply(recorded) -> object:
    from loopback import Reply

    tail = json.dumps(recorded.body["messages"][-1])[-60:]
    thought = f"I weigh what was said at {tail}. " * 12
    return Reply(text=f"<thinking>{thought}</thinking>\n<speech>[TONE: measured] \"I hear you, and I want to go "
                      f"through it once more, slowly. {tail}\"</speech>", delay_s=getattr(_reply, "delay_s", 0.0))


async def _scene_run(tmp: Path, max_beats: int, delay_s: float = 0.0):
    from promptdesk.core.casting.scene_file import scene_from_dict
    from promptdesk.core.casting.build import RunOptions, build_session
    from loopback import LoopbackServer

    _reply.delay_s = delay_s  # type: ignore[attr-defined]
    with LoopbackServer(_reply) as server:
        spec = {"provider": "anthropic", "model": "claude-sonnet-4-6", "base_url": server.url(), "max_retries": 0}
        scene = scene_from_dict({
            "name": "bench-cache", "characters": ["alice", "bob", "charlie"], "turns": "parallel",
            "setting": "A meeting room", "prompt": "Three colleagues go over a missed deadline.",
            "goal": "They agree on a plan.", "cast": {s: dict(spec) for s in ("alice", "bob", "charlie")},
            "limits": {"max_beats": max_beats, "soft_cap_per_character": 200, "hard_cap_per_character": 300,
                       "stall_beats": 50}})
        options = RunOptions(isolation="b", coordinator="C", seed=1, runs_root=tmp,
                             characters_dirs=[ROOT / "characters"], write_character_journals=False)
        session = build_session(scene, options)
        await session.run()
        return session


def cache_saving_b(beats: int = 20) -> dict[str, float]:
    """The run's share of input cost saved by caching, and its input cost, 20 beats, isolation (b)."""
    os.environ.setdefault("ANTHROPIC_API_KEY", KEY)
    with tempfile.TemporaryDirectory() as tmp:
        session = asyncio.run(_scene_run(Path(tmp), beats))
        meta = json.loads((session.recorder.run_dir / "metadata.json").read_text())
        _, paid = input_cost(session.recorder.events)
        return {"cache_saving_b": float(meta["cache_saving"]["run"]), "cache_input_usd_b": round(paid, 4)}


def input_cost(events) -> tuple[float, float]:
    """What a run's input would cost uncached, and what it cost, by the price table (US dollars)."""
    from promptdesk.core.providers.base import Usage
    from promptdesk.core.providers.pricing import input_costs

    costs = [input_costs(e.provider, e.model, Usage(input_tokens=e.input_tokens, cache_write_tokens=e.cache_write_tokens,
                                                    cache_read_tokens=e.cache_read_tokens))
             for e in events if e.type == "call"]
    return sum(c[0] for c in costs), sum(c[1] for c in costs)


def _beat0() -> float:
    """In this (fresh) interpreter: beat 0's wall time over its slowest call."""
    os.environ.setdefault("ANTHROPIC_API_KEY", KEY)
    with tempfile.TemporaryDirectory() as tmp:
        session = asyncio.run(_scene_run(Path(tmp), 2, delay_s=0.5))
        events = session.recorder.events
        beats = [e for e in events if e.type == "beat"]
        end = beats[1].t if len(beats) > 1 else next(e.t for e in events if e.type == "close")
        slowest = max(e.latency_s for e in events if e.type == "call" and e.beat == 0)
        return (end - beats[0].t) / slowest


def beat0_ratio() -> float:
    """`_beat0` in a fresh interpreter, so that no SDK is imported yet."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", "from benchmarks.providers import _beat0; print(_beat0())"],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def run() -> dict[str, float]:
    return {"beat0_ratio": beat0_ratio(), **cache_saving_b()}


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name}: {value:.4f}")
