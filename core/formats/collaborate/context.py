"""What each collaboration call carries (spec 001 §4–§5): a system prompt with the shared rules,
the participant's name and persona and the schema; and a user message with the goal, the recent
transcript window (oldest first), "Round r of max" and the JSON-only instruction.

The window is the last `max_items` transcript items; when over `token_budget` (about four
characters a token, a Han, kana or Hangul character a token each: `tokens`), the oldest are dropped
first, and a lone item still too long is cut; the newest participant's message is cut rather than
dropped, so the one a handoff passes the work to sees it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from promptdesk.core.engine.actors import cut_to, tokens
from promptdesk.core.protocol.lines import indented

WINDOW_ITEMS = 8
WINDOW_TOKENS = 2500
JSON_ONLY = "Return JSON only per schema—no extra text."

SHARED_RULES = """\
1. You are collaborating with another assistant in a turn-based session managed by a router.
2. Return only strict JSON matching the provided schema: {message, handoff?, final?}.
3. If you want the other assistant to go next, include a concise `handoff` with `to` and a one-sentence `task`.
4. If the solution is complete, set `final: true` and omit `handoff`.
5. Be concise and move the task forward each turn."""

SINGLE_CALL_RULES = """\
1. You answer one request in a single call: no other assistant takes part, and nothing is handed on.
2. Return only strict JSON matching the provided schema: {message, final?}.
3. Put your whole answer in `message` and omit `handoff`: there is no one to hand the work to.
4. Be concise."""
"""Spec 001's rules for a participant alone (the console's "Single call", M1's one call and one reply):
the shared rules would tell it of another assistant to hand the work to."""

REPAIR_PROMPT = ("Your reply was not a valid JSON envelope ({problem}). Reply again with only the JSON object "
                 "{{\"message\": ..., \"handoff\"?: {{\"to\": ..., \"task\": ...}}, \"final\"?: true|false}} "
                 "and no other text.")


@dataclass(frozen=True)
class Item:
    """One transcript item: `role` is user, router or a participant slug; `to` addresses router items."""

    role: str
    text: str
    to: str | None = None

    def line(self) -> str:
        """The item as the participants read it; further lines of its text are indented, so a
        message can never start a line that reads as another item."""
        text = indented(self.text)
        if self.role == "router":
            return f"[router → {self.to}] {text}" if self.to else f"[router] {text}"
        return f"[{self.role}] {text}"


def window(items: Sequence[Item], max_items: int = WINDOW_ITEMS, token_budget: int = WINDOW_TOKENS) -> list[Item]:
    """The last `max_items` items, oldest first, dropping the oldest while over `token_budget`. The
    newest participant's message (the work a handoff passes on) is never dropped for the lines after
    it (the router's task, an operator's event): when it is all that would still go, it is cut to
    what they leave (unless they leave next to nothing: a very long event)."""
    kept = list(items)[-max_items:] if max_items > 0 else []
    newest = max((n for n, i in enumerate(kept) if i.role not in ("router", "user")), default=-1)
    while len(kept) > 1 and sum(tokens(i.line()) for i in kept) > token_budget:
        left = token_budget - sum(tokens(i.line()) for i in kept[1:]) if newest == 0 else 0
        if left >= min(200, token_budget // 4):  # room for a useful part of it (else it goes too)
            kept[0] = _cut(kept[0], left)
            break
        kept.pop(0)
        newest -= 1
    if kept and tokens(kept[0].line()) > token_budget:
        kept[0] = _cut(kept[0], token_budget)
    return kept


def _cut(item: Item, budget: int) -> Item:
    """`item` with its text cut to about `budget` tokens (a marked cut; never empty)."""
    if tokens(item.line()) <= budget:
        return item
    return Item(item.role, (cut_to(item.text, budget * 4 - 40) or item.text[:1]) + " …", item.to)


def system_prompt(slug: str, participants: Sequence[str], persona: str, envelope_schema: dict) -> str:
    """The stable part of every call to one participant (cached under isolation b)."""
    others = ", ".join(p for p in participants if p != slug) or "no one"
    rules = SHARED_RULES if len(participants) > 1 else SINGLE_CALL_RULES
    parts = [rules, f"Your name is `{slug}`. Participants: {', '.join(participants)} (you work with {others})."]
    if persona.strip():
        parts.append("## YOUR PERSONA\n\n" + persona.strip())
    parts.append("## REPLY SCHEMA\n\n" + json.dumps(envelope_schema, indent=2))
    return "\n\n".join(parts)


def user_message(goal: str, items: Sequence[Item], round_: int, max_rounds: int, *, heading: str = "",
                 own: Sequence[str] = ()) -> str:
    """Goal, transcript window, the operator's lines to this participant alone (when any), round line
    and the JSON-only instruction, in that order. The goal's further lines are indented, like a
    transcript item's, so that a goal quoting a log or a round line never reads as the router's."""
    transcript = "\n".join(item.line() for item in items) or "(nothing yet: you start)"
    title = heading or "RECENT TRANSCRIPT (oldest first)"
    private = ("FROM THE OPERATOR, TO YOU ONLY:\n" + "\n".join(own) + "\n\n") if own else ""
    return (f"GOAL: {indented(goal)}\n\n{title}:\n{transcript}\n\n{private}"
            f"Round {round_} of {max_rounds}.\n{JSON_ONLY}")
