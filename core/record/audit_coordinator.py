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

from dataclasses import dataclass, field
from typing import Any

from promptdesk.core.protocol.lines import world_event_line
from promptdesk.core.record.audit_framing import Suspect
from promptdesk.core.record.audit_material import (CLAUSE_KINDS, COORDINATOR, Material, engine_words, grams,
                                                   material_of, names_of, public_texts, routed_lines,
                                                   private_material, words, written_by_coordinator)
from promptdesk.core.record.audit_readings import readings
from promptdesk.core.record.audit_words import (CLAUSE, SHINGLE, clauses, hangul, no_space, scanned,
                                                short_clauses, written)
from promptdesk.core.record.audit_units import by, stamp
from promptdesk.core.record.events import BaseEvent

SPLIT = 3
"""The coordinator's earlier suggested world events a new one is read on from: a private text cut into
two parts across beats (each under a shingle and no whole clause) is found whole again."""
PART = 2
"""Words of the shorter part of a private text a judge cut in two (see `_cut_in_two`)."""
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
    shown: str = field(default="", compare=False)
    """The excerpt as the text wrote it (empty: as `excerpt` reads)."""


def suspects(material: Material, text: str, recipient: str = EVERYONE, t: float | None = None,
             beat: int | None = None, strict: bool = False) -> dict[tuple[str, str], list[Suspect]]:
    """The matches of other owners' private grams in `text` that nothing public or the recipient's own
    excuses, by (owner, kind), in any of its readings (`promptdesk.core.record.audit_readings`): when
    the text was written at `t` in `beat`, by what existed then (None: whatever exists now, as when a
    text is checked live; `strict`: before it, for a public text that must not excuse itself)."""
    found: dict[tuple[str, str], list[Suspect]] = {}
    for reading in readings(text):
        tokens, ends = scanned(reading)
        for gram, first, last in material.candidates(tokens, with_clauses=True):
            owners, needs = material.carried(recipient, tokens, first, last, t, beat, strict)
            for owner, kind in owners:
                if kind == "thinking" and _stock(gram):
                    continue
                kept = found.setdefault((owner, kind), [])
                if len(kept) < MAX_SUSPECTS:
                    kept.append(Suspect(owner, kind, gram, needs, written(reading, ends, first, last)))
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
            out.append(Carried(owner, kind, sure.excerpt, sure.shown))
    return out


def _thought(events: list[BaseEvent], owner: str, gram: str) -> bool:
    return any(e.type == "think" and e.from_ == owner and gram in grams(e.text) for e in events)


def routed(event: BaseEvent) -> bool:
    """A coordinator-written text that reached the actors: a world event it suggested (injected, or
    accepted by the operator), or one of its notes."""
    return event.type in ("event", "note") and written_by_coordinator(event)


def _carried_on(material: Material, text: str, before: list[BaseEvent], earlier: list[str],
                recipient: str = EVERYONE, written: BaseEvent | None = None) -> list[Carried]:
    """`carried` of `text`, and what it completes of a private text cut in two across it and the world
    events the coordinator suggested earlier that the actors were sent clean (`earlier`, `_cut_in_two`),
    one per owner and kind."""
    found = carried(material, text, before, recipient, written)
    when = (written.t, written.beat) if written is not None else (None, None)
    seen = {(item.owner, item.kind) for item in found}
    for item in [*_cut_in_two(material, earlier[-SPLIT:], text, *when), *_notes_to_one(text, before, recipient)]:
        if (item.owner, item.kind) not in seen:
            seen.add((item.owner, item.kind))
            found.append(item)
    return found


NOTE_WORDS = 3
"""Words of the shortest operator note to one actor looked for whole in what the coordinator writes
("Speak up." is any event's words; "Your sister is alive." is the note's)."""


def _notes_to_one(text: str, before: list[BaseEvent], recipient: str) -> list[Carried]:
    """The operator's notes to one actor that `text`, sent to `recipient` (`EVERYONE`), carries to
    another: a role A judge reads every note the operator gave, the actors only their own. A note's
    8 words in a row, a clause of it, or the whole of a short note (`NOTE_WORDS` words or more, 2 in Korean), in any
    reading of `text`, unless those words were said aloud or shown to all before (a speech, a world event)."""
    found: list[Carried] = []
    said_aloud: str | None = None
    for note in before:
        if note.type != "note" or note.from_ != OPERATOR or not note.target or note.target == recipient \
                or any(item.owner == note.target for item in found):
            continue
        tokens = words(note.text)
        fewest = NOTE_WORDS - 1 if hangul(note.text) else NOTE_WORDS  # `동생은 살아있다`: "your sister is alive"
        wanted = {*grams(note.text), *clauses(note.text)} if len(tokens) >= fewest else set()
        for reading in readings(text) if wanted else ():
            said = words(reading)
            hits = [" ".join(said[i:i + n]) for n in {gram.count(" ") + 1 for gram in wanted}
                    for i in range(len(said) - n + 1) if " ".join(said[i:i + n]) in wanted]
            if hits and said_aloud is None:
                said_aloud = "\n".join(" ".join(words(e.text)) for e in before if e.type in ("speak", "event"))
            hit = next((gram for gram in hits if f" {gram} " not in f" {said_aloud} ".replace("\n", " \n ")), None)
            if hit is not None:
                found.append(Carried(note.target, "note", hit))
                break
    return found


