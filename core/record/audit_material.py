"""What the isolation audit looks for, and what excuses a match: a run's private and public material.

**Private material** is each actor's profile, journal (as read at the start) and perspective, the
coordinator notes, and every actor's thinking. Each private text is cut into *grams* of normalised
words (`promptdesk.core.record.audit_words`): a text of `SHINGLE` words or more into every run of
`SHINGLE` consecutive words; a shorter text is one gram, the whole normalised phrase (down to a single
word); and a code word inside any text (a word that mixes letters and digits, such as `ZEPHYR-7`) is
a gram of its own. Where the coordinator's own texts are checked, each clause of 5 to 7 words of the
notes, a perspective or a secret is a gram too.

**Whatever excuses a match** does so only from the moment it existed: a leak the recipient then
repeats is not excused by its echo (`promptdesk.core.record.audit_units`).

**A match is excused** when the recipient may see those words anyway:

- by content: the gram appears inside one public text (anything a `speak`, world event, note or other
  public event holds, or the scene's shared fields), or inside the recipient's own material (its
  briefing, its own private texts and thinking; for a judge or a facilitator, the operator context
  it is given by design: with coordinator role A, the coordinator notes are part of it);
- by place: every word of the match, where it stands in the request, lies inside a public unit *as
  it was routed* there or inside the recipient's own material. A public unit is a routed line as the
  engine writes it (`Alice [TO: Bob, TONE: calm] "…"`, `[EVENT: …]`), any public text, or a cast
  member's name; a word lies inside one when a run of `COVER` words around it is a run of that unit
  (a name or a line shorter than that: the whole of it). So the stream of lines an actor received is
  public across its line boundaries: the end of one speech and the next speaker's name, quoted by a
  journal, is not a leak. The engine's fixed words to a judge (`promptdesk.core.protocol.judging`) and
  its fixed notes to the actors (`promptdesk.core.protocol.notes`) are public units too: a judge is a
  single recipient, whose framing cannot be learnt from several requests.

**Coordinator-written text is not public** (`written_by_coordinator`): a world event the coordinator
suggested, the coordinator's notes, its decisions, its close and goal verdict, a judge's fallback.
A judge may have read private material (role A's, the coordinator notes), so what it writes never
excuses a match; where it reaches the actors it is checked like a request
(`promptdesk.core.record.audit_coordinator`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from promptdesk.core.protocol import judging, notes
from promptdesk.core.protocol.evaluation import EVALUATOR
from promptdesk.core.protocol.lines import speech_line, world_event_line
from promptdesk.core.protocol.reply import CORRECTION_PROMPT
from promptdesk.core.protocol.stock_events import stock_events
from promptdesk.core.protocol.structured import JSON_CORRECTION_PROMPT
from promptdesk.core.record.audit_units import ALWAYS, COVER, Born, Units, around, by, earliest, stamp
from promptdesk.core.record.audit_words import CLAUSE, SHINGLE, clauses, grams, words
from promptdesk.core.record.events import BaseEvent
from promptdesk.core.record.outputs import JUDGE_FALLBACK

COORDINATOR = "coordinator"
PRIVATE_KINDS = ("profile", "journal", "perspective", "secret")
"""The private parts of each cast member recorded in `private.json` (besides the notes and thinking); a
`secret` (its profile's `## Secret` section, recorded apart so that a leak of it is named as one) is
part of the profile too."""
EVALUATOR_SEES = ("profile", "perspective", "secret")
"""What the evaluator is sent of every cast member by design (`promptdesk.core.protocol.evaluation`): its own
material. Thinking, journals and the coordinator notes are not, and are leaks in its requests."""
CLAUSE_KINDS = ("perspective", "secret", "coordinator_notes")
"""The private kinds whose clauses are grams where the coordinator's texts are checked (`clauses`)."""
Needs = tuple[tuple[str, ...], ...]
"""For each word of a match that nothing else excuses, the runs around it (see `Material.carried`)."""
_SCENE_PRIVATE = ("perspectives", "coordinator_notes", "cast", "provider", "judge", "evaluator")
"""Keys of the scene as loaded that are not shown to the cast as they stand."""


@dataclass
class Material:
    """A run's private grams by owner and kind, and what excuses a match (see the module docstring).
    Whatever excuses a match does so only from the moment it existed (`promptdesk.core.record.audit_units`)."""

    index: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    sizes: set[int] = field(default_factory=set)
    clauses: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    """The clauses of the notes, perspectives and secrets (`clauses`): grams only where the coordinator's
    own texts are checked (a judge may have read them), never in the requests."""
    public: dict[str, Born] = field(default_factory=dict)
    """Private grams that appear inside a public text, with when they first did."""
    own: dict[str, dict[str, Born]] = field(default_factory=dict)
    """Per recipient, the private grams that appear inside its own material, with when they first did."""
    routed: Units = field(default_factory=Units)
    """The public units, as routed."""
    own_units: dict[str, Units] = field(default_factory=dict)
    private_units: dict[str, Units] = field(default_factory=dict)
    """Per owner, its private texts as units (runs of framing never excuse an owner's own words)."""
    excused: int = 0
    """Matches of another owner's gram found in requests and excused (public or the recipient's own)."""
    born: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)
    """When a gram of an owner's material first existed (`t` and beat of its thought); material recorded
    at the start (profiles, journals, perspectives, notes) has none: it existed before any request."""
    _own_texts: dict[str, list[tuple[str, Born]]] = field(default_factory=dict)
    _first_words: tuple[int, set[str]] = (-1, set())

    def add(self, owner: str, kind: str, text: str, t: float | None = None, beat: int | None = None) -> None:
        """One private text of `owner` (which is also that owner's own material), written at `t` in
        `beat` (None: before the run's first request; a beat unknown: the earliest)."""
        when = (t, -math.inf if beat is None else beat) if t is not None else None
        for clause in clauses(text) if kind in CLAUSE_KINDS else ():
            self.clauses.setdefault(clause, set()).add((owner, kind))
        for gram in grams(text):
            self.index.setdefault(gram, set()).add((owner, kind))
            self.sizes.add(gram.count(" ") + 1)
            if when is not None and self.born.get((gram, owner, kind), (math.inf, math.inf)) > when:
                self.born[(gram, owner, kind)] = when
        self.private_units.setdefault(owner, Units()).add(words(text), short=False)
        self.allow(owner, text, stamp(t, beat))

    def allow(self, recipient: str, text: str, born: Born = ALWAYS) -> None:
        """Text that is a recipient's own (from `born` on), whether or not it is private to others."""
        if text:
            self._own_texts.setdefault(recipient, []).append((text, born))

    def settle(self, public: list[tuple[str, Born]]) -> None:
        """Index, once every private text is known, the public texts and each recipient's own."""
        self.public = self._found_in(public)
        for recipient, texts in self._own_texts.items():
            self.own[recipient] = self._found_in(texts)
            units = self.own_units.setdefault(recipient, Units())
            for text, born in texts:
                units.add(words(text), short=False, born=born)

    def admit(self, text: str, line: str, born: Born = ALWAYS) -> None:
        """A text found clean after `settle` (a coordinator-written one) becomes public from `born` on:
        as content, as a unit, and as the `line` it was routed as."""
        for gram, when in self._found_in([(text, born)]).items():
            earliest(self.public, gram, when)
        self.routed.add(words(text), short=False, born=born)
        self.routed.add(words(line), born=born)

    def _found_in(self, texts: list[tuple[str, Born]]) -> dict[str, Born]:
        found: dict[str, Born] = {}
        for text, born in texts:
            for gram, _, _ in self.candidates(words(text), with_clauses=True):
                earliest(found, gram, born)
        return found

    def candidates(self, tokens: list[str], with_clauses: bool = False) -> Iterator[tuple[str, int, int]]:
        """Every run of `tokens` that is a private gram: (the gram, where it starts, where it ends),
        in the order of `runs`. Only the words that begin some private gram are looked at (most of
        a request's words begin none), and each run there is joined once, at its own size.
        `with_clauses`: the clauses too (`clauses`), after the grams."""
        firsts, sizes, index, count = self._firsts(), sorted(self.sizes), self.index, len(tokens)
        for start in [i for i, token in enumerate(tokens) if token in firsts]:
            token = tokens[start]
            for size in sizes:
                if start + size > count:
                    break
                gram = token if size == 1 else " ".join(tokens[start:start + size])
                if gram in index:
                    yield gram, start, start + size
        if with_clauses and self.clauses:
            for size in range(CLAUSE, SHINGLE):
                for start in range(count - size + 1):
                    if (gram := " ".join(tokens[start:start + size])) in self.clauses:
                        yield gram, start, start + size

    def _firsts(self) -> set[str]:
        """The first word of every private gram (kept until the index grows)."""
        if self._first_words[0] != len(self.index):
            self._first_words = (len(self.index), {gram.split(" ", 1)[0] for gram in self.index})
        return self._first_words[1]

    def existed(self, gram: str, owner: str, kind: str, t: float | None, beat: int | None = None) -> bool:
        """Whether an owner's gram existed at `t` (a request's time; None: whenever) in `beat`. At the same
        instant (a clock that stood still: the offline improviser without a latency) the beats order
        them: a thought of a later beat did not exist yet; one of the same beat, or a beat unknown, may have."""
        born = self.born.get((gram, owner, kind))
        return born is None or by(born, t, beat)

    def carried(self, recipient: str, tokens: list[str], start: int, end: int, t: float | None = None,
                beat: int | None = None, strict: bool = False) -> tuple[list[tuple[str, str]], Needs]:
        """The (owner, kind) pairs that the words `tokens[start:end]` of a request to `recipient` may
        carry (none when the match is excused), and, for each of its words that no public unit and
        none of the recipient's own holds, the runs around it: the match is excused after all if
        each such word has one run among them that is the engine's framing (`promptdesk.core.record.audit_framing`).
        A gram that did not exist yet at `t` (a thought recorded after the request was sent) is carried by
        nobody; what excuses it must have existed at `t` too (a leak the recipient then said aloud or
        thought is not excused by its own echo); `strict`: before it (a public text checked against what
        was public before it was written, so that it cannot excuse itself)."""
        gram = " ".join(tokens[start:end])
        owners = [(o, k) for o, k in self.index.get(gram) or self.clauses.get(gram, ())
                  if o != recipient and self.existed(gram, o, k, t, beat)]
        if not owners:
            return [], ()
        own = self.own_units.get(recipient)
        mine = self.own.get(recipient, {})
        needs = () if by(self.public.get(gram), t, beat, strict) or by(mine.get(gram), t, beat, strict) else tuple(
            around(tokens, at) for at in range(start, end) if not self.routed.holds(tokens, at, t, beat, strict)
            and not (own is not None and own.holds(tokens, at, t, beat, strict)))
        if not needs:
            self.excused += 1
            return [], ()
        return sorted(owners), needs


