"""`private.json`: what a run folder holds, from before the first actor is spawned, so that the run can
be audited and resumed from the folder alone.

Written once at the start (after `notes.md`, before any `spawn` event), mode 0600, never rewritten:

    {
      "version": 1,
      "scene": {...},                 the whole scene as loaded and validated
      "isolation": "a" | "b", "coordinator": "A" | "B" | "C", "seed": 7,
      "max_beats": 50, "budget_usd": null,
      "providers": {"<slug>": {ProviderSpec}, ...}, "judge": {ProviderSpec} | null,   (never a key)
      "cast": {"<slug>": {"name", "briefing", "profile", "journal", "perspective", "secret", "journal_path"}, ...},
      "coordinator_notes": "...",
      "operator_context": "...",     what a role A judge is told beyond speech
      "write_character_journals": true, "start": {...}   the `start` event's fields
    }

`briefing` is the system prompt the actor was spawned with (its own profile, its journal as read at
the start, its own perspective); `profile`, `journal`, `perspective` and `secret` (the profile's
`## Secret` section, "" when it has none) are the private parts the audit looks for in every other
recipient's requests. Keys are never part of a `ProviderSpec`.
The record is composed by `promptdesk.core.casting.start_record`; this module writes and reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from promptdesk.core.errors import NotARun
from promptdesk.core.protocol.bounded import Unbounded, load_json, read_capped
from promptdesk.core.providers.spec import ProviderSpec

FILE = "private.json"
VERSION = 1
PRIVATE_MAX_BYTES = 64 * 1_048_576
"""A `private.json` over 64 MB is refused before it is read (eight actors' whole material is far less)."""
PROBLEMS_SHOWN = 5
"""At most this many problems of a damaged record are named."""


class _Member(BaseModel):
    """One cast member's private material, as `promptdesk.core.casting.start_record` writes it."""

    model_config = ConfigDict(extra="allow", strict=True)
    name: str
    briefing: str
    profile: str
    journal: str
    perspective: str | None = None
    journal_path: str | None = None


class _Record(BaseModel):
    """The shape a start record must have before anything reads it (extra keys are kept)."""

    model_config = ConfigDict(extra="allow", strict=True)
    version: Literal[1]
    scene: dict[str, Any]
    isolation: Literal["a", "b"]
    coordinator: Literal["A", "B", "C"]
    seed: int
    max_beats: int
    budget_usd: float | int | None = None
    providers: dict[str, ProviderSpec]
    judge: ProviderSpec | None = None
    cast: dict[str, _Member]
    coordinator_notes: str = ""
    operator_context: str = ""
    write_character_journals: bool = False
    start: dict[str, Any] = {}

    @model_validator(mode="after")
    def _every_actor_has_a_provider(self) -> _Record:
        missing = sorted(set(self.cast) - set(self.providers))
        if missing:
            raise ValueError(f"no provider for {', '.join(missing)}")
        return self


def write_private(run_dir: Path, record: dict[str, Any]) -> None:
    """Write `private.json` (0600 from its creation: it holds every actor's private material)."""
    path = Path(run_dir) / FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # A path of bytes that are not UTF-8 (a folder named in Latin-1: `caf\xe9/`) holds a lone surrogate:
    # written as its JSON escape (`\udce9`), which reads back as the same path, never a traceback that
    # leaves the record half written.
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
        json.dump(record, handle, ensure_ascii=False, indent=1)


def _problems(exc: ValidationError) -> str:
    """`cast: Input should be a valid dictionary (got 5); scene: Field required`: wrong values first, capped."""
    rows = []
    for error in sorted(exc.errors(), key=lambda e: e["type"] == "missing"):
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        got = error.get("input")
        shown = f" (got {got!r:.60})" if isinstance(got, (str, int, float, bool)) and error["type"] != "missing" else ""
        rows.append(f"{where}: {error['msg'].removeprefix('Value error, ')}{shown}")
    more = f"; and {len(rows) - PROBLEMS_SHOWN} more" if len(rows) > PROBLEMS_SHOWN else ""
    return "; ".join(rows[:PROBLEMS_SHOWN]) + more


def read_private(run_dir: Path) -> dict[str, Any]:
    """The start-of-run record, its shape checked; `NotARun` when the folder is not a run, predates
    this record, or the record is damaged (too big, not JSON, nested too deep, the wrong shape)."""
    run_dir = Path(run_dir)
    if not (run_dir / "events.jsonl").is_file():
        raise NotARun(f"{run_dir} is not a run folder (no events.jsonl): give a folder under runs/ "
                      "or the --out of a run")
    path = run_dir / FILE
    damaged = "the run's start record is damaged, so the run cannot be audited, resumed or branched" + _unplayed(run_dir)
    try:
        with open(path, "rb") as handle:
            raw = read_capped(handle, PRIVATE_MAX_BYTES)
        if raw is None:
            raise NotARun(f"{path} is over the limit of {PRIVATE_MAX_BYTES:,} bytes: {damaged}")
        record = load_json(raw.decode("utf-8"))
    except FileNotFoundError:
        raise NotARun(f"{run_dir} has no {FILE}: it was recorded by an older Promptdesk, or is not a run "
                      "folder, so it cannot be audited, resumed or branched") from None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError, JSON errors and `Unbounded` alike
        what = "nested too deep" if isinstance(exc, Unbounded) else "cannot be read"
        raise NotARun(f"{path} {what} ({exc}): {damaged}") from None
    if not isinstance(record, dict) or record.get("version") != VERSION:
        raise NotARun(f"{path} is not a start record this Promptdesk understands (version {VERSION} expected)")
    try:
        _Record.model_validate(record)
    except ValidationError as exc:
        raise NotARun(f"{path} is not a start record of the expected shape ({_problems(exc)}): {damaged}") from None
    return record


def _unplayed(run_dir: Path) -> str:
    """What to do when nothing was played yet (a log of at most 1 MB without a `beat` or `round` event:
    a run that failed while its start record was written, on a full disk for one): play it again."""
    try:
        with open(run_dir / "events.jsonl", "rb") as handle:
            head = handle.read(1_048_577)
    except OSError:
        return ""
    if len(head) > 1_048_576:
        return ""  # a log that long was played, whatever its first lines say
    for line in head.splitlines():
        try:
            if json.loads(line).get("type") in ("beat", "round"):
                return ""
        except (ValueError, AttributeError):
            continue
    return "; nothing was played (no beat in events.jsonl): play the scene again into a new folder"
