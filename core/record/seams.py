"""The seam of a resumed run: the cut beat's partial events leave `events.jsonl` for `superseded.jsonl`.

When a killed run is resumed, the beat that was cut off is played again from its start; a beat that
had finished (its `beat_end` is on the log) is never played again: only the coordinator's check after
it is made again, and the next beat follows. So that nothing appears twice for any reader of
`events.jsonl` (derived files, replay, metrics), the lines from the cut (the cut beat's `beat` event,
or just after the finished beat's `beat_end`) to the end of the log (a torn last line included) are
moved, as they were, to `superseded.jsonl` (appended: a run resumed twice keeps both), and the
resumed run then records one `resume` event (`reason: "restart"`, `superseded`: how many lines were
moved, `unfinished_requests`: the ids of the requests of `prompts.jsonl` sent after the cut, which
stay there) where they stood. Nothing is lost: the moved lines are written and synced before the
log is replaced, at once, by its kept part (a resume killed between the two leaves the lines in both:
the next resume finds them at the end of `superseded.jsonl`, beyond what the seams count, and does not
move them twice).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from promptdesk.core.record.events import BaseEvent, parse_event_json, why_unreadable
from promptdesk.core.protocol.bounded import json_lines

RESTART = "restart"
SUPERSEDED = "superseded.jsonl"


@dataclass
class Cut:
    """A killed run's log split at its cut beat."""

    kept: list[BaseEvent]
    """The readable events before the cut, in order."""
    beat: BaseEvent | None
    """The `beat` event of the beat that was cut off (None when no beat had begun, or when the last
    beat had finished)."""
    lines: list[str]
    """The raw lines kept, and `moved` the raw lines from the cut on."""
    moved: list[str]
    closed: bool = False
    """True when the log holds a `close` event: the run ended cleanly, there is nothing to resume."""
    finished: BaseEvent | None = None
    """The `beat_end` of the last beat when it had finished: the cut is just after it."""
    since: float | None = None
    """The `t` of the cut: requests recorded at or after it were sent for what is played again."""
    unreadable: list[str] = field(default_factory=list)
    """A notice for each line before the cut that is no readable event (not the kill's torn last line):
    it stays on the log as it stood, but the session is rebuilt without it."""


def is_seam(event: BaseEvent) -> bool:
    """True for the `resume` event a resumed run writes (not an operator's un-pause)."""
    return event.type == "resume" and getattr(event, "reason", None) == RESTART


JOURNALS = "journals"
"""The `reason` of the `resume` event of a run resumed in its journal step (after its close)."""


def resumed_at(event: BaseEvent) -> bool:
    """True for the `resume` event of any resume, in a beat or in the journal step: each may have
    left one torn line behind in each log."""
    return event.type == "resume" and getattr(event, "reason", None) in (RESTART, JOURNALS)


def find_cut(run_dir: Path, reopen_stopped: bool = False) -> Cut:
    """Split `events.jsonl` at its last `beat` event (or at its end when no beat began).

    With `reopen_stopped`, a run closed by a stop (a sweep's budget, a signal) counts as cut where
    it stopped: at its last beat, or at the stop itself when no beat began before it, so that the
    stop and the close move aside with the beat they interrupted."""
    raw = log_lines(run_dir)
    parsed: list[tuple[int, BaseEvent]] = []
    unreadable: list[tuple[int, str]] = []
    for number, line in enumerate(raw):
        try:
            parsed.append((number, parse_event_json(line)))
        except ValueError as exc:
            if line.strip() and line.endswith("\n"):
                unreadable.append((number, why_unreadable(exc)))
    closes = [(n, e) for n, e in parsed if e.type == "close"]
    stopped = reopen_stopped and bool(closes) and getattr(closes[-1][1], "reason", None) == "stop"
    end = min([n for n, e in parsed if e.type in ("stop", "close")], default=len(raw)) if stopped else len(raw)
    beats = [(n, e) for n, e in parsed if e.type == "beat" and n < end]
    at, beat = beats[-1] if beats else (end, None)
    ended = [(n, e) for n, e in parsed if e.type == "beat_end" and beat is not None and at < n < end
             and e.beat == beat.beat]
    finished = None
    if ended:
        at, finished = ended[-1][0] + 1, ended[-1][1]
        beat = None
        at = _past_branch(parsed, at, end)
    since = finished.t if finished else beat.t if beat else None
    notices = [f"{Path(run_dir) / 'events.jsonl'} line {n + 1} is not a readable event ({why}): it stays on the log "
               "as it stood, but the run goes on as if it were not there, and its audit cannot call it clean"
               for n, why in unreadable if n < at]
    return Cut([e for n, e in parsed if n < at], beat, raw[:at], raw[at:], bool(closes) and not stopped, finished,
               since, notices)


