"""What one actor's request gives the improviser to talk with: the scene's and the character's own words.

Everything here is read from the actor's own request (its briefing): the scene's noun phrases
(prompt and goal), the place and its objects (setting), the character's private noun phrases and
sentences (perspective, in the first person), the background facts and verbal habits of the
profile, and how to address each person present. Read once per briefing (`lru_cache`): a briefing
is re-sent with every request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from promptdesk.core.improv.scene_words import place as place_of, topics
from promptdesk.core.improv.voice import base_verb, first_person
from promptdesk.core.protocol.goal_acts import read_goal
from promptdesk.core.protocol.person_names import given_name, spoken_name

PROFILE_READ = 6000
"""The characters of a profile read for material (an agent file may hold tens of kilobytes)."""
TIME_WORDS = frozenset("morning afternoon evening night day today tonight noon midnight dawn dusk early late "
                       "monday tuesday wednesday thursday friday saturday sunday spring summer autumn winter".split())
_IRREGULAR_PAST = frozenset("knew told ran spent made took had saw lost left got came went kept said thought felt "
                            "wrote grew began became won built bought brought caught fought found gave heard held "
                            "led lent met paid put read sent set sold sat slept stood taught understood".split())
_HABIT_VERBS = ("says", "uses", "calls", "starts with", "ends with")


@dataclass(frozen=True)
class Material:
    """The words one actor has to work with, all of them from its own request."""

    topics: tuple[str, ...] = ()
    mine: tuple[str, ...] = ()
    props: tuple[str, ...] = ()
    place: str = "this room"
    owner: str = ""
    facts: tuple[str, ...] = ()
    background: tuple[str, ...] = ()
    tics: tuple[str, ...] = ()
    wants: tuple[str, ...] = ()
    register: str = "meeting"
    """`meeting` when the goal asks someone to do something (apologise, agree...), `talk` when it asks
    for no outcome: the same moves, said as a visit rather than a meeting."""


@lru_cache(maxsize=512)
def read_material(name: str, others: tuple[str, ...], setting: str, prompt: str, goal: str, perspective: str,
                  profile: str) -> Material:
    """The material of one briefing (its fields as read by `briefing_reader`)."""
    names = (name, *others, *(given_name(n) for n in (name, *others) if n))
    mine_text = first_person(perspective) if perspective else ""
    acts = any(c.act for c in read_goal(goal))
    scene_topics = tuple(topics(prompt, goal if acts else "", exclude=names))
    background = _section(profile[:PROFILE_READ], "background|history|about")
    shared = {t.lower() for t in scene_topics}
    own = [p for p in topics(mine_text, exclude=names) if p.lower() not in shared]
    own += [p for p in topics(background, exclude=names) if len(p.split()) > 2 and p.lower() not in shared
            and p not in own]
    return Material(topics=scene_topics, mine=tuple(own[:12]), props=_props(setting, prompt),
                    place=place_of(setting), owner=_owner(setting, (name, *others)),
                    facts=tuple(_sentences(mine_text)), background=tuple(_background(profile[:PROFILE_READ])),
                    tics=tuple(_tics(profile[:PROFILE_READ])), wants=tuple(_wants(mine_text)),
                    register="meeting" if acts else "talk")


def address(name: str, present: tuple[str, ...]) -> str:
    """How a character is called by name: the first name (with a title, the title and surname: `Dr
    Haddad`), unless another person present shares it or the rest of the name is what tells them apart
    (`Person 3`, `Guest 12`)."""
    words = name.split()
    if len(words) < 2:
        return name
    rest = " ".join(words[1:])
    short = spoken_name(name)
    shared = sum(1 for other in present if other.split()[:1] == words[:1] or spoken_name(other) == short) > 1
    return name if shared or any(ch.isdigit() for ch in rest) or words[0].lower() in _GENERIC else short


_GENERIC = frozenset("person character guest member resident player participant agent speaker user".split())


def _props(setting: str, prompt: str) -> tuple[str, ...]:
    """The setting's objects (`Kettle on, window open` -> `the kettle`, `the window`)."""
    found: list[str] = []
    chunks = re.split(r"[,.;]", setting)[1:] + [s for s in re.split(r"[.;]", prompt) if len(s.split()) <= 4]
    for chunk in chunks:
        words = [w for w in re.findall(r"[A-Za-z'-]+", chunk)]
        if not words:
            continue
        head = re.sub(r"^(the|a|an|there|is|are)$", "", words[0].lower())
        if len(words) > 1 and words[0].lower() in ("there", "the", "a", "an"):
            head = words[-1].lower() if words[0].lower() == "there" else words[1].lower()
        if head and head not in TIME_WORDS and len(head) > 2 and not head.endswith(("ly", "ing")) \
                and f"the {head}" not in found and not head[:1].isdigit():
            found.append(f"the {head}")
    return tuple(found[:4])


