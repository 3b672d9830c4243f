"""`promptdesk audit RUN_DIR`: re-check every recorded request against the run's private material.

The private material of a run is what `private.json` recorded at the start (each actor's profile,
journal as read and perspective; the coordinator notes) plus every actor's thinking in `events.jsonl`
(and in `superseded.jsonl`, the cut beat a resume played again).
Each private text is cut into word shingles (`SHINGLE` consecutive words, case and punctuation
ignored; a text shorter than that but of at least `MIN_WORDS` words is one shingle of its own length).
A shingle counts against a recipient only when it is *distinctive*: not in anything public (the
scene's shared fields, speech, world events, notes and other engine lines of the log) and not in the
recipient's own material (its briefing, profile, journal, perspective and thinking; for a judge or a
facilitator, the operator context it is given by design). A request that holds one distinctive
shingle of another owner's text carries that text: the audit names the request's line, its
recipient, whose material it is and what kind (profile, journal, perspective, coordinator_notes,
thinking). A request recorded as a delta is scanned only where it is new (with an overlap), and
inherits the leaks of the part it shares with its base, so a long run audits in linear time.

Fail closed: a request of `prompts.jsonl` that cannot be rebuilt exactly (a delta whose base is
missing, or whose length does not add up: the file was edited) makes the audit unclean, and what can
be read of it is still checked, so that a leak in it is still named. A torn line (a process killed mid-write, later resumed) is skipped with a
warning: it was never a whole request, and no later line can extend it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import NotARun
from core.record.events import BaseEvent, parse_event_json
from core.record.prompt_log import read_prompts
from core.record.recorder import read_events
from core.record.private import read_private
from core.record.seams import SUPERSEDED

SHINGLE = 8
MIN_WORDS = 5
OVERLAP = 600
"""Characters of a delta's shared part scanned again, for a shingle that spans the seam."""
KINDS = ("profile", "journal", "perspective", "coordinator_notes", "thinking")
COORDINATOR = "coordinator"
_WORD = re.compile(r"\w+")
_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt])')


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

    def describe(self, names: dict[str, str] | None = None) -> str:
        """One line for a person: which request, to whom, whose material and what kind (with display
        names when `names` maps slugs to them)."""
        named = lambda slug: f"{slug} ({names[slug]})" if names and slug in names else slug  # noqa: E731
        where = f"prompts.jsonl line {self.line} (request {self.request_id}, {self.purpose}"
        where += f", beat {self.beat})" if self.beat is not None else ")"
        whose = "the coordinator notes" if self.kind == "coordinator_notes" else f"{self.owner}'s {self.kind}"
        whose += f" ({names[self.owner]})" if names and self.owner in names else ""
        carried = f" [carried over from line {self.carried_from}]" if self.carried_from else ""
        return f"LEAK {where} sent to {named(self.recipient)} carries {whose}: \"…{self.excerpt}…\"{carried}"


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

    @property
    def clean(self) -> bool:
        """True when every request was checked and none carries another owner's private material."""
        return not self.leaks and not self.problems

    def summary(self) -> str:
        if self.clean:
            return f"Audit clean: {self.requests} requests in {self.run_dir} carry no other owner's private material."
        owners = sorted({f"{l.owner}'s {l.kind}" for l in self.leaks})
        text = f"Audit FAILED: {len(self.leaks)} leaks in {self.requests} requests"
        text += f" ({', '.join(owners)})" if owners else ""
        return text + (f"; {len(self.problems)} problems" if self.problems else "") + "."


def words(text: str) -> list[str]:
    """The words of a text, lower-cased, punctuation dropped."""
    return _WORD.findall(text.lower())


def shingles(text: str) -> set[str]:
    """The word shingles of a private text (see the module docstring)."""
    tokens = words(text)
    if len(tokens) < MIN_WORDS:
        return set()
    size = min(SHINGLE, len(tokens))
    return {" ".join(tokens[i:i + size]) for i in range(len(tokens) - size + 1)}


def _all_shingles(tokens: list[str], sizes: Iterable[int]) -> dict[str, int]:
    """Every shingle of `tokens` of the given sizes, with the index of the token that ends it."""
    found: dict[str, int] = {}
    for size in sizes:
        for i in range(len(tokens) - size + 1):
            found.setdefault(" ".join(tokens[i:i + size]), i + size)
    return found


def _json_words(fragment: str) -> tuple[list[str], list[int]]:
    """The words of a piece of canonical request JSON (escapes are word breaks), and where each ends."""
    blanked = _ESCAPE.sub(lambda m: " " * len(m.group(0)), fragment)
    found = list(_WORD.finditer(blanked.lower()))
    return [m.group(0) for m in found], [m.end() for m in found]


