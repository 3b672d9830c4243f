"""Sweep throughput: how many runs per minute one process sustains, and its peak memory.

- `sweep_runs_per_min` / `sweep_peak_mb`: 200 runs of The Apology on the offline improviser (no
  simulated latency) at concurrency 32.
- `sweep_loopback_runs_per_min` / `sweep_loopback_peak_mb`: 40 runs at concurrency 16 through the
  real Anthropic SDK against the loopback server (tests/loopback.py), each reply delayed 50 ms.

Each scenario runs in a child process so that its peak resident memory is its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = {"offline": (100, 32), "loopback": (20, 16)}
"""Scenario: seeds per isolation (two isolations, coordinator C) and concurrency."""


def _scene(folder: Path, cast: dict | None) -> Path:
    data = yaml.safe_load((ROOT / "scenes" / "the-apology.yaml").read_text())
    data["provider"] = {"name": "offline", "latency_ms": None}
    if cast:
        data["cast"] = cast
    path = folder / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def measure(kind: str) -> dict[str, float]:
    """Run one scenario in this process and return runs per minute."""
    from promptdesk.core.experiments.sweep import Sweep, SweepPlan
    seeds, concurrency = SCENARIOS[kind]
    with tempfile.TemporaryDirectory(prefix="promptdesk-bench-") as tmp:
        folder, server = Path(tmp), None
        cast = None
        if kind == "loopback":
            sys.path.insert(0, str(ROOT / "tests"))
            from loopback import LoopbackServer, Reply
            os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench-not-a-key")
            line = '<thinking>Keep it short.</thinking>\n<speech>[TO: Bob] "Let us get on with it."</speech>'
            server = LoopbackServer(Reply(text=line, delay_s=0.05)).__enter__()
            cast = {slug: {"provider": "anthropic", "model": "claude-haiku-4-5", "base_url": server.url(),
                           "max_retries": 0} for slug in ("alice", "bob", "charlie")}
        plan = SweepPlan(scene=str(_scene(folder, cast)), isolations=["a", "b"], coordinators=["C"],
                         seeds=list(range(1, seeds + 1)), concurrency=concurrency, max_beats=12,
                         characters_dirs=[str(ROOT / "characters")])
        sweep = Sweep(plan, folder / "sweep")
        todo = sweep.prepare_folder()
        started = time.perf_counter()
        asyncio.run(sweep.run(todo))
        elapsed = time.perf_counter() - started
        if server is not None:
            server.__exit__(None, None, None)
    return {"runs_per_min": len(todo) / elapsed * 60}


def run() -> dict[str, float]:
    out: dict[str, float] = {}
    for kind in SCENARIOS:
        child = subprocess.run([sys.executable, "-m", "benchmarks.sweep", kind], capture_output=True, text=True,
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if child.returncode != 0:
            print(f"# sweep {kind} failed: {child.stderr[-500:]}", file=sys.stderr)
            continue
        result = json.loads(child.stdout.strip().splitlines()[-1])
        prefix = "sweep" if kind == "offline" else "sweep_loopback"
        out[f"{prefix}_runs_per_min"] = result["runs_per_min"]
        out[f"{prefix}_peak_mb"] = result["peak_mb"]
    return out


if __name__ == "__main__":
    figures = measure(sys.argv[1])
    figures["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))
