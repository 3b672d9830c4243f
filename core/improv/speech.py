"""The inside of `<speech>` for each move, in spec 004 Appendix B form, in this character's manner.

Tones come from the profile's own tone words when they fit the mood, gestures from the profile's
physical habits; lines come from the phrase banks filled with scene words, never repeating a line
already said in the scene.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from promptdesk.core.improv import phrases
from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.temperament import Temperament


@dataclass
class Cue:
    """What this turn is: the move, whom it is for, what it is about."""

    move: str
    to: str = ""
    topic: str = ""
    echo: str = ""


def tone(t: Temperament, mood: str, rng: random.Random) -> str:
    """A tone for a mood, from the profile's own tone words half the time when it has fitting ones."""
    known = set().union(*phrases.VALENCE.values())
    fitting = [x for x in t.tones if x in phrases.VALENCE.get(mood, ()) or (mood == "neutral" and x not in known)]
    return rng.choice(fitting) if fitting and rng.random() < 0.5 else rng.choice(phrases.TONES[mood])


def gesture(t: Temperament, mood: str, rng: random.Random) -> str:
    """A gesture: the profile's own physical habits first, else one that fits the mood."""
    return rng.choice(t.gestures) if t.gestures and rng.random() < 0.6 else rng.choice(phrases.GESTURES[mood])


def _words(brief: Briefing, cue: Cue, rng: random.Random, move: str) -> str:
    """A line from the move's bank, filled with scene words, not yet said in the scene if possible."""
    bank = [s for s in phrases.SPEECH[move] if (cue.to or "{to}" not in s) and (cue.echo or "{echo}" not in s)]
    lines = [_fill(s, cue) for s in bank or phrases.SPEECH["question"][2:4]]
    said = {line.text for line in brief.own + brief.history + brief.latest}
    return rng.choice([line for line in lines if line not in said] or lines)


def _fill(template: str, cue: Cue) -> str:
    words = template.format(to=cue.to.split()[0] if cue.to else "", topic=cue.topic, echo=cue.echo)
    return words[:1].upper() + words[1:]


def _speak(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    mood = phrases.MOOD_OF[cue.move]
    parts = ([f"TO: {cue.to}"] if cue.to else []) + [f"TONE: {tone(brief.temperament, mood, rng)}"]
    if rng.random() < 0.35 + 0.2 * brief.temperament.anxious:
        parts.append(f"*{gesture(brief.temperament, mood, rng)}*")
    return f'[{", ".join(parts)}] "{_words(brief, cue, rng, cue.move)}"'


def _interrupt(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    words = _words(brief, cue, rng, "interrupt")
    return f'[INTERRUPT after "{cue.echo}", TONE: {tone(brief.temperament, "tense", rng)}] "{words}"'


def _silent(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    if rng.random() < 0.4:
        return "[SILENT]"
    habits = [g for g in brief.temperament.gestures if "voice" not in g]
    action = rng.choice(habits) if habits and rng.random() < 0.4 else rng.choice(phrases.SILENT_GESTURES)
    return f"[SILENT, *{action}*]"


def _event_cue(event: str, rng: random.Random) -> tuple[str, str]:
    lowered = event.lower()
    for keys, action, lines in phrases.EVENT_CUES:
        if any(key in lowered for key in keys):
            return action, rng.choice(lines)
    return rng.choice(phrases.GESTURES["startled"]), rng.choice(phrases.SPEECH["event"])


def _react(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    action, _ = _event_cue(brief.events[-1], rng)
    return f"[REACT, TONE: {tone(brief.temperament, 'startled', rng)}, *{action}*]"


def _event(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    action, line = _event_cue(brief.events[-1], rng)
    head = f"TONE: {tone(brief.temperament, 'startled', rng)}, *{action}*"
    return f'[{f"TO: {cue.to}, " if cue.to else ""}{head}] "{line}"'


SPEAKERS = {"interrupt": _interrupt, "silent": _silent, "react": _react, "event": _event}


def speech_for(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    """The speech block for any move but the close."""
    return SPEAKERS.get(cue.move, _speak)(brief, cue, rng)
