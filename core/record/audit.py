"""`promptdesk audit RUN_DIR`: re-check every recorded request against the run's private material.

The private material of a run is what `private.json` recorded at the start (each actor's profile,
journal as read and perspective; the coordinator notes) plus every actor's thinking in `events.jsonl`
(and in `superseded.jsonl`, the cut beat a resume played again). `promptdesk.core.record.audit_material` says
how a text is cut into grams (8-word shingles; a shorter text whole; code words) and what excuses a
match: public material as it was routed (so across line boundaries), or the recipient's own.

A request that holds an unexcused gram of another owner's text carries that text: the audit names
the request's line, its recipient, whose material it is and what kind (profile, journal,
perspective, coordinator_notes, thinking). What the coordinator wrote is not public: a suggested
world event or a coordinator note that reached the actors carrying private material is a leak too,
named by its line in `events.jsonl` (`promptdesk.core.record.audit_coordinator`). A request
recorded as a delta is scanned only where it is new (with an overlap), and inherits the leaks of the
part it shares with its base, so a long run audits in linear time.

Fail closed (`promptdesk.core.record.audit_record`): the audit is clean only when the record is whole. A
request of `prompts.jsonl` that cannot be rebuilt exactly (a delta whose base is missing, or whose
length does not add up: the file was edited) makes the audit unclean, and what can be read of it is
still checked, so that a leak in it is still named; so does a missing or garbled `prompts.jsonl`, or
one that holds fewer requests than `events.jsonl` records calls for. A line torn by a kill is skipped
with a warning: it was never a whole request, and no later line can extend it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from promptdesk.core.errors import NotARun
from promptdesk.core.record import audit_record as whole
from promptdesk.core.record.audit_coordinator import EVERYONE, checked_material, disclosed, whose
from promptdesk.core.record.audit_framing import Framing, Suspect
from promptdesk.core.record.cut import cut_of
from promptdesk.core.record.audit_material import COORDINATOR, Material
from promptdesk.core.record.audit_words import json_words, readable, written
from promptdesk.core.record.outputs import unfinished_requests
from promptdesk.core.record.private import read_private
from promptdesk.core.record.prompt_log import FILE as PROMPTS, read_prompts
from promptdesk.core.record.seams import SUPERSEDED

OVERLAP = 600
"""Characters of a delta's shared part scanned again, for a shingle that spans the seam."""
KINDS = ("profile", "journal", "perspective", "secret", "coordinator_notes", "thinking")
__all__ = ["COORDINATOR", "KINDS", "AuditReport", "Leak", "audit_run"]


@dataclass(frozen=True)
class Leak:
    """One request that carries another owner's private material."""

    line: int
    """The request's line in `prompts.jsonl`."""
    request_id: int
    recipient: str
    owner: str
    """Whose material: a cast slug, or `coordinator` for the coordinator notes."""
    kind: str
    excerpt: str
    beat: int | None = None
    purpose: str = "turn"
    carried_from: int | None = None
    """When the material came with the part of the request shared with an earlier one: that one's line."""
    source: str = PROMPTS
    """The file of `line`: `prompts.jsonl` (a request), or `events.jsonl` (a text the coordinator wrote
    that reached the actors: `request_id` is then 0 and `purpose` what the text was)."""
    shown: str = ""
    """The excerpt as the request wrote it, marks and case kept (empty: `excerpt` made readable)."""

    def describe(self, names: dict[str, str] | None = None) -> str:
        """One line for a person: which request (or coordinator text), to whom, whose material and what
        kind (with display names when `names` maps slugs to them)."""
        named = lambda slug: f"{slug} ({names[slug]})" if names and slug in names else slug  # noqa: E731
        if self.source == PROMPTS:
            where = f"{PROMPTS} line {self.line} (request {self.request_id}, {self.purpose}"
        else:
            where = f"{self.source} line {self.line} ({self.purpose} written by the coordinator"
        where += f", beat {self.beat})" if self.beat is not None else ")"
        whose = "the coordinator notes" if self.kind == "coordinator_notes" else \
            f"the operator's note to {self.owner}" if self.kind == "note" else f"{self.owner}'s {self.kind}"
        whose += f" ({names[self.owner]})" if names and self.owner in names else ""
        carried = f" [carried over from line {self.carried_from}]" if self.carried_from else ""
        to = named(self.recipient) if self.recipient else "every actor"
        return f"LEAK {where} sent to {to} carries {whose}: \"…{self.shown or readable(self.excerpt)}…\"{carried}"


