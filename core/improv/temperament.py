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
    """`he` or `she` when the profile speaks of its character so: a declared `She/her`, else the subject
    pronoun of its bullets and sentences about the character (`Feeds people when he is frightened`: once
    is enough, unless someone else is named before it), else counted (`he/him/his` against `she/her/hers`,
    the larger by at least two); else '': how a bullet's pronouns are said in the first person
    (`voice.self_trait`)."""
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
    """The pronoun the profile uses for its character (see `Temperament.pronoun`): one it declares (`She/her
    pronouns`), else the subject pronoun of its own sentences, else the count of all its pronouns."""
    declared = re.search(r"\b(he|she)\s*/\s*(?:him|her|his|hers)\b", profile, re.I)
    if declared:
        return declared.group(1).lower()
    own = {_own_subject(unit) for unit in _UNITS.split(re.sub(r"^#+\s+[^\n]*$", "", profile, flags=re.M))} - {""}
    if len(own) == 1:
        return own.pop()
    he = len(re.findall(r"\b(?:he|him|his|himself)\b", profile, re.I))
    she = len(re.findall(r"\b(?:she|her|hers|herself)\b", profile, re.I))
    return "he" if he >= she + 2 else "she" if she >= he + 2 else ""


_UNITS = re.compile(r"\n+|(?<=[.!?;])\s+")
"""A profile's bullets, lines and sentences, and the clauses of a sentence split by `;`."""
_NOT_OWN = re.compile(r"^(?:[\w'-]+:\s*)?(?:he|she|his|her|him|they|their|the|a|an|my|our|its|this|that|"
                      r"these|those|[^\W\d]+'s)\b", re.I)
"""A unit that opens on someone else (`Her sister writes`, `The captain trusts her`), not on the character."""
_SOMEONE = re.compile(r"\b(?:father|mother|dad|mum|mom|husband|wife|son|daughter|brother|sister|uncle|aunt|cousin|"
                      r"grandfather|grandmother|friend|partner|boss|colleague|man|woman|boy|girl|child|captain|"
                      r"boyfriend|girlfriend|fiancée?|nephew|niece|neighbou?r|teacher|doctor|mentor|someone|anyone)\b", re.I)
_NAME = re.compile(r"(?<!\bin )(?<!\bat )(?<!\bfrom )(?<!\bto )(?<!\bof )(?<!\bnear )(?<!\bon )(?<=\s)[A-Z][a-z]+")
"""Another person named before a pronoun (`Worked for Tom until he retired`): the pronoun may be theirs."""


def _own_subject(unit: str) -> str:
    """`he` or `she` when a bullet or sentence about the character (opening on their doing or being:
    `Feeds people when he is frightened`; `Trained in Alexandria; she is the only one`) uses it as a
    subject before naming anyone else, else ''."""
    unit = re.sub(r"^[-*+]\s+", "", unit.strip())
    found = re.search(r"\b(he|she)\b", unit, re.I)
    if not found or _NOT_OWN.match(unit) and found.start() > 2 or _SOMEONE.search(unit[:found.start()]) \
            or _NAME.search(unit[:found.start()]):
        return ""
    return found.group(1).lower()


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
