"""Emotional arcs, relationships and per-beat timing, read from what a run's `events.jsonl` holds.

Nothing here asks a model anything: every speech's bracket header (spec 004 Appendix B) already
records its `TONE:` and its `TO:`, and every call its latency.

- an actor's *arc* is one tone per beat: the `TONE:` of its last speech (spoken, interrupting or
  reacting) in that beat, None in a beat where it said nothing or gave no tone;
- a *relationship* is one ordered pair, speaker to addressee: how many speeches the speaker
  addressed to the other (`TO:` naming them, alone or among others) and in which tones (a speech
  with no `TONE:` counts under `untoned`); speeches addressed to no cast member are not a pair;
- a beat's *timing*: its wall time (from its first recorded event to the next beat's first, the
  last beat to the close), its slowest call (seconds, and whose) and the spread of its calls'
  latencies (slowest minus fastest: what waiting for the slowest actor cost the beat). The journal
  step's calls, after the close, are in no beat.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from promptdesk.core.record import outputs
from promptdesk.core.record.events import BaseEvent, CallEvent, CloseEvent, SpeakEvent

UNTONED = "untoned"
"""The tone a relationship counts for a speech that gave none."""

JOURNAL = "journal"
"""The purpose of the journal step's calls: made after the scene closed, so in no beat."""


def toned_speeches(events: list[BaseEvent]) -> list[SpeakEvent]:
    """Every speech that said or did something (not a silence), in log order."""
    return [e for e in events if isinstance(e, SpeakEvent) and e.action != "silent"]


def tone_of(speech: SpeakEvent) -> str | None:
    """A speech's tone as recorded, lower-cased and trimmed (None when it gave none)."""
    tone = (speech.tone or "").strip().lower()
    return tone or None


def arcs(events: list[BaseEvent]) -> dict[str, list[str | None]]:
    """Per actor (every cast member, even a silent one), one tone per beat."""
    count = outputs.beats(events)
    rows: dict[str, list[str | None]] = {slug: [None] * count for slug in outputs.cast_names(events)}
    for speech in toned_speeches(events):
        tone = tone_of(speech)
        if speech.beat is None or tone is None:
            continue
        row = rows.setdefault(speech.from_, [None] * count)
        if speech.beat < len(row):
            row[speech.beat] = tone
    return rows


def current_tones(events: list[BaseEvent]) -> dict[str, str]:
    """Each actor's latest recorded tone (actors who never gave one are left out)."""
    return {s.from_: tone for s in toned_speeches(events) if (tone := tone_of(s))}


def addressees(speech: SpeakEvent, names: dict[str, str]) -> list[str]:
    """The cast members a speech's `TO:` names (by display name or slug; a list counts each; a
    speaker addressing itself is no pair)."""
    by_name = {name.lower(): slug for slug, name in names.items()} | {slug.lower(): slug for slug in names}
    whole = (speech.target or "").strip().lower()
    found = [by_name[whole]] if whole in by_name else [by_name[t.strip()] for t in whole.split(",")
                                                       if t.strip() in by_name]
    return [slug for slug in dict.fromkeys(found) if slug != speech.from_]


@dataclass
class Relationship:
    """One speaker's speeches to one addressee: how many, and in which tones."""

    speeches: int = 0
    tones: dict[str, int] = field(default_factory=dict)


def relationships(events: list[BaseEvent]) -> dict[str, dict[str, Relationship]]:
    """Speaker to addressee to their `Relationship` (only pairs that spoke at least once)."""
    names = outputs.cast_names(events)
    pairs: dict[str, dict[str, tuple[int, Counter[str]]]] = {}
    for speech in toned_speeches(events):
        for slug in addressees(speech, names):
            count, tones = pairs.setdefault(speech.from_, {}).get(slug, (0, Counter()))
            tones[tone_of(speech) or UNTONED] += 1
            pairs[speech.from_][slug] = (count + 1, tones)
    return {speaker: {to: Relationship(n, dict(tones.most_common())) for to, (n, tones) in row.items()}
            for speaker, row in pairs.items()}


@dataclass
class BeatTiming:
    """One beat's wall time, its slowest call, and the spread of its calls' latencies."""

    beat: int
    wall_s: float
    calls: int
    slowest_s: float | None
    slowest: str | None
    spread_s: float | None


def beat_timing(events: list[BaseEvent]) -> list[BeatTiming]:
    """One `BeatTiming` per beat played (a beat with no call has no slowest call and no spread)."""
    count = outputs.beats(events)
    starts: dict[int, float] = {}
    ends: dict[int, float] = {}
    calls: dict[int, list[CallEvent]] = {}
    for event in events:
        if event.beat is None or event.beat >= count:
            continue
        if isinstance(event, CallEvent):
            if event.purpose == JOURNAL:
                continue
            calls.setdefault(event.beat, []).append(event)
        starts[event.beat] = min(starts.get(event.beat, event.t), event.t)
        ends[event.beat] = max(ends.get(event.beat, event.t), event.t)
    close = next((e.t for e in events if isinstance(e, CloseEvent)), None)
    out = []
    for beat in range(count):
        if beat not in starts:
            continue
        later = next((starts[b] for b in range(beat + 1, count) if b in starts), None)
        end = later if later is not None else max(ends[beat], close if close is not None else ends[beat])
        made = calls.get(beat, [])
        slowest = max(made, key=lambda c: c.latency_s, default=None)
        out.append(BeatTiming(
            beat=beat, wall_s=round(max(0.0, end - starts[beat]), 3), calls=len(made),
            slowest_s=round(slowest.latency_s, 3) if slowest else None,
            slowest=(slowest.target or slowest.from_) if slowest else None,
            spread_s=round(slowest.latency_s - min(c.latency_s for c in made), 3) if slowest else None))
    return out