@dataclass
class Material:
    """The private texts of a run by owner and kind, indexed by shingle."""

    index: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    own: dict[str, set[str]] = field(default_factory=dict)
    public: set[str] = field(default_factory=set)
    sizes: set[int] = field(default_factory=set)

    def add(self, owner: str, kind: str, text: str) -> None:
        for shingle in shingles(text):
            self.index.setdefault(shingle, set()).add((owner, kind))
            self.own.setdefault(owner, set()).add(shingle)
            self.sizes.add(shingle.count(" ") + 1)

    def allow(self, owner: str, text: str) -> None:
        """Text that is an owner's own without being private to others (a briefing, an operator context)."""
        self.own.setdefault(owner, set()).update(_all_shingles(words(text), self.sizes or {SHINGLE}))

    def carried(self, recipient: str, shingle: str) -> list[tuple[str, str]]:
        """The (owner, kind) pairs a shingle in a request to `recipient` would leak."""
        if shingle in self.public or shingle in self.own.get(recipient, ()):
            return []
        return sorted((o, k) for o, k in self.index.get(shingle, ()) if o != recipient)


def load_material(run_dir: Path) -> Material:
    """The run's private material (from `private.json` and `events.jsonl`)."""
    record = read_private(run_dir)
    events = read_events(run_dir)
    material = Material()
    for slug, member in record["cast"].items():
        for kind in ("profile", "journal", "perspective"):
            material.add(slug, kind, member.get(kind) or "")
    material.add(COORDINATOR, "coordinator_notes", record.get("coordinator_notes") or "")
    for event in _superseded(run_dir):
        if event.type == "think":
            material.add(event.from_, "thinking", event.text)
    public: list[str] = []
    for event in events:
        if event.type == "think":
            material.add(event.from_, "thinking", event.text)
        elif event.type not in ("journal", "call"):
            public += list(_strings(event.to_record()))
    scene = record.get("scene", {})
    public += [str(scene.get(k) or "") for k in ("name", "title", "setting", "prompt", "goal", "topic")]
    public += [e.get("text", "") for e in scene.get("events", [])]
    sizes = material.sizes or {SHINGLE}
    for text in public:
        material.public.update(s for s in _all_shingles(words(text), sizes) if s in material.index)
    for slug, member in record["cast"].items():
        material.allow(slug, member.get("briefing") or "")
    for judge in ("judge", "facilitator"):
        material.allow(judge, (record.get("operator_context") or "") + "\n" + (record.get("coordinator_notes") or ""))
    return material


def _superseded(run_dir: Path) -> list[BaseEvent]:
    """The readable events a resume moved out of the log (their thinking is private all the same)."""
    path = run_dir / SUPERSEDED
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(parse_event_json(line))
        except ValueError:
            continue
    return events


def _strings(value: object) -> Iterable[str]:
    """Every string inside a recorded event (its text, raw speech, rationale, ...)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def audit_run(run_dir: Path) -> AuditReport:
    """Audit one run folder; raises `NotARun` when it is not one."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotARun(f"{run_dir} is not a folder: give a run folder (runs/<scene>-<stamp>)")
    material = load_material(run_dir)
    report = AuditReport(run_dir, names={slug: m["name"] for slug, m in read_private(run_dir)["cast"].items()})
    found: dict[int, list[tuple[Leak, int]]] = {}
    last_of: dict[str, int] = {}
    unexact = lambda problem: report.problems.append(f"{problem}: checked as far as it can be read")  # noqa: E731
    for record in read_prompts(run_dir, warn=report.warnings.append, on_problem=unexact):
        report.requests += 1
        leaks = _scan(material, record, found.get(record.extends or -1, []))
        stale = last_of.get(record.to)
        if stale is not None:
            found.pop(stale, None)
        found[record.id], last_of[record.to] = leaks, record.id
        report.leaks += [leak for leak, _ in leaks]
    return report


def _scan(material: Material, record, base: list[tuple[Leak, int]]) -> list[tuple[Leak, int]]:
    """The leaks of one request, with where each ends in its text."""
    leaks: list[tuple[Leak, int]] = []
    seen: set[tuple[str, str]] = set()
    for leak, end in base:
        if end <= record.keep and (leak.owner, leak.kind) not in seen:
            seen.add((leak.owner, leak.kind))
            leaks.append((Leak(record.line, record.id, record.to, leak.owner, leak.kind, leak.excerpt, record.beat,
                               record.purpose, leak.carried_from or leak.line), end))
    start = max(0, record.keep - OVERLAP) if record.extends else 0
    tokens, ends = _json_words(record.text[start:])
    for shingle, last in _all_shingles(tokens, material.sizes or {SHINGLE}).items():
        for owner, kind in material.carried(record.to, shingle):
            if (owner, kind) in seen:
                continue
            seen.add((owner, kind))
            end = start + ends[last - 1]
            leaks.append((Leak(record.line, record.id, record.to, owner, kind, shingle, record.beat, record.purpose), end))
    return leaks
