"""How a collaboration's events read in the transcripts (pure functions of events).

`transcript.md`: `**YOU:** goal`, `**CLAUDE:** message`, router lines in italics
(`*[ROUTER → GPT: task]*`, `*[ROUTER: Collaboration canceled by user.]*`).
`transcript.txt`: `[GOAL: …]`, `Claude "message"`, `[HANDOFF → GPT: task]`, `[ROUTER: …]`.

Every text a model (or the operator) wrote is folded so that it never starts a line of its own:
in `transcript.md` a message keeps its line breaks, each further line indented (read as part of the
paragraph, or as a code block after a blank line, never as another speaker's line or a router line);
in `transcript.txt`, the batch output and every bracketed line it is folded onto one line
(`promptdesk.core.protocol.lines.one_line`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptdesk.core.protocol.lines import indented, one_line
from promptdesk.core.record.events import BaseEvent

ROUTER = "router"
TYPES = ("human_message", "agent_response", "handoff")


def is_public(event: BaseEvent) -> bool:
    """A collaboration event a transcript shows: the goal, messages, handoffs, the router's notices."""
    return event.type in TYPES or (event.type == "stop" and event.from_ == ROUTER)


def _name(names: Mapping[str, str], slug: str | None) -> str:
    return one_line(names.get(slug or "", slug or "all"))


def md_line(event: BaseEvent, names: Mapping[str, str]) -> str:
    """One collaboration event as a `transcript.md` paragraph."""
    if event.type == "human_message":
        return f"**YOU:** {indented(event.text)}"
    if event.type == "agent_response":
        warn = " *(not a valid envelope: shown as plain text)*" if _extra(event).get("envelope_valid") is False else ""
        return f"**{_name(names, event.from_).upper()}:** {indented(event.text)}{warn}"
    if event.type == "handoff":
        return f"*[ROUTER → {_name(names, event.target).upper()}: {one_line(event.text)}]*"
    return f"*[ROUTER: {one_line(event.text)}]*"


def txt_line(event: BaseEvent, names: Mapping[str, str]) -> str:
    """One collaboration event as a `transcript.txt` line (always exactly one line)."""
    if event.type == "human_message":
        return f"[GOAL: {one_line(event.text)}]"
    if event.type == "agent_response":
        return f'{_name(names, event.from_)} "{one_line(event.text)}"'
    if event.type == "handoff":
        return f"[HANDOFF → {_name(names, event.target)}: {one_line(event.text)}]"
    return f"[ROUTER: {one_line(event.text)}]"


def metadata(events: list[BaseEvent]) -> dict[str, Any]:
    """`session_id`, `maxRounds` and `rounds` played, for a collaboration run (else nothing). A round
    is played when its reply was recorded, as the batch summary counts it: a round a stop, a kill or
    a failed call cut short is not."""
    tagged = [_extra(e) for e in events if "session_id" in _extra(e)]
    if not tagged:
        return {}
    return {"sessionId": tagged[0]["session_id"], "maxRounds": tagged[0].get("max_rounds"),
            "rounds": len({_extra(e).get("round") for e in events if e.type == "agent_response"})}


def _extra(event: BaseEvent) -> dict[str, Any]:
    return event.model_extra or {}


def at_round(beat: int | None) -> str:
    """Where a batch line happened: `[round N]` (a collaboration's beat 0 is its round 1), or `[-]`."""
    return f"[round {beat + 1}]" if beat is not None else "[-]"


def printed(event: BaseEvent, names: Mapping[str, str]) -> str | None:
    """The batch line of a collaboration event (the goal is not repeated), or None. A single call's
    handoff (to its one participant: there is no one else) is recorded but not printed, as the console
    does not show it."""
    if not is_public(event) or event.type == "human_message" or (event.type == "handoff" and len(names) == 1):
        return None
    return f"[round {_extra(event).get('round', '-')}] {txt_line(event, names)}"
