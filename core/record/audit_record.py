"""Fail closed: the audit is only clean when the record it read is whole.

A run folder's `prompts.jsonl` is not whole when it is missing or cannot be opened; when a line of it
cannot be read and was not torn by a kill (a torn line is JSON cut off at its end: the last line of
the file, or a line a resume ended; there are at most as many of those as the run was resumed); when
its requests are not numbered by their lines (lines were removed, added or moved); or when it holds
fewer requests than `events.jsonl` (with `superseded.jsonl`) records calls for. Every call records
its request before it is sent and its `call` event after it ends (`promptdesk.core.engine.turn.call`), so for
each recipient, purpose and beat there are at least as many requests as calls. The same goes for
`events.jsonl` itself (a line that cannot be read may hold thinking the audit would miss) and for a
log without its `start` event.

What cannot be read is a *problem* of the audit's report (exit 1, named); a torn line is a *warning*.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from promptdesk.core.record.events import BaseEvent, parse_event_json, why_unreadable
from promptdesk.core.record.prompt_log import FILE as PROMPTS
from promptdesk.core.record.seams import resumed_at, superseded_shortfall

Key = tuple[str, str, "int | None"]
"""A request's recipient, purpose and beat."""


@dataclass
class Intake:
    """What could not be read, as it is found."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seams: int = 0
    """How many times the run was resumed (each may leave one torn line in each log)."""


def torn(line: str) -> bool:
    """True when an unreadable line is JSON cut off before its end (a kill mid-write)."""
    text = line.rstrip("\r\n")
    if not text.startswith("{"):
        return False
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(text) - 6
    except RecursionError:  # nested past any bound: garbled, whatever its end
        return False
    return False


def judge_unreadable(intake: Intake, name: str, found: list[tuple[int, str, str]]) -> None:
    """Sort a log's unreadable lines (number, the line as it stands with its newline if it has one,
    why) into torn, a warning, and garbled, a problem. An unended last line may be torn by the kill
    no resume followed; any other torn line needs a resume that ended it, and never in `events.jsonl`:
    a resume moves that log's torn last line aside (to `superseded.jsonl`), so a torn-looking line
    inside it was not left by a kill."""
    ended_by_resume = 0 if name == "events.jsonl" else intake.seams
    for number, line, why in found:
        last = not line.endswith("\n")
        if torn(line) and (last or ended_by_resume > 0):
            ended_by_resume -= 0 if last else 1
            intake.warnings.append(f"{name} line {number} skipped: torn by a kill ({why})")
        else:
            intake.problems.append(f"{name} line {number} cannot be read ({why}): what it held is not checked")


def read_log(path: Path, intake: Intake, *, required: bool, numbers: list[int] | None = None) -> list[BaseEvent]:
    """The readable events of `events.jsonl` or `superseded.jsonl`; what cannot be read goes to `intake`.
    `numbers`, when given, receives each event's line number."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if required:
            intake.problems.append(f"{path.name} is missing")
        return []
    except OSError as exc:
        intake.problems.append(f"{path.name} cannot be read ({exc.strerror or exc})")
        return []
    events: list[BaseEvent] = []
    unreadable: list[tuple[int, str, str]] = []
    lines = raw.split(b"\n")
    for number, data in enumerate(lines, start=1):
        if not data.strip():
            continue
        try:
            events.append(parse_event_json(data.decode("utf-8")))
            if numbers is not None:
                numbers.append(number)
        except ValueError as exc:
            ending = "" if number == len(lines) else "\n"
            unreadable.append((number, data.decode("utf-8", errors="replace") + ending, first_line(exc)))
    intake.seams = max(intake.seams, sum(1 for e in events if resumed_at(e)))
    judge_unreadable(intake, path.name, unreadable)
    return events


def first_line(exc: Exception) -> str:
    """Why a line cannot be read, short: for a line that is JSON but not an event, the field at fault."""
    return why_unreadable(exc)


def calls_of(events: list[BaseEvent]) -> Counter[Key]:
    """The calls a log records, by recipient, purpose and beat."""
    return Counter((e.target or "", getattr(e, "purpose", "turn"), e.beat) for e in events if e.type == "call")


def check_coverage(intake: Intake, calls: Counter[Key], sent: Counter[Key]) -> None:
    """Add a problem when `prompts.jsonl` holds fewer requests than the calls the log records."""
    total = sum(calls.values())
    missing = {key: n - sent.get(key, 0) for key, n in calls.items() if n > sent.get(key, 0)}
    if not missing:
        return
    if not sent:
        intake.problems.append(f"{PROMPTS} holds no request, but events.jsonl records {total} calls")
        return
    (to, purpose, beat), _ = min(missing.items(), key=lambda item: (item[0][2] is None, item[0][2] or 0, item[0][:2]))
    where = f" at beat {beat}" if beat is not None else ""
    intake.problems.append(f"{PROMPTS} lacks {sum(missing.values())} of the {total} requests events.jsonl records "
                           f"calls for (the first: a {purpose} request to {to}{where})")


def check_numbering(intake: Intake, misplaced: list[tuple[int, int]]) -> None:
    """Add a problem when requests do not stand on the lines their ids give (lines removed, added, moved)."""
    if misplaced:
        line, request = misplaced[0]
        intake.problems.append(f"{PROMPTS} line {line} holds request {request}: lines were removed, added or moved "
                               f"({len(misplaced)} requests out of place)")


def check_superseded(intake: Intake, events: list[BaseEvent], path: Path) -> None:
    """Add a problem when `superseded.jsonl` holds fewer lines than the resumes' seams say they moved
    there: the thinking of the beats played again (and the calls they paid for) cannot all be checked."""
    if short := superseded_shortfall(path.parent, events):
        intake.problems.append(f"{short}: what the beats played again held cannot all be checked")
