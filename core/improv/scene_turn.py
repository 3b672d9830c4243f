"""One turn of a scene: choose a move the way this character would, then say it in Appendix B form.

Moves: open, press, explain, question, echo, concede, mediate, propose, agree, wind_down (spoken,
directed or general, sometimes with a gesture), interrupt, silent, react and event (to a world
event), and close. The arc follows the beat: tense early, conceding in the middle, agreeing late.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from core.improv import phrases
from core.improv.briefing_reader import Briefing
from core.improv.closing import close_due, close_speech, close_threshold
from core.improv.scene_words import short_phrase, topics
from core.improv.temperament import Temperament
from core.improv.thinking import inner_voice

SPOKEN = ("open", "press", "explain", "question", "echo", "concede", "mediate", "propose", "agree",
          "wind_down", "event", "interrupt")


@dataclass
class Cue:
    """What this turn is: the move, whom it is for, what it is about."""

    move: str
    to: str = ""
    topic: str = ""
    echo: str = ""


def play_turn(brief: Briefing, seed: int, rng: random.Random) -> str:
    """A whole well-formed answer: `<thinking>…</thinking>` then `<speech>…</speech>`."""
    cue = choose(brief, seed, rng)
    if cue.move == "close":
        speech = close_speech(brief, seed, rng, cue.to, cue.topic)
    else:
        speech = SPEAKERS.get(cue.move, _speak)(brief, cue, rng)
    return render(inner_voice(brief, cue, rng), speech)


def render(thinking: str, speech: str) -> str:
    return f"<thinking>{thinking}</thinking>\n<speech>{speech}</speech>"


def choose(brief: Briefing, seed: int, rng: random.Random) -> Cue:
    """The move for this turn, its addressee, topic and echoed phrase."""
    last = brief.addressed_by if brief.addressed_by and rng.random() < 0.85 else brief.last_other
    to = last.speaker if last and rng.random() < 0.7 else ""
    if not to and brief.others and rng.random() < 0.3:
        to = rng.choice(brief.others)
    scene_topics = topics(brief.goal, brief.prompt, brief.perspective, exclude=(brief.name, *brief.others))
    topic = rng.choice(scene_topics or ["what happened", "all of this"])
    echo = short_phrase(last.text, rng.randint(2, 4)) if last and last.text else ""
    cue = Cue("speak", to, topic, echo)
    if close_due(brief, seed, rng):
        cue.move = "close"
    elif "begin" in brief.cues:
        cue.move = "open"
    elif brief.events:
        cue.move = "react" if rng.random() < 0.45 else "event"
    elif not brief.cues and rng.random() < silence_rate(brief):
        cue.move = "silent"
    elif last and len(last.text.split()) >= 4 and rng.random() < 0.1 + 0.25 * brief.temperament.forceful:
        cue.move, cue.to = "interrupt", last.speaker
    elif "nudge" in brief.cues:
        cue.move = rng.choice(("wind_down", "propose", "agree"))
    else:
        cue.move = _intent(brief, seed, rng, bool(echo))
    return cue


def silence_rate(brief: Briefing) -> float:
    """How likely this character is to say nothing: more when quiet, less when addressed."""
    t = brief.temperament
    if not brief.heard:
        base = 0.55 if brief.beat <= 1 else 0.35
    else:
        base = 0.28 if len(brief.others) >= 2 else 0.08
    base += 0.2 * t.quiet - 0.12 * t.forceful
    return max(0.0, base * (0.3 if brief.addressed_by else 1.0))


def _intent(brief: Briefing, seed: int, rng: random.Random, can_echo: bool) -> str:
    """A spoken intent weighted by the scene's progress and the character's leanings."""
    t = brief.temperament
    progress = brief.beat / close_threshold(seed, brief)
    if progress < 0.35:
        weights = {"press": 1 + 2 * t.forceful, "explain": 1 + t.anxious, "question": 1,
                   "echo": can_echo, "mediate": 0.5 + t.warm}
    elif progress < 0.7:
        weights = {"question": 1, "concede": 0.5 + t.anxious + t.warm, "explain": 1, "echo": can_echo,
                   "mediate": 0.5 + t.warm, "propose": 0.5}
    else:
        weights = {"propose": 2, "agree": 1.5 + t.warm, "concede": 1, "mediate": t.warm}
    names = [k for k, w in weights.items() if w > 0]
    return rng.choices(names, [float(weights[k]) for k in names])[0]


def tone(t: Temperament, mood: str, rng: random.Random) -> str:
    """A tone for a mood, from the profile's own tone words half the time when it has fitting ones."""
    known = set().union(*phrases.VALENCE.values())
    fitting = [x for x in t.tones if x in phrases.VALENCE.get(mood, ()) or (mood == "neutral" and x not in known)]
    return rng.choice(fitting) if fitting and rng.random() < 0.5 else rng.choice(phrases.TONES[mood])


def gesture(t: Temperament, mood: str, rng: random.Random) -> str:
    """A gesture: the profile's own physical habits first, else one that fits the mood."""
    return rng.choice(t.gestures) if t.gestures and rng.random() < 0.6 else rng.choice(phrases.GESTURES[mood])


def _words(brief: Briefing, cue: Cue, rng: random.Random, move: str) -> str:
    """A line from the move's bank, filled with scene words, avoiding this character's earlier lines."""
    bank = [s for s in phrases.SPEECH[move] if (cue.to or "{to}" not in s) and (cue.echo or "{echo}" not in s)]
    said = {line.text for line in brief.own}
    for _ in range(6):
        words = rng.choice(bank or phrases.SPEECH["question"][2:4]).format(to=cue.to, topic=cue.topic, echo=cue.echo)
        if words not in said:
            break
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
    habits = brief.temperament.gestures
    action = rng.choice(habits) if habits and rng.random() < 0.4 else rng.choice(phrases.SILENT_GESTURES)
    return f"[SILENT, *{action}*]"


def _event_cue(event: str, rng: random.Random) -> tuple[str, str]:
    lowered = event.lower()
    for keys, action, line in phrases.EVENT_CUES:
        if any(key in lowered for key in keys):
            return action, line
    return rng.choice(phrases.GESTURES["startled"]), rng.choice(phrases.SPEECH["event"])


def _react(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    action, _ = _event_cue(brief.events[-1], rng)
    return f"[REACT, TONE: {tone(brief.temperament, 'startled', rng)}, *{action}*]"


def _event(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    action, line = _event_cue(brief.events[-1], rng)
    head = f"TONE: {tone(brief.temperament, 'startled', rng)}, *{action}*"
    return f'[{f"TO: {cue.to}, " if cue.to else ""}{head}] "{line}"'


SPEAKERS = {"interrupt": _interrupt, "silent": _silent, "react": _react, "event": _event}