@dataclass
class AuditReport:
    """The outcome of one audit: every leak, and any part of the record that could not be checked."""

    run_dir: Path
    requests: int = 0
    leaks: list[Leak] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    """Each cast member's display name, by slug."""
    warnings: list[str] = field(default_factory=list)
    """Lines skipped as torn (a process killed mid-write): what they held was never a whole request."""
    unfinished: int = 0
    """Requests sent for a beat a kill cut off (kept in `prompts.jsonl`, named by a resume's seam):
    checked like every other, since a server received them."""
    cut: str | None = None
    """Where the record stops short when its run was cut off (or is still being written): never clean."""
    in_flight: int = 0
    """Requests of the last beat on the log (or later) that no `call` event answers: under way when the
    run was cut off (shown only for a record cut short)."""
    disclosed: list[str] = field(default_factory=list)
    """What the operator wrote to the actors that carries private material: no leak (the operator may
    tell the cast anything), each said as a `DISCLOSED` line."""
    excused: int = 0
    """Matches of another owner's private words that the audit found in requests and excused as public
    material (as routed), the recipient's own, or the engine's framing: what precision is made of."""

    @property
    def clean(self) -> bool:
        """True when every request was checked and none carries another owner's private material."""
        return not self.leaks and not self.problems and not self.cut

    def summary(self) -> str:
        cut = f" ({self.unfinished} of them sent in beats a kill cut off)" if self.unfinished else ""
        if self.cut and self.in_flight:
            cut = f"{cut[:-1]}; {self.in_flight} unanswered at the cut)" if cut else f" ({self.in_flight} unanswered at the cut)"
        requests = counted(self.requests, "request")
        if self.clean:
            carry = "carries" if self.requests == 1 else "carry"
            yours = (f" beyond what you wrote to the cast yourself ({counted(len(self.disclosed), 'text')}, "
                     "DISCLOSED above)" if self.disclosed else "")
            return f"Audit clean: {requests}{cut} in {self.run_dir} {carry} no other owner's private material{yours}."
        unchecked = f"{len(self.problems)} part{'s' if len(self.problems) > 1 else ''} of the record could not be checked"
        short = "the run was cut off before its end (CUT above)"
        if not self.leaks:
            why = " and ".join([*([f"{unchecked} (UNCHECKED above)"] if self.problems else []), *([short] if self.cut else [])])
            readable = " that could be read" if self.problems else ""
            return (f"Audit INCOMPLETE: no leak in the {requests}{cut} of {self.run_dir}{readable}, "
                    f"but {why}, so the run cannot be called clean.")
        owners = sorted({f"{l.owner}'s {l.kind}" for l in self.leaks})
        text = f"Audit FAILED: {counted(len(self.leaks), 'leak')} in {requests} of {self.run_dir} ({', '.join(owners)})"
        return text + (f"; {unchecked}" if self.problems else "") + (f"; {short}" if self.cut else "") + "."


