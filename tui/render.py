"""How core events read on the stage: pure functions from events to role-tagged lines (`promptdesk.tui.lines`).

The engine's own events (speech, beats, world events, notes, controls, the close, the evaluation
after it) are here; each
format's own event types read as its console side says (`promptdesk.tui.formats.registry.LINES`). Events with
no line (thinking, routing, calls, spawns, deltas) give None.
"""

from __future__ import annotations

from collections.abc import Callable

from promptdesk.core.record.events import BaseEvent, CloseEvent, SpeakEvent
from promptdesk.core.record.outputs import SILENCED, well_formed
from promptdesk.tui.formats.base import marker_line, tagged
from promptdesk.tui.formats.registry import LINES as FORMAT_LINES
from promptdesk.tui.lines import Cast, Line, safe


def _speak(event: SpeakEvent, cast: Cast) -> Line:
    name = [(cast.name(event.from_), cast.role(event.from_))]
    if event.action == "silent":
        gesture = [(f" *{safe(event.nonverbal)}*", "nonverbal")] if event.nonverbal else []
        return Line.of(*name, (" — silent", "muted"), *gesture)
    parts = list(name)
    if event.action == "interrupt":
        after = f' after "{safe(event.interrupt_after)}"' if (event.interrupt_after or "").strip() else ""
        parts.append((f" interrupts{after}", "interrupt"))
    elif event.action == "react":
        parts.append((" reacts", "muted"))
    if event.target:
        parts.append((f" → {safe(event.target)}", "target"))
    if event.tone:
        parts.append((f" ({safe(event.tone)})", "tone"))
    if event.nonverbal:
        parts.append((f" *{safe(event.nonverbal)}*", "nonverbal"))
    if event.text:
        parts.append((f'  "{safe(event.text)}"', "speech"))
    return Line.of(*parts)


def _world_event(event: BaseEvent, cast: Cast) -> Line:
    suggested = (event.model_extra or {}).get("suggested_by") == "coordinator"
    who = (" (from you, suggested by the coordinator)" if suggested else " (from you)") if event.from_ == "operator" \
        else (" (suggested by the coordinator)" if suggested else "")
    return Line.of((f"⚡ EVENT{who}: ", "event"), (safe(event.text), "event"))


def _decision(event: BaseEvent, cast: Cast) -> Line | None:
    """The coordinator's decision, saying what kind it is: a suggested world event reads as a suggestion,
    never as something that happened (a withheld one has no line here: its system line says why, without
    its words). An operator's decision (a roundtable's escalation) reads as its format says."""
    if event.from_ != "coordinator":
        maker = FORMAT_LINES.get("decision")
        return maker(event, cast) if maker else None
    facts = event.model_extra or {}
    kind, text = facts.get("decision"), safe(event.text)
    if kind == "suggest_event":
        if facts.get("withheld"):
            return None
        return Line.of(("✦ Coordinator suggests a world event (not in the scene unless injected): ", "muted"),
                       (text, "note"))
    if kind == "nudge":
        return Line.of((f"✦ Coordinator nudges {cast.name(event.target)}: ", "muted"), (text, "muted"))
    if kind == "close":
        return Line.of(("✦ Coordinator closes the scene: ", "muted"), (text, "muted"))
    return Line.of(("✦ Coordinator: ", "muted"), (text, "muted"))


def _note(event: BaseEvent, cast: Cast) -> Line:
    author = "Director's note" if event.from_ == "operator" else "Coordinator note"
    to = cast.name(event.target) if event.target else "everyone"
    why = f" ({safe(getattr(event, 'reason', None))})" if getattr(event, "reason", None) else ""
    return Line.of((f"✎ {author} to {to}{why}: ", "note"), (safe(event.text), "note"))


def _close(event: BaseEvent, cast: Cast) -> Line:
    assert isinstance(event, CloseEvent)
    if cast.single_call and event.reason in cast.answered:
        return Line.of(("■ Answered: one call, one reply", "close"))
    goal = {True: "goal achieved", False: "goal not achieved"}.get(event.goal_achieved, "goal unknown")
    return Line.of((f"■ Scene closed ({safe(event.reason)}, {goal}): ", "close"), (safe(event.text), "close"))


def _system(event: BaseEvent, cast: Cast) -> Line:
    """A system line; an actor's failure (a `target`) says why, from the recorded reason."""
    reason = getattr(event, "reason", None)
    why = f" — {safe(reason)}" if reason and event.target and reason != SILENCED else ""
    return Line.of(("[SYSTEM] ", "system"), (safe(event.text) + why, "system"))


def _start(event: BaseEvent, cast: Cast) -> Line:
    scene = well_formed(event.model_extra or {})["scene"]
    title = safe(scene.get("title") or scene.get("name") or event.text)
    setting = safe(scene.get("setting") or "")
    return Line.of((f"Scene: {title}", "title"), (f" — {setting}" if setting else "", "muted"))


def _journal(event: BaseEvent, cast: Cast) -> Line:
    return Line.of((f"{cast.name(event.from_)} wrote a journal entry", "muted"))


_LINES: dict[str, Callable[[BaseEvent, Cast], Line | None]] = {
    "start": _start, "beat": marker_line, "event": _world_event, "note": _note, "close": _close, "decision": _decision,
    "journal": _journal, "system": _system, "stop": tagged("■ ", "system"),
    "pause": tagged("‖ ", "system"), "resume": tagged("▶ ", "system"), "pace": tagged("⏱ ", "system"),
    "correct": tagged("↺ ", "muted"), "branch": tagged("↳ ", "system"),
    "evaluation": tagged("★ ", "note"),
}


def transcript_line(event: BaseEvent, cast: Cast) -> Line | None:
    """The transcript line for an event, or None for what the transcript does not show
    (thinking, routing, calls, spawns, briefs and live deltas)."""
    if isinstance(event, SpeakEvent):
        return _speak(event, cast)
    handler = _LINES.get(event.type) or FORMAT_LINES.get(event.type)
    return handler(event, cast) if handler else None