def written_by_coordinator(event: BaseEvent) -> bool:
    """Text the coordinator wrote (and a judge may have written after reading private material): a
    world event it suggested (`suggested_by`, whoever injected it), its notes, decisions and close
    (with the goal verdict), and a judge's fallback line (which quotes the judge's answer). Its
    scheduled world events are the scene file's, and its bookkeeping (`route`, `beat`...) the engine's.
    Fail closed: an event that says it was suggested, in any shape (the engine writes only
    `suggested_by: coordinator`; a garbled or forged record may hold another), is the coordinator's."""
    extra = event.model_extra or {}
    if "suggested_by" in extra:
        return True
    if event.type == "close":
        return True
    fallback = event.type == "system" and getattr(event, "reason", None) == JUDGE_FALLBACK
    return event.from_ == COORDINATOR and (event.type in ("note", "decision") or fallback)


def public_texts(record: dict[str, Any], events: list[BaseEvent]) -> Iterator[tuple[str, Born]]:
    """Every public text of a run, with when it became public: each public event's strings (from its
    `t` and beat) and the scene's shared fields (always).

    Not public: thinking, journal entries, calls, evaluations (an evaluator reads every secret and goal,
    and its reasoning quotes them), whatever the coordinator wrote (`written_by_coordinator`): a
    judge may see the coordinator notes, and a note the operator gave one actor (`note_to_one`), with
    the take that records it."""
    for event in events:
        if event.type in ("think", "journal", "call", "evaluation") or written_by_coordinator(event) \
                or note_to_one(event) or (event.type == "branch" and (getattr(event, "change", None) or {}).get("to")):
            continue
        born = stamp(event.t, event.beat)
        yield from ((text, born) for text in strings(event.to_record()))
    yield from ((text, ALWAYS) for text in strings({k: v for k, v in (record.get("scene") or {}).items()
                                                      if k not in _SCENE_PRIVATE}))