def _runs(texts: list[str]) -> dict[str, tuple[list[str], int]]:
    """Every run of `PART` to `SHINGLE - PART` words of each reading of `texts`, with the words it
    stands among and where it starts (the first place found)."""
    found: dict[str, tuple[list[str], int]] = {}
    for text in texts:
        for reading in readings(text):
            tokens = words(reading)
            for start in range(len(tokens)):
                for size in range(PART, min(SHINGLE - PART, len(tokens) - start) + 1):
                    found.setdefault(" ".join(tokens[start:start + size]), (tokens, start))
    return found


def _cut_in_two(material: Material, earlier: list[str], text: str, t: float | None,
                beat: int | None) -> list[Carried]:
    """A private text a judge reads (the notes, a perspective, a secret) cut in two across the
    coordinator's texts: its first words in one the actors were already sent, the rest in `text` (or the
    other way round), with framing of the judge's own around each ("A memo: you knew a month before" at
    beat 2, "Under it: the deadline and said nothing" at beat 4). Each part is `PART` words or more; the
    part in `text` is excused when every word of it is public as routed (an actor had said it). Only
    the kinds a judge may read and a scene's author wrote (`CLAUSE_KINDS`): a journal quotes the run's
    own lines (world events one after another), and no judge reads the actors' thinking."""
    if not earlier:
        return []
    grams = [(gram, owners) for gram, owners in [*material.index.items(), *material.clauses.items()]
             if gram.count(" ") + 1 >= 2 * PART and any(kind in CLAUSE_KINDS for _, kind in owners)]
    if not grams:
        return []
    before, now = _runs(earlier), _runs([text])
    found: list[Carried] = []
    for gram, owners in grams:
        parts = gram.split(" ")
        for cut in range(PART, len(parts) - PART + 1):
            head, tail = " ".join(parts[:cut]), " ".join(parts[cut:])
            if head in before and tail in now:
                (tokens, start), size = now[tail], len(parts) - cut
            elif tail in before and head in now:  # the end told first, the start after
                (tokens, start), size = now[head], cut
            else:
                continue
            if by(material.public.get(gram), t, beat) or all(
                    material.routed.holds(tokens, at, t, beat) for at in range(start, start + size)):
                continue
            found += [Carried(owner, kind, gram) for owner, kind in sorted(owners)
                      if kind in CLAUSE_KINDS and Carried(owner, kind, gram) not in found]
            break
    return found


def checked_material(record: dict[str, Any], events: list[BaseEvent],
                     superseded: list[BaseEvent]) -> tuple[Material, list[tuple[int, BaseEvent, Carried]]]:
    """The run's material (`material_of`) with each coordinator-written text that reached the actors
    checked in order: a clean one admitted as public; each one that carries private material returned
    with what it carries, by its index in `events`. It is checked as the gate checks a suggestion
    (`vet`), the short clauses included (`_short_clauses`, against what was shown before it), so that a
    text the gate would have withheld is never audited clean."""
    material = material_of(record, events, superseded)
    leaks = []
    clean: list[str] = []
    for index, event in enumerate(events):
        if not routed(event):
            continue
        before, recipient = [*superseded, *events[:index]], event.target or EVERYONE
        found = _carried_on(material, event.text, before, clean, recipient, event)
        kinds = {(item.owner, item.kind) for item in found}
        found += [item for item in _short_clauses(record, before, event.text)
                  if (item.owner, item.kind) not in kinds and item.owner != recipient]
        if found:
            leaks += [(index, event, item) for item in found]
        elif event.type == "event":
            clean.append(event.text)
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
    short = _short_clauses(record, events, text)
    private = private_material(record, events, [])
    earlier = [event.text for event in events if event.type == "event" and routed(event)]
    if not any(True for reading in readings(text) for _ in private.candidates(words(reading), with_clauses=True)) \
            and not _cut_in_two(private, earlier[-SPLIT:], text, None, None) \
            and not _notes_to_one(text, events, EVERYONE):
        return short  # no private gram in any reading, whole or completed: nothing could excuse what is not there
    material, leaks = checked_material(record, events, [])
    leaked = {id(event) for _, event, _ in leaks}
    clean = [event.text for event in events if event.type == "event" and routed(event) and id(event) not in leaked]
    found = _carried_on(material, text, events, clean)
    return found + [item for item in short if (item.owner, item.kind) not in {(f.owner, f.kind) for f in found}]


