"""Transcript lines for the events of the other formats: collaborate (spec 001) and roundtable (002)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.events import BaseEvent
from tui.lines import Cast, Line, Piece, safe


def _extra(event: BaseEvent, key: str) -> Any:
    return (event.model_extra or {}).get(key)


def _audience(event: BaseEvent, cast: Cast) -> str:
    target = event.target or ""
    return "everyone" if target in ("", "all") else cast.name(target)


def _task(event: BaseEvent, cast: Cast) -> Line:
    return Line.of(("✎ Task from you: ", "note"), (safe(event.text), "note"))


def _response(event: BaseEvent, cast: Cast) -> Line:
    final = " (final)" if _extra(event, "final") and not cast.single_call else ""
    to = "" if cast.single_call or event.target == event.from_ else f" → {_audience(event, cast)}"
    return Line.of((cast.name(event.from_), cast.role(event.from_)), (f"{to}{final}", "target"),
                   (f'  "{safe(event.text)}"', "speech"))


def _handoff(event: BaseEvent, cast: Cast) -> Line | None:
    """Who speaks next; nothing when there is no one else (a single call, or a hand-over to oneself)."""
    if cast.single_call or event.target == event.from_:
        return None
    return Line.of((f"{cast.name(event.from_)} hands over to {_audience(event, cast)}: ", "muted"),
                   (safe(event.text), "muted"))


def _question(event: BaseEvent, cast: Cast) -> Line:
    return Line.of(("Facilitator asks: ", "note"), (safe(event.text), "note"))


def _answer(event: BaseEvent, cast: Cast) -> Line:
    confidence = _extra(event, "confidence")
    sure = f" (confidence {confidence:.2f})" if isinstance(confidence, (int, float)) else ""
    why = safe(_extra(event, "rationale") or "")
    return Line.of((cast.name(event.from_), cast.role(event.from_)), (f'  "{safe(event.text)}"', "speech"),
                   (sure, "tone"), (f" — {why}" if why else "", "muted"))


def _conflict(item: Any) -> str:
    return safe(item.get("topic") if isinstance(item, dict) else item)


def _listed(label: str, items: Any, show: Callable[[Any], str] = safe) -> list[Piece]:
    values = [show(x) for x in items] if isinstance(items, list) else []
    values = [v for v in values if v]
    return [(f" · {label}: ", "muted"), ("; ".join(values) if values else "none", "note")]


def _synthesis(event: BaseEvent, cast: Cast) -> Line:
    """The facilitator's synthesis: its text, consensus, open conflicts, next action, recommendation."""
    rnd = _extra(event, "round")
    head = f"Synthesis (round {rnd}): " if isinstance(rnd, int) else "Synthesis: "
    pieces: list[Piece] = [(head, "note"), (safe(event.text), "note")]
    pieces += _listed("consensus", _extra(event, "consensus"))
    pieces += _listed("open conflicts", _extra(event, "conflicts"), _conflict)
    if _extra(event, "next_action"):
        pieces.append((f" · next: {safe(_extra(event, 'next_action'))}", "muted"))
    if _extra(event, "recommendation"):
        pieces += [(" · recommendation: ", "muted"), (safe(_extra(event, "recommendation")), "note")]
    return Line.of(*pieces)


def _decision(event: BaseEvent, cast: Cast) -> Line:
    who = "Your decision" if event.from_ == "operator" else "Coordinator"
    return Line.of((f"{who}: ", "note" if event.from_ == "operator" else "muted"), (safe(event.text), "muted"))


FORMAT_LINES: dict[str, Callable[[BaseEvent, Cast], Line | None]] = {
    "human_message": _task, "agent_response": _response, "handoff": _handoff,
    "question": _question, "answer": _answer, "synthesis": _synthesis, "decision": _decision,
}
"""Line makers by event type (`agent_call`, like `route`, has no line: it only says who is asked)."""
