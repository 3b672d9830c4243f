"""What a sweep has spent, across every invocation: `spend.json` in the sweep folder.

The sweep rewrites the file (in one step, `promptdesk.core.record.run_folder.write_atomic`) after every paid
call and at its end, so it holds the spend of every earlier invocation, whatever became of their
runs (finished, stopped by the budget and resumed, set aside, killed). On start a sweep takes the
larger of the file and what its run folders' logs record (`events.jsonl` and `superseded.jsonl` of
every run folder, set-aside ones included), so a kill between a call and the file's next write, or a
sweep folder from before the file existed, never makes the budget forget money already spent. A take
(`promptdesk.core.record.takes`) counts only its own calls: what it inherited was paid by its parent.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

from promptdesk.core.protocol.bounded import load_json
from promptdesk.core.record.run_folder import write_atomic
from promptdesk.core.record.seams import SUPERSEDED
from promptdesk.core.record.takes import own_part_from

SPEND_FILE = "spend.json"


def read_spend(folder: Path) -> float:
    """The spend recorded in `spend.json` (0 when there is none or it cannot be read)."""
    try:
        data = load_json((folder / SPEND_FILE).read_text(encoding="utf-8"))
        return max(0.0, float(data["spent_usd"]))
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def logged_spend(folder: Path) -> float:
    """What the call events of every run folder under `folder` cost, superseded attempts included."""
    return logged(folder)[0]


def logged(folder: Path) -> tuple[float, list[str]]:
    """What the call events of every run folder under `folder` cost (superseded attempts included),
    and the run folders holding an answered call whose cost is unknown (its server sent no token
    usage). Such a call counts as nothing in the total, which is then only what is known; so does a
    call cut off in flight (a stop), whose billing no server reported."""
    total, unknown = 0.0, []
    try:
        runs = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return 0.0, []
    for run in runs:
        since = own_part_from(run)
        for name in ("events.jsonl", SUPERSEDED):
            try:
                lines = (run / name).read_bytes().split(b"\n")
            except OSError:
                continue
            for line in lines:
                if b'"call"' not in line:
                    continue
                try:
                    record = load_json(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("type") == "call" and _number(record.get("beat") or 0) >= since:
                    total += _number(record.get("cost_usd") or 0.0)
                    if record.get("usage") == "unknown" and record.get("ok", True) and run.name not in unknown:
                        unknown.append(run.name)
    return total, unknown


def _number(value: object) -> float:
    """A count or a cost as a call event holds it; 0 for one that is not a finite number of 0 or more (a line
    edited by hand: `"cost_usd": "free"` ended the sweep in a traceback; every other reader skips that line)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return 0.0
    return float(value)


def spent_so_far(folder: Path) -> tuple[float, list[str]]:
    """What the sweep in `folder` has spent in all its invocations, as far as it is known, and the run
    folders holding a call whose cost is unknown."""
    total, unknown = logged(folder)
    return max(read_spend(folder), total), unknown


def write_spend(folder: Path, spent_usd: float, budget_usd: float | None) -> None:
    """Record the spend (and the budget it is held to) in `spend.json`, replaced in one step."""
    data = {"spent_usd": round(spent_usd, 6), "budget_usd": budget_usd,
            "updated": datetime.now().isoformat(timespec="seconds")}
    write_atomic(folder / SPEND_FILE, json.dumps(data, indent=1) + "\n")
