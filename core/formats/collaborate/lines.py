"""How a collaboration's events read in the transcripts (pure functions of events).

`transcript.md`: `**YOU:** goal`, `**CLAUDE:** message`, router lines in italics
(`*[ROUTER → GPT: task]*`, `*[ROUTER: Collaboration canceled by user.]*`).
`transcript.txt`: `[GOAL: …]`, `Claude "message"`, `[HANDOFF → GPT: task]`, `[ROUTER: …]`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.record.events import BaseEvent

ROUTER = "router"
TYPES = ("human_message", "agent_response", "handoff")


def is_public(event: BaseEvent) -> bool:
    """A collaboration event a transcript shows: the goal, messages, handoffs, the router's notices."""
    return event.type in TYPES or (event.type == "stop" and event.from_ == ROUTER)


def _name(names: Mapping[str, str], slug: str | None) -> str:
    return names.get(slug or "", slug or "all")


def md_line(event: BaseEvent, names: Mapping[str, str]) -> str:
    """One collaboration event as a `transcript.md` paragraph."""
    if event.type == "human_message":
        return f"**YOU:** {event.text}"
    if event.type == "agent_response":
        warn = " *(not a valid envelope: shown as plain text)*" if _extra(event).get("envelope_valid") is False else ""
        return f"**{_name(names, event.from_).upper()}:** {event.text}{warn}"
    if event.type == "handoff":
        return f"*[ROUTER → {_name(names, event.target).upper()}: {event.text}]*"
    return f"*[ROUTER: {event.text}]*"


def txt_line(event: BaseEvent, names: Mapping[str, str]) -> str:
    """One collaboration event as a `transcript.txt` line."""
    if event.type == "human_message":
        return f"[GOAL: {event.text}]"
    if event.type == "agent_response":
        return f'{_name(names, event.from_)} "{event.text}"'
    if event.type == "handoff":
        return f"[HANDOFF → {_name(names, event.target)}: {event.text}]"
    return f"[ROUTER: {event.text}]"


def metadata(events: list[BaseEvent]) -> dict[str, Any]:
    """`session_id`, `maxRounds` and `rounds` played, for a collaboration run (else nothing)."""
    tagged = [_extra(e) for e in events if "session_id" in _extra(e)]
    if not tagged:
        return {}
    return {"sessionId": tagged[0]["session_id"], "maxRounds": tagged[0].get("max_rounds"),
            "rounds": max(int(t.get("round") or 0) for t in tagged)}


def _extra(event: BaseEvent) -> dict[str, Any]:
    return event.model_extra or {}


def printed(event: BaseEvent, names: Mapping[str, str]) -> str | None:
    """The batch line of a collaboration event (the goal is not repeated), or None."""
    if not is_public(event) or event.type == "human_message":
        return None
    return f"[round {_extra(event).get('round', '-')}] {txt_line(event, names)}"