def counted(n: int, noun: str) -> str:
    """`1 request`, `2 requests`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def audit_run(run_dir: Path) -> AuditReport:
    """Audit one run folder; raises `NotARun` when it is not one."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotARun(f"{run_dir} is not a folder: give a run folder (runs/<scene>-<stamp>)")
    record = read_private(run_dir)
    report = AuditReport(run_dir, names={slug: m["name"] for slug, m in record["cast"].items()})
    intake = whole.Intake()
    numbers: list[int] = []
    events = whole.read_log(run_dir / "events.jsonl", intake, required=True, numbers=numbers)
    superseded = whole.read_log(run_dir / SUPERSEDED, intake, required=False)
    whole.check_superseded(intake, events, run_dir / SUPERSEDED)
    if not any(e.type == "start" for e in events):
        intake.problems.append("events.jsonl has no start event: what the run did cannot be told")
    report.unfinished = unfinished_requests(events)
    material, coordinator_leaks = checked_material(record, events, superseded)
    calls = whole.calls_of([*superseded, *events])
    report.cut = cut_of(run_dir, events, record)
    if not (run_dir / PROMPTS).exists():
        intake.problems.append(f"{PROMPTS} is missing: the {sum(calls.values())} calls events.jsonl records "
                               "cannot be checked")
    elif (sent := _scan_prompts(run_dir, material, report, intake)) is not None:
        whole.check_coverage(intake, calls, sent)
        last = max((e.beat for e in events if isinstance(e.beat, int)), default=None)
        report.in_flight = sum(max(0, n - calls.get(key, 0)) for key, n in sent.items()
                               if last is not None and isinstance(key[2], int) and key[2] >= last)
        _beyond_the_log(report, intake, sent, last)
    report.leaks += [Leak(numbers[index], 0, event.target or EVERYONE, found.owner, found.kind, found.excerpt,
                          event.beat, "suggested world event" if event.type == "event" else "coordinator note",
                          source="events.jsonl", shown=found.shown) for index, event, found in coordinator_leaks]
    report.disclosed = [_disclosure(numbers[index], event, found, report.names)
                        for index, event, found in disclosed(material, events, superseded)]
    report.problems += intake.problems
    report.warnings += intake.warnings
    return report


def _beyond_the_log(report: AuditReport, intake: whole.Intake, sent: Counter, last: int | None) -> None:
    """Requests of beats after the last one `events.jsonl` holds (a log cut short by hand or by a damaged
    disk, its requests kept): what was said and thought in those beats is not on the record, so they
    cannot be checked; never a leak (a line of theirs may have been public in the beats that are
    missing), always UNCHECKED."""
    beyond = sum(n for (_, _, beat), n in sent.items() if last is not None and isinstance(beat, int) and beat > last)
    if not beyond:
        return
    report.leaks = [leak for leak in report.leaks if leak.beat is None or leak.beat <= last]
    intake.problems.append(f"{PROMPTS} holds {counted(beyond, 'request')} of beats after beat {last}, where events.jsonl "
                           "ends: what was said and thought in those beats is not on the record, so they cannot be "
                           "checked; put the log's missing lines back (from a copy), then audit again")


def _disclosure(line: int, event, found, names: dict[str, str]) -> str:
    """One line for a person: a text the operator wrote to the cast that carries private material."""
    what = "world event" if event.type == "event" else "director's note"
    to = f"{event.target} ({names.get(event.target, event.target)})" if event.target else "every actor"
    return (f"events.jsonl line {line} ({what} written by the operator, beat {event.beat}) sent to {to} carries "
            f"{whose(found, names)}: \"…{found.shown or readable(found.excerpt)}…\" (what you write to the cast is yours to "
            "tell, so it is not counted as a leak)")


@dataclass
class _Pending:
    """A request's possible leak of one owner's material: the matches that may carry it."""

    leak: Leak
    end: int
    """Where the first match ends in the request's text (a later request that keeps it inherits it)."""
    suspects: list[Suspect]
    inherited: int = 0
    """How many of the suspects came with the part kept from the base request."""


MAX_SUSPECTS = 8
"""Matches kept per request and owner's material, awaiting the framing's verdict."""


