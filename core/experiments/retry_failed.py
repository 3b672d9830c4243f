"""`--retry-failed`: a sweep's failed runs played again, their records kept.

A run whose result is a failed run's (`sweep_plan.FAILED_CLOSES`: the engine failed, or every model call
did) counts as done, so running the same command again skips it. With `--retry-failed` each such run of
the plan is set aside before the sweep starts: its result line moves from `results.jsonl` to
`results.failed.jsonl` (appended, as it was written), its folder becomes `<name>.failed-<k>`, and the
run starts again. What the failed attempt paid stays in the sweep's spend (its calls are still in
its folder, which `spend.logged_spend` reads). Every other line of `results.jsonl`, a torn one
included, is kept (bytes that are not UTF-8 as the replacement character, as every reader sees them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from promptdesk.core.experiments.sweep_plan import RESULTS_FILE, failed_run
from promptdesk.core.record.run_folder import open_private, write_atomic
from promptdesk.core.protocol.bounded import json_lines

FAILED_RESULTS = "results.failed.jsonl"
"""Where the result lines of runs set aside for another attempt go."""


def set_failed_aside(folder: Path, planned: set[str]) -> list[str]:
    """Set aside every run of `planned` whose result in `folder` is a failed run's (see the module
    docstring); the names of those runs, in the order of their results."""
    path = folder / RESULTS_FILE
    if not path.is_file():
        return []
    kept, moved, names = [], [], []
    for line in json_lines(path.read_text(encoding="utf-8", errors="replace"), keepends=True):
        row = _row(line)
        if row is not None and row.get("run") in planned and failed_run(row):
            moved.append(line if line.endswith("\n") else line + "\n")
            names.append(str(row["run"]))
        else:
            kept.append(line)
    if not moved:
        return []
    with open_private(folder / FAILED_RESULTS) as handle:
        handle.writelines(moved)
        handle.flush()
        os.fsync(handle.fileno())
    write_atomic(path, "".join(kept))
    for name in dict.fromkeys(names):
        set_aside(folder / name, "failed")
    return list(dict.fromkeys(names))


def _row(line: str) -> dict | None:
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def set_aside(run_dir: Path, kind: str) -> None:
    """Keep a run folder that will not be played on as `<name>.<kind>-<k>` (the first free k), if it exists."""
    if not run_dir.exists():
        return
    k = 1
    while run_dir.with_name(f"{run_dir.name}.{kind}-{k}").exists():
        k += 1
    run_dir.rename(run_dir.with_name(f"{run_dir.name}.{kind}-{k}"))