def routed_lines(record: dict[str, Any], events: list[BaseEvent]) -> Iterator[tuple[str, Born]]:
    """Each speech and world event as the engine routes it (one line, headed by the speaker's name),
    with when it was said."""
    names = {slug: member.get("name") or slug for slug, member in record["cast"].items()}
    for event in events:
        if event.type == "speak" and getattr(event, "action", "") != "silent":
            yield speech_line(names.get(event.from_, event.from_), event), stamp(event.t, event.beat)
        elif event.type == "event" and not written_by_coordinator(event):
            yield world_event_line(event.text), stamp(event.t, event.beat)


def names_of(record: dict[str, Any]) -> Iterator[str]:
    """Every way a cast member is named: slug, display name, first name."""
    for slug, member in record["cast"].items():
        name = member.get("name") or slug
        yield from (slug, name, name.split()[0] if name.split() else name)


def strings(value: object) -> Iterator[str]:
    """Every string inside a recorded value (an event's text, raw speech, rationale, ...)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def engine_words() -> list[str]:
    """The engine's own fixed words (to a judge, in its notes, in its correction prompts, the offline
    judge's stock world events): public wherever they appear, a thought or a journal that copies them
    included."""
    return [*judging.fixed_texts(), *notes.fixed_texts(), CORRECTION_PROMPT, JSON_CORRECTION_PROMPT, *stock_events()]


def material_of(record: dict[str, Any], events: list[BaseEvent], superseded: list[BaseEvent]) -> Material:
    """The run's material, from its start record (`private.json`) and its events (thinking included
    from the beat a resume played again)."""
    material = private_material(record, events, superseded)
    for judge in ("judge", "facilitator"):
        material.allow(judge, record.get("operator_context") or "")
    public = [*public_texts(record, events), *((text, ALWAYS) for text in engine_words())]
    material.settle(public)
    for text, born in public:
        material.routed.add(words(text), short=False, born=born)
    for line, born in [*routed_lines(record, events), *((name, ALWAYS) for name in names_of(record))]:
        material.routed.add(words(line), born=born)
    for text in [*judging.fixed_texts(), *notes.fixed_texts()]:
        material.routed.add(words(text), short=False)
    return material


def private_material(record: dict[str, Any], events: list[BaseEvent], superseded: list[BaseEvent]) -> Material:
    """The run's private texts alone (each cast member's, the coordinator notes, every thought), indexed
    but not yet settled: enough to tell whether a text holds any private gram at all."""
    material = Material()
    for slug, member in record["cast"].items():
        for kind in PRIVATE_KINDS:
            material.add(slug, kind, member.get(kind) or "")
        material.allow(slug, member.get("briefing") or "")
        for kind in EVALUATOR_SEES:
            material.allow(EVALUATOR, member.get(kind) or "")
    material.add(COORDINATOR, "coordinator_notes", record.get("coordinator_notes") or "")
    for event in [*superseded, *events]:
        if event.type == "think":
            material.add(event.from_, "thinking", event.text, event.t, event.beat)
        elif note_to_one(event):
            material.add(event.target, "note", event.text, event.t, event.beat)
            for reader in ("judge", "facilitator", EVALUATOR):  # a judge is shown every note, by design
                material.allow(reader, event.text, stamp(event.t, event.beat))
    return material


def note_to_one(event: BaseEvent) -> bool:
    """A director's note the operator gave one actor: that actor's private material from when it was given
    (the engine routes it to no one else; a judge reads it by design), public only once said aloud."""
    return event.type == "note" and event.from_ == "operator" and bool(event.target)
