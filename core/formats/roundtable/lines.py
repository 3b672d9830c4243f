"""How a roundtable's events read in the transcripts and the batch output (pure functions of events).

`transcript.md`: `### Round n - phase`, `**FACILITATOR:** question`, `**ALICE:** position - rationale
(confidence 0.70)`, the synthesis in italics, escalations and decisions.
`transcript.txt`: `[ROUND n: phase]`, `Facilitator "question"`, `Alice "position" (0.70)`, `[SYNTHESIS: …]`.

What a model wrote (questions, positions, rationales, syntheses, decisions) never starts a line: a
`transcript.md` paragraph keeps its line breaks with every further line indented, and everything
else is folded onto its one line (`promptdesk.core.protocol.lines`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptdesk.core.protocol.lines import indented, one_line
from promptdesk.core.record.events import BaseEvent

TYPES = ("round", "question", "answer", "synthesis", "phase", "escalate", "decision")


def is_public(event: BaseEvent) -> bool:
    """A roundtable event a transcript shows."""
    return event.type in TYPES and (event.type != "phase" or _extra(event).get("reason") != "gated")


def _extra(event: BaseEvent) -> dict[str, Any]:
    return event.model_extra or {}


def _confidence(event: BaseEvent) -> str:
    value = _extra(event).get("confidence")
    return f" (confidence {value:.2f})" if isinstance(value, (int, float)) else " (confidence unknown)"


def md_line(event: BaseEvent, names: Mapping[str, str]) -> str:
    """One roundtable event as a `transcript.md` paragraph."""
    extra = _extra(event)
    if event.type == "round":
        return f"### {one_line(event.text)}"
    if event.type == "question":
        focus = f" *(focus: {one_line(str(extra['focus']))})*" if extra.get("focus") else ""
        return f"**FACILITATOR:** {indented(event.text)}{focus}"
    if event.type == "answer":
        rationale = f" - {extra['rationale']}" if extra.get("rationale") else ""
        return f"**{_name(names, event.from_).upper()}:** {indented(event.text + rationale)}{_confidence(event)}"
    if event.type == "synthesis":
        return f"*[SYNTHESIS: {one_line(event.text)} - next: {one_line(str(extra.get('next_action', '?')))}]*"
    return f"*[{event.type.upper()}: {one_line(event.text)}]*"


def txt_line(event: BaseEvent, names: Mapping[str, str]) -> str:
    """One roundtable event as a `transcript.txt` (and batch) line (always exactly one line)."""
    extra = _extra(event)
    if event.type == "round":
        return f"[ROUND {extra.get('round', event.beat)}: {one_line(str(extra.get('phase', '')))}]"
    if event.type == "question":
        return f'Facilitator "{one_line(event.text)}"'
    if event.type == "answer":
        return f'{_name(names, event.from_)} "{one_line(event.text)}"{_confidence(event)}'
    if event.type == "synthesis":
        return (f"[SYNTHESIS: {one_line(event.text)} | consensus {len(extra.get('consensus') or [])}, conflicts "
                f"{len(extra.get('conflicts') or [])}, next: {one_line(str(extra.get('next_action', '?')))}]")
    return f"[{event.type.upper()}: {one_line(event.text)}]"


def _name(names: Mapping[str, str], slug: str | None) -> str:
    return one_line(names.get(slug or "", slug or "?"))


def metadata(events: list[BaseEvent]) -> dict[str, Any]:
    """Rounds played, the last phase, and the last synthesis's consensus and conflict counts, for a
    roundtable run (else nothing)."""
    rounds = [e for e in events if e.type == "round"]
    if not rounds:
        return {}
    syntheses = [_extra(e) for e in events if e.type == "synthesis"]
    last = syntheses[-1] if syntheses else {}
    return {"rounds": max(int(_extra(e).get("round") or 0) for e in rounds),
            "phase": _extra(rounds[-1]).get("phase"),
            "consensusCount": _count(last, "consensus"), "conflictCount": _count(last, "conflicts"),
            "escalations": sum(e.type == "escalate" for e in events)}


def _count(synthesis: dict[str, Any], key: str) -> int:
    """The synthesis's own count (`consensus_count`, `conflict_count`), else the length of its list (a
    forced conclusion recorded before it carried the counts)."""
    given = synthesis.get(f"{key.removesuffix('s')}_count")
    if isinstance(given, int):
        return given
    items = synthesis.get(key)
    return len(items) if isinstance(items, list) else 0


def printed(event: BaseEvent, names: Mapping[str, str]) -> str | None:
    """The batch line of a roundtable event, or None."""
    if not is_public(event):
        return None
    where = f"[beat {event.beat}]" if event.beat is not None else "[-]"
    return f"{where} {txt_line(event, names)}"
