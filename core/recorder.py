"""The run folder's writer: `events.jsonl` appended and flushed event by event, every prompt to
`prompts.jsonl`, warnings to `debug.log`, and the derived files written once at close.

`events.jsonl` is the source of truth; `finish` rebuilds every other file from the events alone.
"""

from __future__ import annotations

import json
import logging
import re
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from core import outputs
from core.events import BaseEvent, parse_event_json
from core.prompt_log import PromptLogWriter
from core.providers.base import Request
from core.run_folder import DIR_MODE, lock_down, open_private
from core.sanitize import strip_controls

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|(?i:api[_-]?key)\s*[:=]\s*\S+)")


def redact(text: str) -> str:
    """Remove anything shaped like an API key from text bound for a file or a terminal."""
    return _SECRET.sub("[redacted]", text)


ACTIVE: ContextVar[Recorder | None] = ContextVar("promptdesk_recorder", default=None)
"""The recorder of the session whose task is running (sessions side by side keep their logs apart)."""


class DebugLogHandler(logging.Handler):
    """Sends the `promptdesk.*` loggers' warnings (retries, fallbacks) into a run's `debug.log`,
    for records logged from within that run's own tasks."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__(logging.WARNING)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        if ACTIVE.get() is self.recorder:
            self.recorder.log(record.levelname, f"{record.name}: {record.getMessage()}")


class Recorder:
    """Owns one run folder. Every write is flushed at once so a crash loses nothing recorded."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.events: list[BaseEvent] = []
        self._files: dict[str, TextIO] = {}
        self.prompt_log = PromptLogWriter()

    def open(self) -> None:
        """Create the folder and open the append-only logs."""
        self.run_dir.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        lock_down(self.run_dir)
        for name in ("events.jsonl", "prompts.jsonl", "debug.log"):
            self._files[name] = open_private(self.run_dir / name)

    def reopen(self, events: list[BaseEvent]) -> None:
        """Continue an existing run folder (resume): the events it keeps, its logs opened for appending,
        each log's torn last line (a kill mid-write) ended so that nothing new joins it."""
        self.events = list(events)
        self.prompt_log.continue_after(self.run_dir)
        for name in ("events.jsonl", "prompts.jsonl", "debug.log"):
            path = self.run_dir / name
            torn = _ends_torn(path)
            self._files[name] = open(path, "a", encoding="utf-8")
            if torn:
                self._append(name, "")

    def write_notes(self, text: str) -> None:
        """Write `notes.md` (done before any actor is spawned), control characters removed."""
        with open_private(self.run_dir / "notes.md", "w") as notes:
            notes.write(strip_controls(text))

    def record(self, event: BaseEvent) -> None:
        """Append one event to `events.jsonl` and flush."""
        self.events.append(event)
        self._append("events.jsonl", json.dumps(event.to_record(), ensure_ascii=False))

    def record_prompt(self, t: float, request: Request) -> None:
        """Append one request, exactly as sent, to `prompts.jsonl` (never a key: requests hold none),
        whole or as a delta against the same recipient's previous one (`core.prompt_log`)."""
        self._append("prompts.jsonl", self.prompt_log.line(t, request))

    def log(self, level: str, message: str, **context: Any) -> None:
        """Append a warning or error with its context to `debug.log`."""
        stamp = datetime.now().isoformat(timespec="milliseconds")
        extra = " ".join(f"{k}={v!r}" for k, v in context.items())
        self._append("debug.log", redact(f"{stamp} {level.upper()} {message} {extra}".rstrip()))

    def _append(self, name: str, line: str) -> None:
        handle = self._files.get(name)
        if handle is None:
            return
        handle.write(line + "\n")
        handle.flush()

    def finish(self, when: datetime) -> None:
        """Write the derived files from the recorded events, then close the logs."""
        write_derived(self.run_dir, self.events, when)
        for handle in self._files.values():
            handle.close()
        self._files.clear()


def _ends_torn(path: Path) -> bool:
    """True when a log's last line has no newline (it was cut mid-write)."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with open(path, "rb") as handle:
        handle.seek(-1, 2)
        return handle.read(1) != b"\n"


def write_derived(run_dir: Path, events: list[BaseEvent], when: datetime) -> None:
    """Rebuild `events.json`, both transcripts, `metadata.json` and `journals/` from events."""
    records = [e.to_record() for e in events]
    (run_dir / "events.json").write_text(json.dumps(records, indent=2, ensure_ascii=False), encoding="utf-8")
    (run_dir / "transcript.md").write_text(strip_controls(outputs.transcript_md(events, when)), encoding="utf-8")
    (run_dir / "transcript.txt").write_text(strip_controls(outputs.transcript_txt(events, when)), encoding="utf-8")
    metadata = outputs.metadata(events)
    (run_dir / "metadata.json").write_text(json.dumps(metadata, indent=2), encoding="utf-8")
    for slug, text in outputs.journals(events).items():
        (run_dir / "journals").mkdir(exist_ok=True, mode=DIR_MODE)
        (run_dir / "journals" / f"{slug}.md").write_text(strip_controls(text), encoding="utf-8")
    lock_down(run_dir)


def read_events(run_dir: Path) -> list[BaseEvent]:
    """Read `events.jsonl` back; a torn last line (a crash mid-write) is skipped."""
    events: list[BaseEvent] = []
    with open(run_dir / "events.jsonl", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                try:
                    events.append(parse_event_json(line))
                except ValueError:
                    continue
    return events
