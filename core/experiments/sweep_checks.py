"""What a sweep checks before it starts, and how a write of a sweep fails.

`check_plan` builds one run per coordinator in a scratch folder, exactly as the sweep will build
them (`promptdesk.core.casting.build`), so a plan that cannot run is refused before anything is written or
sent: a wrong choice, cast or provider, and a budget `--batch` would refuse (not a finite amount, or
a model with no known price). `writing` turns an `OSError` on a file of the sweep into a
`RecordingError` (exit 1) that names the path and says how to go on. `parse_seeds` and
`parse_choices` read the plan's lists as given on the command line.
"""

from __future__ import annotations

import errno
import math
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from promptdesk.core.casting.build import build_session
from promptdesk.core.errors import InvalidConfig, recording_error

SWEEP_ADVICE = ("The sweep stopped. Free space or fix the permissions, then run the same command again: runs with a "
                "result are kept, the others continue where they stopped")
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""A sweep folder that cannot be made for these is a disk's failure (exit 1), not a wrong --out (exit 2)."""


def check_names_recordable(plan: Any, file: str) -> None:
    """Refuse a plan naming a file or folder whose bytes are not UTF-8 (a scene or a run folder named in
    Latin-1, `caf\xe9.yaml`): its plan file (`file`, UTF-8 YAML) could not be read back, so the sweep
    could neither be run again nor compared. Said before anything is written, with what to do."""
    from dataclasses import asdict

    for key, value in asdict(plan).items():
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                try:
                    shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                except UnicodeEncodeError:
                    shown = text.encode("utf-8", "backslashreplace").decode("utf-8")
                raise InvalidConfig(f"{key}: the name '{shown}' is not UTF-8 (its bytes were written in another "
                                    f"encoding, Latin-1 perhaps); a sweep records it in {file}, which is UTF-8: "
                                    "rename it to a UTF-8 name (`convmv -f latin1 -t utf8`, or `mv`), then run the "
                                    "sweep again") from None


def check_plan(scene: Any, plan: Any) -> list[str]:
    """Build the first run of each coordinator (and actor model: a benchmark sweep's) with the plan's
    budget in a scratch folder (a judge's model counts); raise what building raises. Returns the models
    with no known price."""
    firsts: dict[tuple[str, str], Any] = {}
    for combo in plan.combinations():
        firsts.setdefault((combo.coordinator, getattr(combo, "model", "")), combo)
    try:
        scratch = Path(tempfile.mkdtemp(prefix="promptdesk-sweep-check-"))
    except OSError as exc:
        raise recording_error(exc, f"a scratch folder in {tempfile.gettempdir()}", SWEEP_ADVICE) from None
    try:  # a disk that takes no write is the disk's failure, not the scratch run folder's (its lock is as small)
        (scratch / "probe").write_text("a run folder's lock holds about this much\n", encoding="utf-8")
    except OSError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        raise recording_error(exc, f"a scratch folder in {tempfile.gettempdir()}", SWEEP_ADVICE) from None
    unpriced: list[str] = []
    try:
        for combo in firsts.values():
            options = replace(plan.run_options(combo, scratch / combo.name), budget_usd=plan.budget_usd)
            session = build_session(scene, options)
            session.recorder.release()
            unpriced += [m for m in session.start_info.get("unpriced_models", []) if m not in unpriced]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return unpriced


def check_recorded_budget(budget: Any, where: Path, unpriced: list[str]) -> None:
    """A budget taken from `sweep.yaml` (none was given) must be one `--budget-usd` would take."""
    if budget is None:
        return
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        raise InvalidConfig(f"{where} records budget_usd {budget!r}, not a finite amount more than 0; give --budget-usd")
    if unpriced:
        raise InvalidConfig(f"the budget recorded in {where} (${budget:g}) cannot be kept: no price is known for "
                            f"{', '.join(unpriced)} (see core/providers/pricing.py); give another --out to run "
                            f"without a budget")


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Write `path` of a sweep: an `OSError` becomes a `RecordingError` naming it."""
    try:
        yield
    except OSError as exc:
        raise recording_error(exc, str(path), SWEEP_ADVICE) from None


MAX_SEEDS = 10_000
"""The most seeds one sweep takes: each is a run per condition (a sweep of 10,000 seeds over the six
conditions of both choices is already 60,000 runs)."""

_SEED_PART = re.compile(r"([0-9]+)(?:\s*-\s*([0-9]+))?")


def parse_seeds(text: str) -> list[int]:
    """`1-10`, `1,3,5` or a mix such as `1-3,7` as a sorted list of distinct seeds: whole numbers in
    the digits 0-9, a range low-high with both ends; at most `MAX_SEEDS` of them, counted before any
    is listed (so `1-1000000000` is refused at once, not built in memory)."""
    spans: list[tuple[int, int]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        found = _SEED_PART.fullmatch(part)
        if found is None or int(found[2] or found[1]) < int(found[1]):
            raise InvalidConfig(f"--seeds must look like 1-10 or 1,3,5 (whole numbers, ranges low-high), not {text!r}")
        spans.append((int(found[1]), int(found[2] or found[1])))
    if not spans:
        raise InvalidConfig("--seeds names no seed; give e.g. --seeds 1-5")
    merged: list[list[int]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    count = sum(high - low + 1 for low, high in merged)
    if count > MAX_SEEDS:
        raise InvalidConfig(f"--seeds {text.strip()} names {count:,} seeds; a sweep takes at most {MAX_SEEDS:,} "
                            "(each seed is a run per condition): give a smaller range")
    return [seed for low, high in merged for seed in range(low, high + 1)]


def parse_choices(text: str, valid: tuple[str, ...], flag: str) -> list[str]:
    """A comma-separated list of choices, each checked against `valid`."""
    values = [v.strip() for v in text.split(",") if v.strip()]
    wrong = [v for v in values if v not in valid]
    if wrong or not values:
        raise InvalidConfig(f"{flag} takes a comma-separated list of {', '.join(valid)}; got {text!r}")
    return list(dict.fromkeys(values))
