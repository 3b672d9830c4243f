"""What a character profile suggests about how they play: traits, tones, habits and leanings.

Reads spec 004's profile markdown (`## Personality`, `## Communication Style`, `## Behavioral
Traits` bullet lists, `When angry: ...`, `Default state: ...`). Tolerates any other markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from promptdesk.core.improv.phrases import GESTURE_VERBS

LEANINGS = {
    "quiet": ("quiet", "reserved", "shy", "introvert", "listen", "observ", "soft-spoken", "withdrawn",
              "measured", "thoughtful", "calm"),
    "forceful": ("interrupt", "blunt", "passionate", "direct", "raises voice", "assertive", "impatient",
                 "confront", "temper", "forceful", "straight to the point"),
    "warm": ("warm", "kind", "empath", "mediat", "diplomat", "friendly", "caring", "peace", "gentle"),
    "anxious": ("nervous", "anxious", "insecure", "defensive", "worried", "avoid", "self-conscious"),
}
TRAIT_SECTIONS = ("personality", "communication", "behavio", "traits", "style", "temperament")


@dataclass(frozen=True)
class Temperament:
    """How the character tends to play, as far as the profile says."""

    traits: tuple[str, ...] = ()
    role: str = ""
    pronoun: str = ""
    """`he` or `she` when the profile speaks of its character so (counted: `he/him/his` against
    `she/her/hers`, the larger by at least two), else '': how a bullet's pronouns are said in the
    first person (`voice.self_trait`)."""
    tones: tuple[str, ...] = ()
    gestures: tuple[str, ...] = ()
    quiet: float = 0.0
    forceful: float = 0.0
    warm: float = 0.0
    anxious: float = 0.0


@lru_cache(maxsize=256)
def read_temperament(profile: str) -> Temperament:
    """The temperament a profile describes; an empty profile gives a neutral one (read once per
    profile: a briefing is re-sent with every request)."""
    sections = _bullets_by_section(profile)
    traits = [b for title, items in sections.items() for b in items
              if any(key in title for key in TRAIT_SECTIONS)] or [b for items in sections.values() for b in items]
    text = " ".join(traits).lower()
    scores = {name: min(1.0, sum(key in text for key in keys) / 2) for name, keys in LEANINGS.items()}
    return Temperament(traits=tuple(traits), role=_role(profile), pronoun=_pronoun(profile), tones=tuple(_tones(traits)),
                       gestures=tuple(_gestures(traits)), **scores)


def _bullets_by_section(profile: str) -> dict[str, list[str]]:
    """Bullet items grouped under their lowercased `##` heading."""
    sections: dict[str, list[str]] = {}
    title = ""
    for line in profile.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
        elif match := re.match(r"^\s*[-*+]\s+(.+)$", line):
            sections.setdefault(title, []).append(match.group(1).strip().rstrip("."))
    return sections


def _pronoun(profile: str) -> str:
    """The pronoun the profile uses for its character (see `Temperament.pronoun`)."""
    he = len(re.findall(r"\b(?:he|him|his|himself)\b", profile, re.I))
    she = len(re.findall(r"\b(?:she|her|hers|herself)\b", profile, re.I))
    return "he" if he >= she + 2 else "she" if she >= he + 2 else ""


def _role(profile: str) -> str:
    """The role in a `# Name - Role` title line, if any."""
    match = re.search(r"^#\s+[^\n#]+?\s+[-–—]\s+(.+)$", profile, re.MULTILINE)
    return match.group(1).strip() if match else ""


def _tones(traits: list[str]) -> list[str]:
    """Tone words from `When angry:` and `Default state: X but Y` bullets."""
    tones: list[str] = []
    for trait in traits:
        if match := re.match(r"^when\s+([a-z ]{3,20}):", trait, re.IGNORECASE):
            tones.append(match.group(1).strip().lower())
        elif match := re.match(r"^default(?: state)?:\s*(.+)$", trait, re.IGNORECASE):
            tones += [w.strip().lower() for w in re.split(r",| but | and ", match.group(1)) if w.strip()]
    return [t for t in tones if 0 < len(t.split()) <= 2]


def _gestures(traits: list[str]) -> list[str]:
    """Physical habits (`Maintains eye contact to assert authority` -> `maintains eye contact`)."""
    found: list[str] = []
    for trait in traits:
        body = trait.split(":", 1)[-1]
        for clause in re.split(r",|;| and ", body):
            words = clause.strip().lower().split()
            if words and words[0] in GESTURE_VERBS:
                gesture = re.split(r"\b(?:to|when|if|while|during|because)\b", " ".join(words))[0].strip()
                if 0 < len(gesture.split()) <= 5 and gesture not in found:
                    found.append(gesture)
    return found
