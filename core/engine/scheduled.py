"""A scene file's scheduled world events (`events:`): each is delivered at the first beat (or round)
that has reached its `at_beat`, once, in every format; in a format that plays rounds, one whose beat
never came is said, never dropped silently."""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptdesk.core.protocol.lines import one_line

if TYPE_CHECKING:
    from promptdesk.core.engine.session import Session

UNPLAYED = "unplayed-event"
"""The `reason` of the `system` line for a scheduled world event whose beat never came."""


def fire_due(session: Session, beat: int) -> None:
    """Deliver every scheduled world event due at or before `beat` that has not been delivered yet."""
    for index, event in enumerate(session.scene.events):
        if event.at_beat <= beat and index not in session.fired_events:
            session.fired_events.add(index)
            session.world_event(event.text, source="coordinator")


def say_unplayed(session: Session, ended: str) -> None:
    """A `system` line for each scheduled world event never delivered (`ended`: where the run stopped)."""
    for index, event in enumerate(session.scene.events):
        if index not in session.fired_events:
            session.say("system", f"The world event scheduled at beat {event.at_beat} "
                        f"({one_line(event.text)[:80]!r}) never happened: {ended}", reason=UNPLAYED)
