"""The coordinator judge (roles A and B): one JSON decision, never dialogue.

Reads the speech lines in the request. A close word or exit action in the latest lines closes the
scene ("natural"; the explicit marker gives "explicit"); a run of silent beats suggests a world
event that fits the setting; anything else continues. With every decision it answers the winding-down
questions (`promptdesk.core.engine.winding`): the goal is met as at the verdict (`assess`: each clause that
names who must do what needs that act from that person), and every character has stated a final position when each one named in
the `Cast:` line has a speech line since the close note.
"""

from __future__ import annotations

import json
import random
import re

from promptdesk.core.improv.closing import EXPLICIT, closes
from promptdesk.core.improv.lines import parse_lines
from promptdesk.core.protocol.goal_acts import clause_met, read_goal
from promptdesk.core.protocol.stock_events import DEFAULT_EVENTS, EVENTS
from promptdesk.core.providers.base import ChatMessage

SILENT_STREAK = re.compile(r"silent beats(?: in a row)?:\s*(\d+)|(\d+)\s+(?:consecutive\s+)?silent beats", re.I)
STALL_AT = 2


def judge(system: str, messages: list[ChatMessage], rng: random.Random) -> str:
    """The decision as a JSON object, and nothing else."""
    text = "\n".join(m.content for m in messages if m.role == "user")
    speech = [line for line in parse_lines(text) if line.kind == "speech"]
    recent = speech[-3:]
    winding = {"goal_met": _goal_met(system, text), "positions_stated": _positions_stated(text)}
    if any(EXPLICIT in line.text or EXPLICIT in line.nonverbal for line in recent) or EXPLICIT in text[-400:]:
        return _decision("close", "explicit", **winding)
    for line in reversed(recent):
        if line.action != "silent" and closes(line.text, line.nonverbal):
            return _decision("close", "natural", **winding)
    streak = SILENT_STREAK.search(text)
    if streak and int(streak.group(1) or streak.group(2)) >= STALL_AT:
        event = _event_for(f"{system}\n{text}", rng, _already_suggested(text))
        if event is None:
            return _decision("continue", "the scene has stalled, but every event that fits was suggested already",
                             **winding)
        return _decision("suggest_event", "the scene has stalled: no one has spoken for a while", text=event,
                         **winding)
    return _decision("continue", "the scene is still moving", **winding)


CAST = re.compile(r"^Cast:\s*(.+?)\.?\s*$", re.M)
SINCE = "SPEECH SINCE THE CLOSE NOTE:"


def _listed(text: str) -> list[str]:
    """The names of the request's `Cast:` line; a name holding a comma (`Gloria, PA`) is kept whole
    when it speaks in the request."""
    found = CAST.search(text)
    listed, names = (found.group(1) if found else ""), []
    speakers = sorted({line.speaker for line in parse_lines(text) if line.kind == "speech"}, key=len, reverse=True)
    while listed:
        name = next((s for s in speakers if listed.startswith(s) and listed[len(s):len(s) + 2] in ("", ", ")),
                    listed.split(", ", 1)[0])
        names.append(name)
        listed = listed[len(name) + 2:]
    return names


def _cast(text: str) -> tuple[str, ...]:
    """Everyone the request names: its `Cast:` line, then whoever speaks in it."""
    return tuple(dict.fromkeys([*_listed(text), *(line.speaker for line in parse_lines(text) if line.kind == "speech")]))


def _positions_stated(text: str) -> bool:
    """Everyone in the `Cast:` line has said something since the close note."""
    if not CAST.search(text) or SINCE not in text:
        return False
    since = text.split(SINCE, 1)[1]
    speakers = {line.speaker for line in parse_lines(since) if line.kind == "speech" and line.action != "silent"}
    return all(name in speakers for name in _listed(text))


SUGGESTED = re.compile(r"^WORLD EVENTS YOU ALREADY SUGGESTED[^\n]*\n((?:- .*\n?)+)", re.M)


def _already_suggested(text: str) -> set[str]:
    """The world events the request says this judge suggested earlier in the run."""
    found = SUGGESTED.search(text)
    return {line[2:].strip() for line in found.group(1).splitlines()} if found else set()


