"""The run folder's writer: `events.jsonl` appended event by event, every prompt to `prompts.jsonl`,
warnings to `debug.log`, and the derived files written once at close.

What is written is durable at the moment it matters (flushed to the operating system, so a
`kill -9` loses none of it):
- every request is written and flushed to `prompts.jsonl` before it is sent (`record_prompt` returns
  only then), so what a server received, and may bill, is on the record whatever happens next;
- every event is flushed as it is recorded, before the session shows it to anyone, so a line the
  operator saw is in `events.jsonl`; except, while the session `hold`s the record (during a beat),
  the `route` events (`BATCHED`: one per speech and listener, the bulk of a large cast's beat, and
  each one a consequence of a `speak` event already durable), which wait for the next flush or for
  `commit` at the safe point.

`events.jsonl` is the source of truth; `finish` rebuilds every other file from the events alone.
The recorder holds the folder's writer lock (`promptdesk.core.record.folder_lock`) from `open` (or from the
claim that created the folder, or the resume that reopened it) until `finish` has written every file.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from promptdesk.core.record import evaluation_file, outputs
from promptdesk.core.errors import RecordingError, recording_error
from promptdesk.core.record.events import BaseEvent, parse_event_json, spec_record, why_unreadable
from promptdesk.core.record.lines import PLAIN, FormatLines
from promptdesk.core.record.prompt_log import PromptLogWriter
from promptdesk.core.providers.base import Request
from promptdesk.core.record.folder_lock import FolderLock
from promptdesk.core.record.seams import superseded_calls
from promptdesk.core.record.run_folder import DIR_MODE, lock_down, open_private, write_atomic
from promptdesk.core.protocol.sanitize import LONE_SURROGATE, file_text

log = logging.getLogger("promptdesk.recorder")

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|(?i:api[_-]?key)\s*[:=]\s*\S+)")


def redact(text: str) -> str:
    """Remove anything shaped like an API key from text bound for a file or a terminal."""
    return _SECRET.sub("[redacted]", text)


def storable(text: str) -> str:
    """`text` with every lone surrogate written as its `\\uXXXX` escape, so that it can be encoded
    as UTF-8. Inside a JSON string the escape reads back as the very same character; in plain text
    it shows what was there instead of losing the whole file."""
    try:
        text.encode()  # a third of the cost of searching for one: nearly every text holds none
        return text
    except UnicodeEncodeError:
        pass
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


BATCHED = frozenset({"route"})
"""Event types written without a flush of their own while the record is held (see the module's docstring)."""

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


DELETED_ADVICE = ("The run stopped rather than play on unrecorded; what the deleted files held is lost with them. "
                  "Run again, with --out outside any folder that gets cleaned")


class Recorder:
    """Owns one run folder. Every write is flushed at once so a crash loses nothing recorded."""

    def __init__(self, run_dir: Path, own: FormatLines = PLAIN) -> None:
        self.run_dir = run_dir
        self.own = own
        """How the format's own events read in the derived files."""
        self.events: list[BaseEvent] = []
        self._files: dict[str, TextIO] = {}
        self.prompt_log = PromptLogWriter()
        self.failure: RecordingError | None = None
        """The first write that failed; once set, nothing more is appended (the record stops there)."""
        self.on_failure: Callable[[RecordingError], None] | None = None
        """Called once, when the first write fails (the session stops the run)."""
        self.lock: FolderLock | None = None
        """The folder's writer lock, held until `finish` (given by the claim or the resume that made it)."""
        self.hold = False
        """True while a beat is played: `BATCHED` events are flushed with the next line or at `commit`."""

    def open(self) -> None:
        """Create the folder, lock it (unless the lock is already held) and open the append-only logs."""
        self.run_dir.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        if self.lock is None or not self.lock.held:
            self.lock = FolderLock.take(self.run_dir, "run")
        try:
            lock_down(self.run_dir)
            for name in ("events.jsonl", "prompts.jsonl", "debug.log"):
                self._files[name] = open_private(self.run_dir / name)
        except OSError:
            self.release()
            raise

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
        """Write `notes.md` (done before any actor is spawned), control characters removed (`file_text`)."""
        with open_private(self.run_dir / "notes.md", "w") as notes:
            notes.write(file_text(text))

    def add_note(self, line: str) -> None:
        """Append one `- line` to `notes.md` (a notice that came up during the run); never raises."""
        try:
            with open_private(self.run_dir / "notes.md", "a") as notes:
                notes.write(f"- {file_text(line)}\n")
        except OSError as exc:
            self.log("error", f"notes.md could not take a notice: {exc!r}")

    def record(self, event: BaseEvent) -> None:
        """Append one event to `events.jsonl`, flushed unless it is `BATCHED` while held; raises
        `RecordingError` when it cannot."""
        self._append("events.jsonl", json.dumps(event.to_record(), ensure_ascii=False),
                     flush=not (self.hold and event.type in BATCHED))
        self.events.append(event)

    def record_prompt(self, t: float, request: Request) -> None:
        """Append one request, exactly as it is about to be sent, to `prompts.jsonl` and flush it (never
        a key: requests hold none), whole or as a delta against the same recipient's previous one
        (`promptdesk.core.record.prompt_log`). Raises `RecordingError` when it cannot: then the
        request must not be sent."""
        if self.failure is not None:
            raise self.failure
        self._append("prompts.jsonl", self.prompt_log.line(t, request))

    def prepare_prompt(self, request: Request) -> None:
        """Encode ahead what the recipient's next request begins with (`PromptLogWriter.prepare`)."""
        self.prompt_log.prepare(request)

    def commit(self) -> None:
        """Flush what was held (the `BATCHED` events); raises `RecordingError` when it cannot."""
        if self.failure is not None:
            raise self.failure
        for name in ("prompts.jsonl", "events.jsonl"):
            handle = self._files.get(name)
            if handle is not None:
                try:
                    handle.flush()
                    deleted = os.fstat(handle.fileno()).st_nlink == 0  # written on, into a file no folder holds
                except OSError as exc:
                    self.fail(recording_error(exc, f"{name} in {self.run_dir}"))
                if deleted:
                    self.fail(recording_error(FileNotFoundError(errno.ENOENT, "it was deleted while the scene "
                                                                "played (the run folder removed?)"),
                                              f"{name} in {self.run_dir}", DELETED_ADVICE))

    def log(self, level: str, message: str, **context: Any) -> None:
        """Append a warning or error with its context to `debug.log`. Never raises: a failed write
        is kept in `failure` (and stops the run) rather than masking the error being logged."""
        stamp = datetime.now().isoformat(timespec="milliseconds")
        extra = " ".join(f"{k}={v!r}" for k, v in context.items())
        try:
            self._append("debug.log", redact(f"{stamp} {level.upper()} {message} {extra}".rstrip()))
        except RecordingError:
            pass

    def _append(self, name: str, line: str, flush: bool = True) -> None:
        handle = self._files.get(name)
        if handle is None:
            return
        if self.failure is not None:
            raise self.failure
        try:
            handle.write(storable(line) + "\n")
            if flush:
                handle.flush()
        except OSError as exc:
            self.fail(recording_error(exc, f"{name} in {self.run_dir}"))

    def fail(self, error: RecordingError) -> None:
        """Mark the record as broken by `error` (the first failure wins), tell the session, raise."""
        if self.failure is None:
            self.failure = error
            if self.on_failure is not None:
                self.on_failure(error)
        raise self.failure

    def finish(self, when: datetime) -> None:
        """Write the derived files from the recorded events, then close the logs.

        Raises `RecordingError` when a file cannot be written; the logs are closed either way."""
        self.hold = False
        try:
            self.commit()
        except RecordingError:
            pass  # the failure is kept; the derived files still say what was recorded
        try:
            write_derived(self.run_dir, self.events, when, self.own)
        except OSError as exc:
            named = f" ({exc.filename})" if exc.filename else ""
            self.fail(recording_error(exc, f"the derived files in {self.run_dir}{named}"))
        finally:
            for handle in self._files.values():
                try:
                    handle.close()
                except OSError:
                    pass
            self._files.clear()
            self.release()

    def release(self) -> None:
        """Let go of the folder's writer lock (done by `finish`; for a session that never ran)."""
        if self.lock is not None:
            self.lock.release()


def _ends_torn(path: Path) -> bool:
    """True when a log's last line has no newline (it was cut mid-write)."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with open(path, "rb") as handle:
        handle.seek(-1, 2)
        return handle.read(1) != b"\n"


def write_derived(run_dir: Path, events: list[BaseEvent], when: datetime, own: FormatLines = PLAIN) -> None:
    """Rebuild `events.json`, both transcripts, `metadata.json`, `journals/` and (when the run was
    evaluated) `evaluation.json` from events (the costs count the calls of `superseded.jsonl` too:
    they were paid for).

    Each file is replaced in one step (`write_atomic`: a crash mid-write leaves the old file) and
    attempted even when an earlier one could not be written; the first such `OSError` is raised
    once all have been tried."""
    cut = superseded_calls(run_dir)
    files: dict[str, Callable[[], str]] = {
        "events.json": lambda: json.dumps([spec_record(e) for e in events], indent=2, ensure_ascii=False),
        "transcript.md": lambda: file_text(outputs.transcript_md(events, when, own, cut)),
        "transcript.txt": lambda: file_text(outputs.transcript_txt(events, when, own, cut)),
        "metadata.json": lambda: json.dumps(outputs.metadata(events, own, cut), indent=2),
    }
    for slug, text in outputs.journals(events).items():
        files[f"journals/{slug}.md"] = lambda text=text: file_text(text)
    if (scores := evaluation_file.render(events)) is not None:
        files[evaluation_file.FILE] = lambda: scores
    failures: list[OSError] = []
    for name, render in files.items():
        try:
            path = run_dir / name
            path.parent.mkdir(exist_ok=True, mode=DIR_MODE)
            write_atomic(path, storable(render()), durable=False)  # rebuilt from the events at need
        except OSError as exc:
            failures.append(exc)
    lock_down(run_dir)
    if failures:
        raise failures[0]


EVENT_LINE_MAX = 16 * 1_048_576
"""An `events.jsonl` line over 16 MB is skipped unread (a whole briefing is far less)."""


def read_events(run_dir: Path, warn: Callable[[str], None] | None = None) -> list[BaseEvent]:
    """Read `events.jsonl` back, line by line within bounds. A line that is torn (a crash mid-write),
    not UTF-8, not an event, nested too deep or over `EVENT_LINE_MAX` is skipped, and `warn` (default:
    the `promptdesk.recorder` logger) is told which."""
    warn = warn or log.warning
    path = run_dir / "events.jsonl"
    events: list[BaseEvent] = []
    with open(path, "rb") as handle:
        for number, raw in enumerate(bounded_lines(handle, EVENT_LINE_MAX), start=1):
            if raw is None:
                warn(f"{path}: line {number} skipped, it is over the limit of {EVENT_LINE_MAX:,} bytes")
                continue
            if not raw.strip():
                continue
            try:
                events.append(parse_event_json(raw.decode("utf-8")))
            except ValueError as exc:  # UnicodeDecodeError, JSON, depth and validation errors alike
                warn(f"{path}: line {number} skipped, it is not a readable event ({why_unreadable(exc)})")
    return events


def bounded_lines(handle: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """Each line of a binary file without its newline, never reading more than `limit` bytes of one
    line into memory: a longer line is passed over and given as None."""
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield line.removesuffix(b"\n")


