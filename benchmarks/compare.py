"""How long `promptdesk compare` takes on a 2 × 3 × 10 sweep (60 runs, 16 metrics, exact paired tests,
the factorial view), as a user runs it: a fresh interpreter per command.

- `compare_s`: the text form (the statistics, no audit), the median of three;
- `compare_json_s`: `--json`, which also audits every run, the median of three.

The sweep is The Apology on the offline improviser, both isolations, roles A, B and C, seeds 1-10, made
once in a temporary folder.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _timed(args: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "promptdesk", *args], cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def run() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="promptdesk-bench-compare-") as tmp:
        folder = Path(tmp)
        (folder / "scenes").mkdir()
        shutil.copy(ROOT / "scenes" / "the-apology.yaml", folder / "scenes")
        shutil.copytree(ROOT / "characters", folder / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
        subprocess.run([sys.executable, "-m", "promptdesk", "sweep", "scenes/the-apology.yaml", "--isolation", "a,b",
                        "--coordinator", "A,B,C", "--seeds", "1-10", "--out", "sweep", "--concurrency", "8"],
                       cwd=folder, check=True, capture_output=True)
        return {"compare_s": statistics.median(_timed(["compare", "sweep"], folder) for _ in range(3)),
                "compare_json_s": statistics.median(_timed(["compare", "sweep", "--json"], folder) for _ in range(3))}


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value:.4f}")
