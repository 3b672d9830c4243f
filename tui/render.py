"""How core events read on the stage: pure functions from events to role-tagged lines.

Nothing here knows about colours or widgets. A `Line` is a tuple of `(text, role)` pieces; the
transcript maps each role to a style of the active theme. Every piece of untrusted text (anything
an actor, a character file or a scene file said) passes through `safe`, which strips terminal
control sequences; widgets then render it as plain `Text`, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from core.events import BaseEvent, CloseEvent, SpeakEvent
from core.sanitize import strip_controls

Piece = tuple[str, str]
"""A run of text and the role that styles it (`speaker-0`, `tone`, `event`, ...)."""

SPEAKER_ROLES = 8
"""Distinct speaker colours per theme (a scene has at most 8 characters)."""

ROLES = tuple(f"speaker-{i}" for i in range(SPEAKER_ROLES)) + (
    "speech", "target", "tone", "nonverbal", "interrupt", "event", "note", "system", "close", "beat",
    "muted", "title")
"""Every role a piece can have; each is a component class of the transcript."""


def safe(text: object) -> str:
    """Untrusted text made safe for a terminal: escape sequences and control characters removed."""
    return strip_controls("" if text is None else str(text))


class Line(NamedTuple):
    """One transcript line as role-tagged pieces; `plain` is what a person reads.

    Held as two tuples of strings so that thousands of kept lines cost the garbage collector
    nothing (`tuple(line)` is what the transcript keeps).
    """

    texts: tuple[str, ...]
    roles: tuple[str, ...]

    @classmethod
    def of(cls, *pieces: Piece) -> Line:
        """A line from `(text, role)` pieces."""
        return cls(tuple(t for t, _ in pieces), tuple(r for _, r in pieces))

    @property
    def pieces(self) -> tuple[Piece, ...]:
        """The `(text, role)` pieces, in order."""
        return tuple(zip(self.texts, self.roles))

    @property
    def plain(self) -> str:
        """The line's text without styles."""
        return "".join(self.texts)


@dataclass(frozen=True)
class Cast:
    """Slug to display name for one scene, in cast order (the order picks the speaker colour)."""

    names: Mapping[str, str]

    def name(self, slug: str | None) -> str:
        """A cast member's display name (or the slug itself), made safe."""
        return safe(self.names.get(slug or "", slug or "?"))

    def role(self, slug: str) -> str:
        """The speaker role (colour) of a cast member; `muted` for anyone else."""
        order = list(self.names)
        return f"speaker-{order.index(slug) % SPEAKER_ROLES}" if slug in order else "muted"


def _speak(event: SpeakEvent, cast: Cast) -> Line:
    name = [(cast.name(event.from_), cast.role(event.from_))]
    if event.action == "silent":
        gesture = [(f" *{safe(event.nonverbal)}*", "nonverbal")] if event.nonverbal else []
        return Line.of(*(name + [(" — silent", "muted")] + gesture))
    parts = list(name)
    if event.action == "interrupt":
        after = f' after "{safe(event.interrupt_after)}"' if event.interrupt_after else ""
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
    return Line.of(*(parts))


def _world_event(event: BaseEvent, cast: Cast) -> Line:
    who = " (from you)" if event.from_ == "operator" else ""
    return Line.of(*((f"⚡ EVENT{who}: ", "event"), (safe(event.text), "event")))


def _note(event: BaseEvent, cast: Cast) -> Line:
    author = "Director's note" if event.from_ == "operator" else "Coordinator note"
    to = cast.name(event.target) if event.target else "everyone"
    why = f" ({safe(getattr(event, 'reason', None))})" if getattr(event, "reason", None) else ""
    return Line.of(*((f"✎ {author} to {to}{why}: ", "note"), (safe(event.text), "note")))


def _close(event: BaseEvent, cast: Cast) -> Line:
    assert isinstance(event, CloseEvent)
    goal = "goal achieved" if event.goal_achieved else "goal not achieved"
    return Line.of(*((f"■ Scene closed ({safe(event.reason)}, {goal}): ", "close"), (safe(event.text), "close")))


def _tagged(prefix: str, role: str) -> Callable[[BaseEvent, Cast], Line]:
    def line(event: BaseEvent, cast: Cast) -> Line:
        return Line.of(*((prefix, role), (safe(event.text), role)))
    return line


def _start(event: BaseEvent, cast: Cast) -> Line:
    scene = (event.model_extra or {}).get("scene") or {}
    title = safe(scene.get("title") or scene.get("name") or event.text)
    setting = safe(scene.get("setting") or "")
    return Line.of(*((f"Scene: {title}", "title"), (f" — {setting}" if setting else "", "muted")))


def _beat(event: BaseEvent, cast: Cast) -> Line:
    return Line.of(*((f"── {safe(event.text)} ──", "beat"),))


def _journal(event: BaseEvent, cast: Cast) -> Line:
    return Line.of(*((f"{cast.name(event.from_)} wrote a journal entry", "muted"),))


_LINES: dict[str, Callable[[BaseEvent, Cast], Line]] = {
    "start": _start, "beat": _beat, "event": _world_event, "note": _note, "close": _close,
    "journal": _journal, "system": _tagged("[SYSTEM] ", "system"), "stop": _tagged("■ ", "system"),
    "pause": _tagged("‖ ", "system"), "resume": _tagged("▶ ", "system"),
    "correct": _tagged("↺ ", "muted"), "decision": _tagged("Coordinator: ", "muted"),
    "round": _tagged("── ", "beat"), "phase": _tagged("── ", "beat"), "handoff": _tagged("→ ", "muted"),
    "synthesis": _tagged("Synthesis: ", "note"), "escalate": _tagged("⚠ Escalation: ", "system"),
}


def transcript_line(event: BaseEvent, cast: Cast) -> Line | None:
    """The transcript line for an event, or None for what the transcript does not show
    (thinking, routing, calls, spawns, briefs and live deltas)."""
    if isinstance(event, SpeakEvent):
        return _speak(event, cast)
    handler = _LINES.get(event.type)
    return handler(event, cast) if handler else None