SHORT = 3
"""Words of the shortest clause of the notes, a perspective or a secret that the gate (`vet`) looks for
whole in a suggestion (see `_short_clauses`)."""


def _short_clauses(record: dict[str, Any], events: list[BaseEvent], text: str) -> list[Carried]:
    """The gate's own, stricter reading, failing closed where the audit would not: a clause of `SHORT`
    to `CLAUSE` - 1 words of a private text a judge reads (`CLAUSE_KINDS`: "Alice is pregnant." in a
    paragraph of notes; in a script written without spaces, 4 to 7 characters: `爱丽丝怀孕了`), found
    whole in a reading of `text`, when one of its words is one no actor has been shown (in the scene's
    shared fields, a name, a speech or world event, the engine's own words, a suggestion delivered
    before); in a script written without spaces, whose characters are its words and are shared by many
    words, also when two of its characters side by side were never shown side by side (hiragana, the
    grammar between Japanese words, is not counted where the clause has other characters:
    `田中太郎は店主` says nothing unseen when `店主の田中太郎` was shown), and a number of `NUMBER` digits or
    more of those texts (`4471`) alone, unless it was shown. Such a suggestion is withheld; the
    audit counts such a clause in what the coordinator wrote (`checked_material`), on this same rule, but
    not in the requests, where it must not call stock phrases leaks. One per owner and kind."""
    wanted: dict[str, tuple[str, str]] = {}
    sources = [(COORDINATOR, "coordinator_notes", record.get("coordinator_notes") or "")]
    sources += [(slug, kind, member.get(kind) or "") for slug, member in (record.get("cast") or {}).items()
                for kind in CLAUSE_KINDS if kind != "coordinator_notes"]
    for owner, kind, private in sources:
        for clause in [*short_clauses(str(private), SHORT), *_numbers(str(private))]:
            wanted.setdefault(clause, (owner, kind))
    said = [f" {' '.join(words(reading))} " for reading in readings(text)] if wanted else []
    hits = [(clause, whose) for clause, whose in wanted.items() if any(f" {clause} " in one for one in said)]
    if not hits:
        return []
    seen = [words(text_) for text_ in [*(text_ for text_, _ in [*public_texts(record, events), *routed_lines(record, events)]),
                                       *names_of(record), *engine_words(), *(e.text for e in events if routed(e))]]
    shown = {word for tokens in seen for word in tokens}
    pairs = {pair for tokens in seen for pair in zip(tokens, tokens[1:])}
    found: list[Carried] = []
    for clause, (owner, kind) in hits:
        tokens = clause.split(" ")
        if no_space(clause) and any(not _kana(word) for word in tokens):  # the grammar between words left out
            unseen = any(word not in shown for word in tokens if not _kana(word)) or any(
                pair not in pairs for pair in zip(tokens, tokens[1:]) if not any(map(_kana, pair)))
        else:
            unseen = any(word not in shown for word in tokens) or (
                no_space(clause) and any(pair not in pairs for pair in zip(tokens, tokens[1:])))
        if unseen and all((c.owner, c.kind) != (owner, kind) for c in found):
            found.append(Carried(owner, kind, clause, _as_written(text, tokens)))
    return found


def _as_written(text: str, clause: list[str]) -> str:
    """The words `clause` as the first reading of `text` that holds them wrote them (case, accents kept)."""
    for reading in readings(text):
        tokens, ends = scanned(reading)
        for first in range(len(tokens) - len(clause) + 1):
            if tokens[first:first + len(clause)] == clause:
                return written(reading, ends, first, first + len(clause))
    return ""


NUMBER = 3
"""Digits of the shortest number of a private text the gate looks for alone (`_numbers`)."""


def _numbers(text: str) -> list[str]:
    """The numbers of `NUMBER` digits or more in a private text: a safe's combination or a PIN ("The vault
    code is 4471.") is a secret on its own, as a code word is, though no word of letters goes with it."""
    return [word for word in words(text) if len(word) >= NUMBER and word.isdigit() and word.isascii()]


def _kana(word: str) -> bool:
    """A hiragana character: Japanese grammar (particles, endings) rather than a word's content."""
    return "\u3040" <= word <= "\u309f"


def whose(found: Carried, names: dict[str, str] | None = None) -> str:
    """`the coordinator notes`, `Alice's perspective`, `bob's thinking`: whose material, for a person."""
    if found.kind == "coordinator_notes":
        return "the coordinator notes"
    name = (names or {}).get(found.owner, found.owner)
    if found.kind == "note":
        return f"the operator's note to {name}"
    return f"{name}'s {found.kind}"
