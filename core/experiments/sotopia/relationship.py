"""What each agent is told of the other, by their relationship: Sotopia's rule, as its runner applies it.

Sotopia writes each agent's background as one text (`get_bio` in `sotopia/envs/parallel.py`: "<name> is
a <age>-year-old <gender> <occupation>. <pronouns> pronouns. <public info> Personality and values
description: <personality> <first name>'s secrets: <secret>") and marks the parts only that agent may
see, according to the environment's relationship level. The other agent is told:

| level | what the other agent is told |
| --- | --- |
| 0 stranger | nothing (its background is "unknown") |
| 1 know_by_name | the name |
| 2 acquaintance | the name, age, gender, occupation, pronouns and public information |
| 3 friend, 4 romantic_relationship, 5 family_member | all that, and the personality and values |

The secret is never told to the other agent, whatever the level; each agent sees its own background
whole, secret included. This is the rule of the paper's runner (Sotopia 0.1); Sotopia's later runner,
since its multi-agent rewrite, tells each agent nothing of the other's background ("Unknown") at every
level. A goal's `<extra_info>`, `<clarification_hint>` and `<strategy_hint>` are shown to its own agent
as their text, tags removed (`render_goal`), as Sotopia's renderer shows them to the agent.
"""

from __future__ import annotations

import re

from promptdesk.core.experiments.sotopia.export import LEVELS, Agent

STRANGER, KNOW_BY_NAME, ACQUAINTANCE, FRIEND = 0, 1, 2, 3
GENDERS = {"man": "male", "woman": "female", "nonbinary": "nonbinary"}
"""Sotopia's gender values and the word its backgrounds use for them."""
PAIRS = ("strangers", "people who know each other by name", "acquaintances", "friends", "in a romantic relationship",
         "family members")
"""How the relationship between the two is said, by level."""
_TAGS = re.compile(r"</?\s*(?:extra_info|clarification_hint|strategy_hint)\s*>", re.I)


def render_goal(goal: str) -> str:
    """A goal as its own agent reads it: the hint tags removed, their text kept, spacing tidied."""
    return re.sub(r"[ \t]{2,}", " ", _TAGS.sub(" ", goal)).replace("( ", "(").replace(" )", ")").strip()


def kind_of(agent: Agent) -> str:
    """`a 29-year-old female musician` ("" when the agent has no age, gender or occupation)."""
    kind = " ".join(w for w in (f"{agent.age}-year-old" if agent.age else "", GENDERS.get(agent.gender.lower(), ""),
                                agent.occupation.lower()) if w)
    return f"{_article(kind)} {kind}" if kind else ""


def identity(agent: Agent) -> str:
    """The public part of a background: `Ava Lee is a 29-year-old female musician. She/her pronouns. <public info>`."""
    kind = kind_of(agent)
    parts = [f"{agent.name} is {kind}." if kind else ""]
    if agent.pronoun:
        parts.append(f"{agent.pronoun} pronouns.")
    if agent.public_info:
        parts.append(agent.public_info)
    return " ".join(p for p in parts if p)


def personality(agent: Agent) -> str:
    return f"Personality and values description: {agent.personality}" if agent.personality else ""


def told_about(agent: Agent, level: int) -> str:
    """What the other agent is told of `agent` at a relationship `level` (never the secret)."""
    if level <= STRANGER:
        return f"You do not know {agent.name}: you are strangers, and their background is unknown to you."
    if level == KNOW_BY_NAME:
        return f"You know {agent.name} by name only; the rest of their background is unknown to you."
    known = identity(agent)
    if level >= FRIEND and personality(agent):
        known += " " + personality(agent)
    return f"What you know about {agent.name}: {known}"


def pair_sentence(first: Agent, second: Agent, level: int) -> str:
    """The relationship between the two, said once for both (`Ava Lee and Ben Ko are friends.`)."""
    return f"{first.name} and {second.name} are {PAIRS[level]}."


def level_name(level: int) -> str:
    return LEVELS[level]


def _article(phrase: str) -> str:
    """`a` or `an`, as the phrase is said (`an 18-year-old`, `an 80-year-old`, `a 21-year-old`)."""
    number = re.match(r"(\d+)-", phrase)
    if number:
        return "an" if number.group(1).startswith("8") or number.group(1) in ("11", "18") else "a"
    return "an" if phrase[:1].lower() in "aeiou" else "a"
