"""The improviser's collaboration replies (spec 001 §3): a JSON envelope every time.

It reads its own name, the participants, the goal, the round and the transcript window from the
request. It drafts what the goal asks for (`drafts`: a short piece of writing, a numbered plan, a list
to fill in), revises the other participant's latest draft one visible change at a time, hands off
with a one-sentence task, and sets `final: true` after a few rounds (3–5, fixed by the seed and the
goal so both participants agree), always with the draft in the final message. Every message says it
was improvised offline: it claims no quality. With `malformed_rate` it wraps
prose around the JSON that often, so the router's repair and fallback can be seen offline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from promptdesk.core.formats.collaborate.drafts import HEADER, Ask, draft_in, first_draft, read_ask, revise
from promptdesk.core.improv.dice import rng_for
from promptdesk.core.providers.base import Request

_SLUG = r"[a-z0-9][a-z0-9.-]*"
"""A participant's slug: lower-case letters, digits and hyphens, with single dots (`powershell-5.1-expert`)."""
NAME = re.compile(rf"Your name is `({_SLUG})`\. Participants: ((?:{_SLUG}, )*{_SLUG}) \(")
ROUND = re.compile(r"^Round (\d+) of (\d+)\.$", re.MULTILINE)
"""The router's round line: a line of its own (a goal's or a message's further lines are indented)."""
LINE = re.compile(rf"^\[({_SLUG})(?: → ({_SLUG}))?\] (.*)$")

TASKS = {"plan": ("Make the vaguest step concrete and hand it back.", "Check the steps against the goal and cut one word in three."),
         "writing": ("Edit the weakest paragraph for rhythm and hand it back.", "Check it against the goal and tighten the ending."),
         "list": ("Fill in what you can from what you know; I have left placeholders.",),
         "answer": ("Sharpen the point that matters most and hand it back.",)}


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


def read(request: Request) -> Reading:
    """The name, participants, goal, round and transcript items (of the newest context message);
    a message's further lines (indented in the transcript) stay part of it."""
    reading = Reading()
    if match := NAME.search(request.system):
        reading.me, reading.participants = match.group(1), [p.strip() for p in match.group(2).split(",")]
    context = next((m.content for m in reversed(request.messages) if m.role == "user" and "GOAL:" in m.content), "")
    if goal := re.search(r"^GOAL: (.*)$", context, re.MULTILINE):
        reading.goal = goal.group(1).strip()
    if rounds := ROUND.findall(context):
        reading.round, reading.max_rounds = int(rounds[-1][0]), int(rounds[-1][1])
    for raw in context.split("\n\nRound ")[0].splitlines():
        if match := LINE.match(raw):
            reading.lines.append((match.group(1), match.group(2), match.group(3)))
        elif reading.lines and raw.startswith("    "):
            role, to, text = reading.lines[-1]
            reading.lines[-1] = (role, to, f"{text}\n{raw[4:]}")
    return reading


def final_round(reading: Reading, seed: int) -> int:
    """The round at which this goal is declared done: 3–5, by the seed and the goal (a lower cap stops
    the collaboration first: spec 001's test B)."""
    return rng_for(seed, "final-round", reading.goal).choice((3, 4, 5))


def latest_draft(reading: Reading, ask: Ask) -> tuple[str, str]:
    """The newest draft of the requested shape in the transcript and who wrote it (('', '') when none yet)."""
    return next(((d, role) for role, _, text in reversed(reading.lines) if role not in ("router", "user")
                 and (d := draft_in(text, ask))), ("", ""))


def envelope(request: Request, seed: int = 0) -> dict:
    """The improviser's envelope for one collaboration request: a draft of what the goal asks for,
    a revision of the other's, or the final version, which always carries the draft."""
    reading = read(request)
    rng = rng_for(seed, request.to, request.system, *(m.content for m in request.messages))
    ask = read_ask(reading.goal)
    before, author = latest_draft(reading, ask)
    if before:
        task = next((text for role, to, text in reversed(reading.lines) if role in ("router", "user")
                     and to in (reading.me, None)), "")  # what was handed to me, if anything
        draft, change = revise(before, ask, rng, task)
        # said to the other participant: their draft is `your draft`, never named by its slug (`gpt's`)
        whose = "my" if author == reading.me else "your" if author == reading.other else f"{author}'s"
        head = f"Edited {whose} draft: {change[:1].lower()}{change[1:]} {HEADER}"
    else:
        draft, head = first_draft(ask, rng), f"A first draft. {HEADER}"
    if reading.other == reading.me:  # a single call: one reply, handed to no one
        return {"message": f"{head}\n{draft}"}
    if reading.round >= final_round(reading, seed):
        return {"message": f"Final version. {HEADER}\n{draft}", "final": True}
    return {"message": f"{head}\n{draft}", "handoff": {"to": reading.other, "task": rng.choice(TASKS[ask.kind])},
            "final": False}
def play_envelope(request: Request, seed: int, malformed_rate: float = 0.0) -> str:
    """The reply text: strict JSON, or (at `malformed_rate`) prose around it."""
    reply = json.dumps(envelope(request, seed), ensure_ascii=False)
    rng = rng_for(seed, "malformed", request.to, *(m.content for m in request.messages))
    if malformed_rate and rng.random() < malformed_rate:
        return f"Sure! Here is my answer.\n{reply}\nHope this helps."
    return reply