def _past_branch(parsed: list[tuple[int, BaseEvent]], at: int, end: int) -> int:
    """Where a cut just after a finished beat falls when a take's `branch` event opens what follows: past
    it and the operator's change delivered right after it (its world event or note), which belong to
    the take itself, not to the beat that was cut; moved aside, the take would resume without them:
    a copy of its parent, with no change."""
    following = [(n, e) for n, e in parsed if at <= n < end]
    if not following or following[0][0] != at or following[0][1].type != "branch":
        return at
    branch = following[0][1]
    at += 1
    for n, event in following[1:]:
        if n != at or event.from_ != "operator" or event.type not in ("event", "note") or event.beat != branch.beat:
            break
        at += 1
    return at


def log_lines(run_dir: Path) -> list[str]:
    """The lines of `events.jsonl`, each with its newline (a torn last line without): split at `\n`
    only, since a record's JSON may hold U+2028 and other characters `str.splitlines` breaks at."""
    return json_lines((Path(run_dir) / "events.jsonl").read_text(encoding="utf-8", errors="replace"), keepends=True)


def supersede(run_dir: Path, cut: Cut) -> None:
    """Move the cut beat's lines to `superseded.jsonl`, then replace the log by its kept part."""
    run_dir = Path(run_dir)
    appended = None
    if cut.moved:
        moved = "".join(line if line.endswith("\n") else line + "\n" for line in cut.moved)
        if not _moved_already(run_dir, cut, moved):
            appended = (run_dir / SUPERSEDED).stat().st_size if (run_dir / SUPERSEDED).exists() else 0
            _write(run_dir / SUPERSEDED, moved, append=True)
    kept = "".join(line if line.endswith("\n") else line + "\n" for line in cut.lines)
    try:
        _write(run_dir / "events.jsonl.tmp", kept, append=False)
        os.replace(run_dir / "events.jsonl.tmp", run_dir / "events.jsonl")
    except OSError:  # the log stays as it was: so does superseded.jsonl (a full disk changes nothing)
        if appended is not None:
            try:
                os.truncate(run_dir / SUPERSEDED, appended)
            except OSError:
                pass
        raise


def _moved_already(run_dir: Path, cut: Cut, moved: str) -> bool:
    """True when a resume killed between its two steps already wrote these lines to `superseded.jsonl`
    but never replaced the log: the file ends with them, and holds them beyond what the seams on the
    log count (a beat played again that came out the same, byte for byte, has its own seam)."""
    path = run_dir / SUPERSEDED
    try:
        if path.stat().st_size < len(moved.encode("utf-8")):
            return False
        held = path.read_bytes()
    except OSError:
        return False
    counted = sum(n for e in cut.kept if resumed_at(e) and isinstance(n := (e.model_extra or {}).get("superseded"), int))
    lines = held.split(b"\n")
    return held.endswith(moved.encode("utf-8")) and len(lines) - (lines[-1] == b"") >= counted + len(cut.moved)


def _write(path: Path, text: str, *, append: bool) -> None:
    """Write and sync a private (0600) file. A write that fails (a full disk) leaves the file as it was
    (an append is cut back, a new file removed) and names it in the error."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    size = os.fstat(fd).st_size
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        try:
            os.truncate(path, size) if append else os.unlink(path)
        except OSError:
            pass
        if exc.filename is None:
            exc.filename = str(path)
        raise


def superseded_calls(run_dir: Path) -> list[BaseEvent]:
    """The `call` events of `superseded.jsonl` (the beats a resume played again): calls that were
    made, and paid for. Unreadable lines are passed over (the audit judges them)."""
    path = Path(run_dir) / SUPERSEDED
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError:
        return []
    calls: list[BaseEvent] = []
    for line in lines:
        if b'"call"' not in line:
            continue
        try:
            event = parse_event_json(line.decode("utf-8"))
        except ValueError:
            continue
        if event.type == "call":
            calls.append(event)
    return calls


def superseded_shortfall(run_dir: Path, events: list[BaseEvent]) -> str | None:
    """What `superseded.jsonl` lacks, when it holds fewer lines than the resumes' seams in `events` say
    they moved there (`"is missing, but ... 7 lines were moved there"`); None when it holds them all (or no
    seam moved any). An unreadable file is for its reader to name (None here)."""
    moved = sum(n for e in events if resumed_at(e) and isinstance(n := (e.model_extra or {}).get("superseded"), int))
    if moved <= 0:
        return None
    try:
        lines = (Path(run_dir) / SUPERSEDED).read_bytes().split(b"\n")
        held: int | None = len(lines) - (lines[-1] == b"")
    except FileNotFoundError:
        held = None
    except OSError:
        return None
    if held is not None and held >= moved:
        return None
    has = "is missing" if held is None else f"holds {held} lines"
    return (f"{SUPERSEDED} {has}, but the resumes' seams in events.jsonl say {moved} "
            f"line{'s were' if moved != 1 else ' was'} moved there")
