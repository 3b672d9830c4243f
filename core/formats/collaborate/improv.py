"""The improviser's collaboration replies (spec 001 §3): a JSON envelope every time.

It reads its own name, the participants, the goal, the round and the transcript window from the
request. It drafts, refines and hands off to the other participant with a one-sentence task, and
sets `final: true` after a few rounds (3–5, fixed by the seed and the goal so both participants
agree), whatever the goal's wording: it knows no particular goal. With `malformed_rate` it wraps
prose around the JSON that often, so the router's repair and fallback can be seen offline.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field

from promptdesk.core.improv.dice import rng_for
from promptdesk.core.providers.base import Request

NAME = re.compile(r"Your name is `([a-z0-9-]+)`\. Participants: ([a-z0-9, -]+?) \(")
ROUND = re.compile(r"Round (\d+) of (\d+)\.")
LINE = re.compile(r"^\[([a-z0-9-]+)(?: → ([a-z0-9-]+))?\] (.*)$")

DRAFTS = ("Here is a first draft for {topic}: {body}", "A starting point for {topic}: {body}")
REFINES = ("Building on {other}'s “{echo}”, I tightened it: {body}",
           "Edited {other}'s draft (“{echo}”) for clarity: {body}")
FINALS = ("Final version, agreed with {other}: {body}", "Done. Incorporating {other}'s edits (“{echo}”): {body}")
TASKS = ("Edit this for concision and fill any gap you see.", "Refine the weakest step and hand it back.",
         "Check it against the goal and tighten the wording.", "Finalize this if it meets the goal.")
POINTS = ("start from what {topic} needs most", "name the one constraint that matters",
          "cut anything that does not serve the goal", "make the next step concrete", "check it reads plainly")


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
    """The round at which this goal is declared done: 3–5, by the seed and the goal."""
    return rng_for(seed, "final-round", reading.goal).choice((3, 4, 5))


def body(reading: Reading, rng: random.Random) -> str:
    """The substance: points toward the goal, one more each round."""
    topic = _topic(reading.goal)
    points = [p.format(topic=topic) for p in POINTS[: min(len(POINTS), 1 + reading.round)]]
    if reading.round > 1:
        points[rng.randrange(len(points))] += " (revised)"
    return " ".join(f"{i}) {p}." for i, p in enumerate(points, 1))


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
    """The reply text: strict JSON, or (at `malformed_rate`) prose around it."""
    reply = json.dumps(envelope(request, seed), ensure_ascii=False)
    rng = rng_for(seed, "malformed", request.to, *(m.content for m in request.messages))
    if malformed_rate and rng.random() < malformed_rate:
        return f"Sure! Here is my answer.\n{reply}\nHope this helps."
    return reply


def _topic(goal: str) -> str:
    words = goal.rstrip(".").split()
    return " ".join(words[:10]) + (" …" if len(words) > 10 else "") if words else "the goal"


def _echo(text: str) -> str:
    """The last few words the other participant said (its substance, not its lead-in)."""
    words = text.split()
    return ("… " if len(words) > 6 else "") + " ".join(words[-6:]) if words else ""
