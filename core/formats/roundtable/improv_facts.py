"""Reading a roundtable request the way the improviser needs: the facts block and who is asked."""

from __future__ import annotations

import re
from typing import Any

import yaml

from promptdesk.core.formats.roundtable.answers import fenced
from promptdesk.core.protocol.bounded import Unbounded, load_yaml

from promptdesk.core.providers.base import Request

STANCES = ("Go ahead now, at full scope", "Go ahead in small, reversible steps",
           "Hold off until the main risks are understood")
"""The three leanings of an offline participant (go, go in steps, hold off); `stances` words them for
the topic at hand, the same for every participant, so agreement can be counted."""
_ASKING = re.compile(r"^(?:should|shall|would|could|can|do|does|is|are|will|must)\s+(we|the \w+|our \w+|they|you|i)\s+",
                     re.I)
_PERSONS = frozenset(("we", "they", "you", "i"))
_MODALS = frozenset("should shall would could can will must".split())
_HOUSE = re.compile(r"^this house (?:would|will|should|believes that)\s+", re.I)
_OPEN = re.compile(r"^(?:how|what|which|who|when|where|why)\s+(?:should|shall|would|could|can|do|does|is|are|will)\s+"
                   r"(?:we|the \w+|our \w+|they|you|i)\s+", re.I)


def stances(topic: str) -> tuple[str, str, str]:
    """The three positions, in the topic's own words: `Should the team move X?` -> `Yes: move X, in
    full, now` / `Yes, as a trial first: move X` / `Not yet: no move X until...`; an open question
    (`How should we share X?`) gets the same three leanings on deciding it."""
    text = " ".join(str(topic or "").split()).rstrip("?.! ")
    if not text:
        return STANCES
    if match := _OPEN.match(text):
        act = text[match.end():]
        return (f"Decide now, one way for everyone: {act}", f"Try one way for a month, then review: {act}",
                f"Keep the current way for now, and decide how to {act} once we know more")
    asking = _ASKING.match(text)
    if asking and asking.group(1).lower() not in _PERSONS:
        # a question about a thing (`Should the old pier be rebuilt?`): its whole subject is kept, as
        # `let the old pier be rebuilt` after a modal; after `is`/`does` it is asked as it stands
        rest = text[asking.start(1):]
        act = f"let {rest}" if asking.group(0).split()[0].lower() in _MODALS else f"act on this: {_low(text)}"
        return (f"Yes, in full, now: {act}", f"Yes, as a trial first: {act}, one part at a time",
                f"Not yet: {act} only once the risks are understood")
    act = _HOUSE.sub("", _ASKING.sub("", text))
    if act == text and not _HOUSE.match(text) and not asking:
        act = f"act on this: {text[:1].lower()}{text[1:]}"
    return (f"Yes, in full, now: {act}", f"Yes, as a trial first: {act}, one part at a time",
            f"Not yet: {act} only once the risks are understood")
PHASE_LEAN = {"dreamer": 0, "yellow": 0, "green": 0, "opening": 0, "realist": 1, "white": 1, "blue": 1,
              "red": 1, "discussion": 1, "rebuttal": 1, "closing": 1, "critic": 2, "black": 2}
"""Which stance a phase pulls towards (dreamers dream, critics hold off)."""
_CRITICAL = re.compile(r"\b(?:risks?|fail\w*|wrong|weak\w*|danger\w*|problems?|concerns?|objections?|critic\w*|"
                       r"doubts?|\w*mortem|worst|threats?|caution\w*|downsides?|flaws?|attack\w*)\b", re.I)
_HOPEFUL = re.compile(r"\b(?:dream\w*|ideal\w*|opportunit\w*|benefits?|best case|possibilit\w*|vision\w*|"
                      r"optimis\w*|upsides?|strengths?|wild ideas?|brainstorm\w*)\b", re.I)


def phase_lean(info: dict[str, Any]) -> int:
    """The stance a phase pulls towards: a shipped strategy's phase by its name, any other by what its
    name and goal ask (a phase about failures and risks holds off, one about dreams goes ahead)."""
    name = str(info.get("phase") or "")
    if name in PHASE_LEAN:
        return PHASE_LEAN[name]
    words = f"{name} {info.get('phase_goal') or ''}"
    critical, hopeful = bool(_CRITICAL.search(words)), bool(_HOPEFUL.search(words))
    return 2 if critical and not hopeful else 0 if hopeful and not critical else 1


def _low(text: str) -> str:
    return text[:1].lower() + text[1:]


def facts(request: Request) -> dict[str, Any]:
    """The YAML facts block of the request's last user message ({} when there is none)."""
    text = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    block = fenced(text)
    try:
        data = load_yaml(block) if block is not None else None
    except (yaml.YAMLError, Unbounded):
        data = None
    return data if isinstance(data, dict) else {}


def last_user(request: Request) -> str:
    return next((m.content for m in reversed(request.messages) if m.role == "user"), "")


def as_block(data: dict[str, Any]) -> str:
    """A fenced YAML block, as spec 002 asks every roundtable answer to be."""
    return "```yaml\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100) + "```\n"
