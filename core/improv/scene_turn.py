"""One turn of a scene: choose a move the way this character would, then say it in Appendix B form.

Moves: open, press, explain, question, echo, concede, mediate, propose, agree, wind_down (spoken,
directed or general, sometimes with a gesture), interrupt, silent, react and event (to a world
event), and close. The arc follows the beat: tense early, conceding in the middle, agreeing late.
"""

from __future__ import annotations

import random

from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.closing import close_due, close_speech, close_threshold
from promptdesk.core.improv.scene_words import quotes_someone, short_phrase, topics
from promptdesk.core.improv.speech import Cue, speech_for
from promptdesk.core.improv.thinking import inner_voice


def play_turn(brief: Briefing, seed: int, rng: random.Random) -> str:
    """A whole well-formed answer: `<thinking>…</thinking>` then `<speech>…</speech>`."""
    cue = choose(brief, seed, rng)
    if cue.move == "close":
        speech = close_speech(brief, seed, rng, cue.to, cue.topic)
    else:
        speech = speech_for(brief, cue, rng)
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
        cue.move = _intent(brief, seed, rng, bool(echo) and not quotes_someone(last.text))
    return cue


def silence_rate(brief: Briefing) -> float:
    """How likely this character is to say nothing: more when quiet, less when addressed."""
    t = brief.temperament
    if not brief.heard:
        base = 0.55 if brief.beat <= 1 else 0.35
    else:
        base = 0.32 if len(brief.others) >= 2 else 0.08
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
        weights = {"question": 1, "concede": max(0.2, 0.5 + t.anxious + t.warm - 0.4 * t.forceful),
                   "explain": 1, "echo": can_echo,
                   "mediate": 0.5 + t.warm, "propose": 0.5}
    else:
        weights = {"propose": 2, "agree": 1.5 + t.warm, "concede": 1, "mediate": t.warm}
    names = [k for k, w in weights.items() if w > 0]
    return rng.choices(names, [float(weights[k]) for k in names])[0]
