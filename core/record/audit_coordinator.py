"""Coordinator-written text is coordinator material (DESIGN §10): checked before it reaches an actor,
and by the audit after.

A judge reads what the actors may not (with role A, the coordinator notes); whatever it writes is
therefore private to the coordinator until shown clean. One check, two uses:

- **Before** a suggested world event is shown to the operator or injected (`vet`): its words are
  looked for in the run's private material as the audit cuts it (every actor's profile, journal and
  perspective, the coordinator notes, every actor's thinking so far), excused only by what is public
  (`promptdesk.core.record.audit_material`). A suggestion that carries any is withheld.
- **After**, in `promptdesk audit` (`checked_material`): every coordinator-written text that reached
  the actors (a suggested world event, whoever injected it; a coordinator note) is checked the same
  way against the private material recorded before it. One found clean is public from then on (what
  the actors think about it later is theirs); one that carries private material stays private, so it
  excuses nothing in the requests that carried it, and is a leak of its own, named by its line in
  `events.jsonl`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from promptdesk.core.protocol.lines import world_event_line
from promptdesk.core.record.audit_framing import Suspect
from promptdesk.core.record.audit_material import (COORDINATOR, Material, grams, material_of, private_material,
                                                   words, written_by_coordinator)
from promptdesk.core.record.audit_readings import readings
from promptdesk.core.record.audit_words import CLAUSE
from promptdesk.core.record.audit_units import stamp
from promptdesk.core.record.events import BaseEvent

MAX_SUSPECTS = 8
"""Matches kept per text and owner's material."""
OPERATOR = "operator"
"""Who wrote a world event or a note the operator gave (console, `branch`)."""
EVERYONE = ""
"""The recipient of a text sent to the whole cast: no one's own material excuses a match in it."""


@dataclass(frozen=True)
class Carried:
    """A text carries an owner's private material: whose, what kind, and the words (a gram) found."""

    owner: str
    kind: str
    excerpt: str


def suspects(material: Material, text: str, recipient: str = EVERYONE, t: float | None = None,
             beat: int | None = None, strict: bool = False) -> dict[tuple[str, str], list[Suspect]]:
    """The matches of other owners' private grams in `text` that nothing public or the recipient's own
    excuses, by (owner, kind), in any of its readings (`promptdesk.core.record.audit_readings`): when
    the text was written at `t` in `beat`, by what existed then (None: whatever exists now, as when a
    text is checked live; `strict`: before it, for a public text that must not excuse itself)."""
    found: dict[tuple[str, str], list[Suspect]] = {}
    for reading in readings(text):
        tokens = words(reading)
        for gram, first, last in material.candidates(tokens, with_clauses=True):
            owners, needs = material.carried(recipient, tokens, first, last, t, beat, strict)
            for owner, kind in owners:
                if kind == "thinking" and _stock(gram):
                    continue
                kept = found.setdefault((owner, kind), [])
                if len(kept) < MAX_SUSPECTS:
                    kept.append(Suspect(owner, kind, gram, needs))
    return found


def _stock(gram: str) -> bool:
    """A whole thought of under `CLAUSE` words with no digit ("Not again.", "Hmm."): a stock phrase a
    world event may well say. No judge reads the actors' thinking, so in what the coordinator writes
    such a match is a coincidence, not a leak (a longer thought, or one with a code word, still counts)."""
    return gram.count(" ") + 1 < CLAUSE and not any(c.isdigit() for c in gram)


def carried(material: Material, text: str, before: list[BaseEvent], recipient: str = EVERYONE,
            written: BaseEvent | None = None, strict: bool = False) -> list[Carried]:
    """What private material `text` carries to `recipient`, given the events `before` it: a match of an
    actor's thinking counts only if that actor thought those words before (later thinking may quote it),
    and only what was public when it was written (the `written` event's time; `strict`: before it)
    excuses a match."""
    when = (written.t, written.beat) if written is not None else (None, None)
    out = []
    for (owner, kind), found in sorted(suspects(material, text, recipient, *when, strict).items()):
        sure = next((s for s in found if kind != "thinking" or _thought(before, owner, s.excerpt)), None)
        if sure is not None:
            out.append(Carried(owner, kind, sure.excerpt))
    return out


def _thought(events: list[BaseEvent], owner: str, gram: str) -> bool:
    return any(e.type == "think" and e.from_ == owner and gram in grams(e.text) for e in events)


def routed(event: BaseEvent) -> bool:
    """A coordinator-written text that reached the actors: a world event it suggested (injected, or
    accepted by the operator), or one of its notes."""
    return event.type in ("event", "note") and written_by_coordinator(event)


def checked_material(record: dict[str, Any], events: list[BaseEvent],
                     superseded: list[BaseEvent]) -> tuple[Material, list[tuple[int, BaseEvent, Carried]]]:
    """The run's material (`material_of`) with each coordinator-written text that reached the actors
    checked in order: a clean one admitted as public; each one that carries private material returned
    with what it carries, by its index in `events`."""
    material = material_of(record, events, superseded)
    leaks = []
    for index, event in enumerate(events):
        if not routed(event):
            continue
        found = carried(material, event.text, [*superseded, *events[:index]], event.target or EVERYONE, event)
        if found:
            leaks += [(index, event, item) for item in found]
        else:
            material.admit(event.text, world_event_line(event.text) if event.type == "event" else event.text,
                           stamp(event.t, event.beat))
    return material, leaks


def disclosed(material: Material, events: list[BaseEvent],
              superseded: list[BaseEvent]) -> list[tuple[int, BaseEvent, Carried]]:
    """What the operator wrote to the actors (a world event, a director's note, a take's change) that
    carries private material: public by design (the operator may tell the cast anything), so no leak,
    but said, so that a clean audit never claims the actors were sent no private words when the
    operator sent them some. Each with what it carries, by its index in `events`."""
    found = []
    for index, event in enumerate(events):
        if event.type in ("event", "note") and event.from_ == OPERATOR and not written_by_coordinator(event):
            found += [(index, event, item) for item in carried(material, event.text, [*superseded, *events[:index]],
                                                                event.target or EVERYONE, event, strict=True)]
    return found


def vet(record: dict[str, Any] | None, events: list[BaseEvent], text: str) -> list[Carried]:
    """What a coordinator-written text meant for every actor would carry, given the run's start record
    (`private.json`'s) and its events so far. Fail closed: with no record to check against, it is
    said to carry the coordinator notes (nothing can show it does not)."""
    if record is None:
        return [Carried(COORDINATOR, "coordinator_notes", "(no private record to check against)")]
    private = private_material(record, events, [])
    if not any(True for reading in readings(text) for _ in private.candidates(words(reading), with_clauses=True)):
        return []  # no private gram in any reading: nothing could excuse what is not there
    material, _ = checked_material(record, events, [])
    return carried(material, text, events)


def whose(found: Carried, names: dict[str, str] | None = None) -> str:
    """`the coordinator notes`, `Alice's perspective`, `bob's thinking`: whose material, for a person."""
    if found.kind == "coordinator_notes":
        return "the coordinator notes"
    name = (names or {}).get(found.owner, found.owner)
    return f"{name}'s {found.kind}"