def _scan_prompts(run_dir: Path, material: Material, report: AuditReport, intake: whole.Intake) -> Counter | None:
    """Scan every readable request for leaks; returns the requests by recipient, purpose and beat
    (None when `prompts.jsonl` cannot be opened)."""
    found: dict[int, list[_Pending]] = {}
    last_of: dict[str, int] = {}
    sent: Counter = Counter()
    misplaced: list[tuple[int, int]] = []
    unreadable: list[tuple[int, str, str]] = []
    pending: list[_Pending] = []
    framing = Framing()
    unexact = lambda problem: report.problems.append(f"{problem}: checked as far as it can be read")  # noqa: E731
    try:
        for record in read_prompts(run_dir, on_problem=unexact,
                                   on_unreadable=lambda n, line, exc: unreadable.append((n, line, whole.first_line(exc)))):
            report.requests += 1
            sent[(record.to, record.purpose, record.beat)] += 1
            if record.id != record.line:
                misplaced.append((record.line, record.id))
            leaks = _scan(material, framing, record, found.get(record.extends or -1, []))
            stale = last_of.get(record.to)
            if stale is not None:
                found.pop(stale, None)
            found[record.id], last_of[record.to] = leaks, record.id
            pending += leaks
    except OSError as exc:
        intake.problems.append(f"{PROMPTS} cannot be read ({exc.strerror or exc})")
        return None
    leaks, framed = _confirmed(pending, framing, material)
    report.leaks += leaks
    report.excused = material.excused + framed
    whole.judge_unreadable(intake, PROMPTS, unreadable)
    whole.check_numbering(intake, misplaced)
    return sent


def _confirmed(pending: list[_Pending], framing: Framing, material: Material) -> tuple[list[Leak], int]:
    """The leaks among the possible ones, now that the framing of every request is known, and how
    many matches the framing excused."""
    verdicts: dict[int, bool] = {}

    def leaks(suspect: Suspect) -> bool:
        if id(suspect) not in verdicts:
            verdicts[id(suspect)] = suspect.confirmed(framing, material)
        return verdicts[id(suspect)]

    out = []
    for item in pending:
        sure = next((i for i, suspect in enumerate(item.suspects) if leaks(suspect)), None)
        if sure is not None:
            carried = item.leak.carried_from if sure < item.inherited else None
            out.append(replace(item.leak, excerpt=item.suspects[sure].excerpt, shown=item.suspects[sure].shown,
                               carried_from=carried))
    return out, sum(1 for verdict in verdicts.values() if not verdict)


def _scan(material: Material, framing: Framing, record, base: list[_Pending]) -> list[_Pending]:
    """The possible leaks of one request (those of the part it keeps of its base, and its own)."""
    leaks: dict[tuple[str, str], _Pending] = {}
    for item in base:
        key = (item.leak.owner, item.leak.kind)
        if item.end <= record.keep and key not in leaks:
            leak = item.leak
            leaks[key] = _Pending(Leak(record.line, record.id, record.to, leak.owner, leak.kind, leak.excerpt,
                                       record.beat, record.purpose, leak.carried_from or leak.line, shown=leak.shown),
                                  item.end, list(item.suspects), len(item.suspects))
    start = max(0, record.keep - OVERLAP) if record.extends else 0
    fragment = record.text[start:]
    tokens, ends = json_words(fragment)
    framing.add(record.to, tokens)
    for gram, first, last in material.candidates(tokens):
        owners, needs = material.carried(record.to, tokens, first, last, record.t, record.beat)
        for owner, kind in owners:
            item = leaks.get((owner, kind))
            if item is None:
                leak = Leak(record.line, record.id, record.to, owner, kind, gram, record.beat, record.purpose)
                item = leaks[(owner, kind)] = _Pending(leak, start + ends[last - 1], [])
            if len(item.suspects) < MAX_SUSPECTS and all((s.excerpt, s.needs) != (gram, needs) for s in item.suspects):
                item.suspects.append(Suspect(owner, kind, gram, needs, written(fragment, ends, first, last)))
    return list(leaks.values())