def _event_for(context: str, rng: random.Random, already: set[str] = frozenset()) -> str | None:
    """A short world event that fits the setting (or the talk) when one can be told, never one
    suggested before in the run; None once every event that fits (and every default) was."""
    setting = re.search(r"^Setting:\s*(.+)$", context, re.M)
    for haystack in ([setting.group(1)] if setting else []) + [context]:
        lowered = haystack.lower()
        for keys, options in EVENTS:
            if any(re.search(rf"\b{re.escape(key)}\b", lowered) for key in keys):
                fresh = [o for o in options if o not in already]
                if fresh:
                    return rng.choice(fresh)
    fresh = [o for o in DEFAULT_EVENTS if o not in already]
    return rng.choice(fresh) if fresh else None


def _decision(decision: str, reason: str, *, text: str | None = None, **winding: bool) -> str:
    return json.dumps({"decision": decision, "reason": reason, "actor": None, "text": text, **winding})


DECISION_ASK = '{"decision"'
VERDICT_ASK = '{"goal_achieved"'
"""The answer shapes a judge prompt asks for: a decision after a beat, a goal verdict at close."""
GOAL = re.compile(r"^Scene goal:\s*(.+)$", re.M)
CONTENT_WORD = re.compile(r"[a-z]{5,}")
STEM = 5
MET_SHARE = 0.6


def _goal(system: str) -> str:
    match = GOAL.search(system)
    return match.group(1).strip() if match and match.group(1).strip() != "(none given)" else ""


def _spoken(text: str) -> list[tuple[str, str]]:
    """Every speech line of a request as (speaker, words)."""
    return [(line.speaker, line.text) for line in parse_lines(text) if line.kind == "speech" and line.text]


def _done(text: str) -> list[tuple[str, str]]:
    """Every line of a request as (speaker, words and business): a goal deed (`Pip falls asleep`) may be done
    in the business alone."""
    return [(line.speaker, f"{line.text} *{line.nonverbal}*." if line.nonverbal else line.text)
            for line in parse_lines(text) if line.kind == "speech" and (line.text or line.nonverbal)]


def assess(goal: str, lines: list[tuple[str, str]], cast: tuple[str, ...] = (),
           deeds: list[tuple[str, str]] | None = None) -> tuple[bool | None, str]:
    """Was the goal met by these (speaker, words) lines? When the goal names who must do what, each such
    clause needs its act from that person (`goal_acts`, the names read against the `cast`: by default
    whoever speaks); a goal naming no one and no act falls back to the share of its key words spoken by
    anyone."""
    cast = cast or tuple(dict.fromkeys(who for who, _ in lines))
    clauses = read_goal(goal, cast)
    if not clauses:
        return None, "no goal to judge against"
    if not any(c.who or c.act for c in clauses):
        words = sorted({w[:STEM] for w in CONTENT_WORD.findall(goal.lower())})
        spoken = " ".join(text.lower() for _, text in lines)
        heard = [w for w in words if w in spoken]
        missing = [w for w in words if w not in heard]
        reason = (f"the goal names no one and no act; the speech touched {len(heard)} of its {len(words)} key words"
                  + (f"; never: {', '.join(missing)}" if missing else ""))
        if not words:  # `謝罪して和解する`: nothing it can read
            return None, "unknown: the goal holds no word the offline judge can read (it reads English)"
        return len(heard) >= MET_SHARE * len(words), reason
    results = [clause_met(c, lines if c.act or deeds is None else deeds, cast) for c in clauses]
    met = False if any(ok is False for ok, _ in results) else None if any(ok is None for ok, _ in results) else True
    reasons = [why for _, why in results if why]
    return met, {True: "met: ", False: "not met: ", None: "unknown: "}[met] + "; ".join(reasons)


def _goal_met(system: str, text: str) -> bool:
    """Whether the goal has been met in the speech so far (the verdict's measure)."""
    goal = _goal(system)
    if not goal or all(c.negated for c in read_goal(goal, _cast(text))):
        return False  # what must never happen is known only once the scene is over
    return assess(goal, _spoken(text), _cast(text), _done(text))[0] is True


def verdict(system: str, messages: list[ChatMessage]) -> str:
    """Was the goal met? Each clause naming who must do what is checked against that person's lines."""
    goal = _goal(system)
    if not goal:
        return json.dumps({"goal_achieved": None, "reason": "no goal to judge against"})
    said = "\n".join(m.content for m in messages)
    met, reason = assess(goal, _spoken(said), deeds=_done(said))
    return json.dumps({"goal_achieved": met, "reason": reason[:300]})
