"""When and how a character brings the scene to a close, and how a close is recognised.

Each character has a seeded beat after which they close (7-15, mostly shared by the scene, moved by
what the story brings: someone arriving, a note to act on, the goal's acts done), and closes within
two turns of the soft-cap nudge. The close line (`scene_rules`: `close`, `leave_event`...) always
carries one of spec 000's leave-takings that `promptdesk.core.protocol.leave_taking` recognises, so a
pure-code coordinator hears it; a few scenes end explicitly.
"""

from __future__ import annotations

import random
from functools import lru_cache

from promptdesk.core.protocol.leave_taking import takes_leave

from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.dice import rng_for
from promptdesk.core.improv.phrases import theirs

EXPLICIT = "*[the scene ends here]*"
EXITS = ("picks up {their} coat and leaves", "stands to leave", "heads for the door", "gathers {their} things and walks out")
EXPLICIT_RATE = 0.05


def close_threshold(seed: int, brief: Briefing) -> int:
    """The beat from which this character closes: a scene-wide base plus a small personal lag."""
    return _threshold(seed, brief.scene_key, brief.name)


@lru_cache(maxsize=1024)
def _threshold(seed: int, scene_key: str, name: str) -> int:
    base = rng_for(seed, "close", scene_key).randint(7, 12)
    return base + rng_for(seed, "close", scene_key, name).randint(0, 3)


def explicit_scene(seed: int, brief: Briefing) -> bool:
    """About one scene in twenty ends with the explicit close marker instead of a farewell, said by one
    character only (the first of the cast by name), so two never say it together."""
    first = min((brief.name, *brief.others))
    return first == brief.name and rng_for(seed, "explicit", brief.scene_key).random() < EXPLICIT_RATE


def close_due(brief: Briefing, seed: int, rng: random.Random, shift: int = 0) -> bool:
    """Past the seeded beat (moved by `shift` beats of story), the turn after a nudge (often the same
    turn), or after a farewell."""
    if "nudge" in brief.earlier_cues or any(closes(line.text, line.nonverbal) for line in brief.heard):
        return True
    if "nudge" in brief.cues:
        return rng.random() < 0.6
    return brief.beat >= close_threshold(seed, brief) + shift


def just_due(brief: Briefing, seed: int, shift: int = 0) -> bool:
    """The close is due only because the seeded beat has just come (this beat or the one before), with
    no nudge and no farewell heard: the one turn a goal act still owed may be done before the leaving."""
    due = close_threshold(seed, brief) + shift
    return due <= brief.beat < due + 2 and not ({"nudge"} & (brief.cues | brief.earlier_cues)) and not any(
        closes(line.text, line.nonverbal) for line in brief.heard)


def close_speech(brief: Briefing, seed: int, rng: random.Random, to: str, said: str, host: bool) -> str:
    """The inside of `<speech>` for a closing turn, around the words `said` (a leave-taking)."""
    if explicit_scene(seed, brief):
        return EXPLICIT
    parts = ([f"TO: {to}"] if to else []) + [f"TONE: {rng.choice(('warm', 'relieved', 'settled', 'grateful'))}"]
    if not host and rng.random() < 0.5:
        parts.append(f"*{theirs(rng.choice(EXITS), brief.temperament.pronoun)}*")
    return f'[{", ".join(parts)}] "{said}"'


@lru_cache(maxsize=16384)
def closes(words: str, gesture: str = "") -> bool:
    """A leave-taking in what was said or done (the engine's own rules), or the explicit close
    (read once per line: in a crowd every actor weighs every line it heard)."""
    return EXPLICIT in words or takes_leave(words, gesture or None)
