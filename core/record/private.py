"""`private.json`: what a run folder holds, from before the first actor is spawned, so that the run can
be audited and resumed from the folder alone.

Written once at the start (after `notes.md`, before any `spawn` event), mode 0600, never rewritten:

    {
      "version": 1,
      "scene": {...},                 the whole scene as loaded and validated
      "isolation": "a" | "b", "coordinator": "A" | "B" | "C", "seed": 7,
      "max_beats": 50, "budget_usd": null,
      "providers": {"<slug>": {ProviderSpec}, ...}, "judge": {ProviderSpec} | null,   (never a key)
      "cast": {"<slug>": {"name", "briefing", "profile", "journal", "perspective", "journal_path"}, ...},
      "coordinator_notes": "...",
      "operator_context": "...",     what a role A judge is told beyond speech
      "write_character_journals": true, "start": {...}   the `start` event's fields
    }

`briefing` is the system prompt the actor was spawned with (its own profile, its journal as read at
the start, its own perspective); `profile`, `journal` and `perspective` are the private parts the
audit looks for in every other recipient's requests. Keys are never part of a `ProviderSpec`.
The record is composed by `core.casting.start_record`; this module writes and reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from core.errors import NotARun

FILE = "private.json"
VERSION = 1


def write_private(run_dir: Path, record: dict[str, Any]) -> None:
    """Write `private.json` (0600 from its creation: it holds every actor's private material)."""
    path = Path(run_dir) / FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record, handle, ensure_ascii=False, indent=1)


def read_private(run_dir: Path) -> dict[str, Any]:
    """The start-of-run record; `NotARun` when the folder is not a run or predates this record."""
    run_dir = Path(run_dir)
    if not (run_dir / "events.jsonl").is_file():
        raise NotARun(f"{run_dir} is not a run folder (no events.jsonl): give a folder under runs/ "
                      "or the --out of a run")
    path = run_dir / FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotARun(f"{run_dir} has no {FILE}: it was recorded by an older Promptdesk, or is not a run "
                      "folder, so it cannot be audited or resumed") from None
    except (OSError, ValueError) as exc:
        raise NotARun(f"{path} cannot be read ({exc}): the run's start record is damaged") from None
    if not isinstance(record, dict) or record.get("version") != VERSION or "cast" not in record:
        raise NotARun(f"{path} is not a start record this Promptdesk understands (version {VERSION} expected)")
    return record
