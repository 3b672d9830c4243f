"""The improviser's collaboration replies (spec 001 §3): a JSON envelope every time.

It reads its own name, the participants, the goal, the round and the transcript window from the
request. It drafts, refines and hands off to the other participant with a one-sentence task, and
sets `final: true` at the round the goal asks for ("≤4 rounds"), else after a few (3–5, fixed by
the seed and the goal so both participants agree). A goal that says "then stop" is answered with
an immediate final; a goal that asks for prose gets prose around the JSON, stubbornly, so the
fallback of §8D can be seen offline.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field

from core.improv.dice import rng_for
from core.providers.base import Request

STOP_NOW = re.compile(r"\b(then|and|now)\s+stop\b|\bstop (right )?(there|now)\b", re.IGNORECASE)
ASKS_PROSE = re.compile(r"\b(include|add|with|in)\s+(some\s+)?prose\b|\bno json\b", re.IGNORECASE)
ROUND_CAP = re.compile(r"(?:≤|<=|at most|up to|within)\s*(\d+)\s*rounds?", re.IGNORECASE)
NAME = re.compile(r"Your name is `([a-z0-9-]+)`\. Participants: ([a-z0-9, -]+?) \(")
ROUND = re.compile(r"Round (\d+) of (\d+)\.")
LINE = re.compile(r"^\[([a-z0-9-]+)(?: → ([a-z0-9-]+))?\] (.*)$")

DRAFTS = ("Here is a first draft for {topic}: {body}", "A starting point for {topic}: {body}")
REFINES = ("Building on {other}'s “{echo}”, I tightened it: {body}",
           "Edited {other}'s draft (“{echo}”) for clarity: {body}")
FINALS = ("Final version, agreed with {other}: {body}", "Done. Incorporating {other}'s edits (“{echo}”): {body}")
TASKS = ("Edit this for concision and fill any gap you see.", "Refine the weakest step and hand it back.",
         "Check it against the goal and tighten the wording.", "Finalize this if it meets the goal.")
STEPS = ("pick the trail and check the forecast", "book the campsite or lodging", "pack water, layers and a map",
         "share the route and return time with someone", "leave early and turn back by mid-afternoon")
TALE = ("Once upon a time a small fox found a lantern that glowed only for honest words.",
        "By the second winter the fox had learned to speak plainly, and the whole wood followed its light home.")


@dataclass
class Reading:
    """What the improviser takes from one collaboration request."""

    me: str = ""
    participants: list[str] = field(default_factory=list)
    goal: str = ""
    round: int = 1
    max_rounds: int = 6
    lines: list[tuple[str, str | None, str]] = field(default_factory=list)

    @property
    def other(self) -> str:
        return next((p for p in self.participants if p != self.me), self.me)

    @property
    def last_other(self) -> str:
        """The newest thing another participant said, if anything."""
        return next((text for role, _, text in reversed(self.lines) if role not in ("router", "user", self.me)), "")


def read(request: Request) -> Reading:
    """The name, participants, goal, round and transcript lines (of the newest context message)."""
    reading = Reading()
    if match := NAME.search(request.system):
        reading.me, reading.participants = match.group(1), [p.strip() for p in match.group(2).split(",")]
    context = next((m.content for m in reversed(request.messages) if m.role == "user" and "GOAL:" in m.content), "")
    if goal := re.search(r"^GOAL: (.*)$", context, re.MULTILINE):
        reading.goal = goal.group(1).strip()
    if rounds := ROUND.search(context):
        reading.round, reading.max_rounds = int(rounds.group(1)), int(rounds.group(2))
    reading.lines = [(m.group(1), m.group(2), m.group(3)) for m in map(LINE.match, context.splitlines()) if m]
    return reading


def final_round(reading: Reading, seed: int) -> int:
    """The round at which this goal is declared done."""
    if STOP_NOW.search(reading.goal):
        return 1
    if cap := ROUND_CAP.search(reading.goal):
        return max(1, int(cap.group(1)))
    return rng_for(seed, "final-round", reading.goal).choice((3, 4, 5))


def body(reading: Reading, rng: random.Random) -> str:
    """The substance: steps for a plan, a tale for a story, else a short answer to the goal."""
    goal = reading.goal.lower()
    if "plan" in goal or "step" in goal:
        steps = list(STEPS)
        if reading.round > 1:
            steps[rng.randrange(len(steps))] += " (revised)"
        return " ".join(f"{i}) {s}." for i, s in enumerate(steps, 1))
    if "tale" in goal or "story" in goal:
        return " ".join(TALE[: 1 + (reading.round > 1)])
    if STOP_NOW.search(reading.goal):
        return f"In one sentence: {_topic(reading.goal)} comes down to its main point, stated plainly."
    return f"a short answer to “{_topic(reading.goal)}”, step {reading.round}."


def envelope(request: Request, seed: int = 0) -> dict:
    """The improviser's envelope for one collaboration request."""
    reading = read(request)
    rng = rng_for(seed, request.to, request.system, *(m.content for m in request.messages))
    slots = {"topic": _topic(reading.goal), "other": reading.other, "echo": _echo(reading.last_other),
             "body": body(reading, rng)}
    if reading.round >= final_round(reading, seed):
        bank = FINALS if reading.last_other else ("{body}",)
        return {"message": rng.choice(bank).format(**slots), "final": True}
    bank = REFINES if reading.last_other else DRAFTS
    return {"message": rng.choice(bank).format(**slots),
            "handoff": {"to": reading.other, "task": rng.choice(TASKS)}, "final": False}


def play_envelope(request: Request, seed: int, malformed_rate: float = 0.0) -> str:
    """The reply text: strict JSON, or prose around it when the goal asks for prose."""
    reply = json.dumps(envelope(request, seed), ensure_ascii=False)
    if ASKS_PROSE.search(read(request).goal):
        return f"Sure! Here is my answer, with some prose as requested.\n{reply}\nHope this helps."
    return reply


def _topic(goal: str) -> str:
    words = goal.rstrip(".").split()
    return " ".join(words[:10]) + (" …" if len(words) > 10 else "") if words else "the goal"


def _echo(text: str) -> str:
    """The last few words the other participant said (its substance, not its lead-in)."""
    words = text.split()
    return ("… " if len(words) > 6 else "") + " ".join(words[-6:]) if words else ""