def _owner(setting: str, names: tuple[str, ...]) -> str:
    """Whose place it is, when the setting says so (`Maria's small kitchen` -> `Maria`) and they are present."""
    match = re.match(r"^\s*([A-Z][a-z]+)'s\b", setting)
    if not match:
        return ""
    return next((n for n in names if n.split()[0] == match.group(1)), "")


def _sentences(text: str) -> list[str]:
    """Short first-person sentences of a perspective that can be said aloud (none that speaks of a third
    person: said to their face, `she` would be wrong)."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
        sentence = sentence.strip()
        if 4 <= len(sentence.split()) <= 22 and re.match(r"^(I|My|It|That|Still)\b", sentence) and '"' not in sentence \
                and not re.search(r"\b(?:he|she|him|his|her|they|them)\b", sentence, re.I):
            out.append(sentence if sentence[-1] in ".!?" else sentence + ".")
    return out


def _wants(text: str) -> list[str]:
    """What the character wants, as noun phrases or clauses (`I want resolution` -> `resolution`)."""
    return [m.group(1).strip() for m in re.finditer(r"\bI want (?:to )?([^.;]{3,60}?)(?:[.;,]|$)", text)]


def _section(profile: str, titles: str) -> str:
    """The body of the profile's first `#` section whose title starts with one of `titles`; with no
    such section, the profile's text outside its headings (an agent file's prose)."""
    found = re.search(rf"^#+\s*(?:{titles})[^\n]*\n(.*?)(?=^#|\Z)", profile, re.I | re.M | re.S)
    if found:
        return found.group(1)
    return "" if re.search(r"^#+\s*(?:personality|communication)", profile, re.I | re.M) else \
        re.sub(r"^---.*?---", "", profile, flags=re.S)


def _background(profile: str) -> list[str]:
    """The profile's background bullets that read as the character's own sentence (`Missed the deadline
    by nine days` -> `I missed the deadline by nine days.`)."""
    out = []
    for bullet in re.findall(r"^\s*[-*+]\s+(.+)$", _section(profile, "background|history|about"), re.M):
        words = bullet.strip().rstrip(".").split()
        if len(words) < 3 or len(words) > 20 or re.search(r"\b(he|she|him|they|them|her)\b", bullet, re.I) \
                or words[1].lower() in ("to", "by", "as", "for", "in", "at"):
            continue
        head = words[0].lower()
        if head in ("has", "is", "was") or head in _IRREGULAR_PAST or head.endswith("ed") or \
                (head.endswith("s") and not head.endswith("ss")):
            verb = head if head in _IRREGULAR_PAST or head.endswith("ed") or head == "was" else base_verb(head)
            rest = re.sub(r"\b(his|her|their)\b", "my", " ".join(words[1:]))
            out.append(f"I {verb} {rest}.")
    return out


def _tics(profile: str) -> list[str]:
    """Words the profile says the character habitually uses (`Says "honestly" before...` -> `honestly`)."""
    found = []
    for match in re.finditer(r"\b(?:" + "|".join(_HABIT_VERBS) + r")\s+[\"\u201c]([^\"\u201d]{4,24})[\"\u201d]",
                             profile, re.I):
        word = match.group(1).strip().strip(",.")
        if len(word.split()) <= 3 and word.lower() not in ("you", "we", "they"):
            found.append(word)
    return found
