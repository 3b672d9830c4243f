"""How much of a run was played: its close, its beats, and the beats played before the close.

A beat (a collaboration's or a roundtable's round) is played once something happened in it beyond
the engine's bookkeeping: a speech, a thought, an answer, a world event or a note delivered, a failed
turn's line. A last beat that a stop (or a budget, or a failure) cut before any of that (its calls in flight,
recorded cut off) was begun, not played, and is not counted; nor is the next number, never begun, that a stop
between beats closes with, even when it holds the world events and notes still queued at the stop (recorded at
the close, delivered to no one).
"""

from __future__ import annotations

from promptdesk.core.record.events import BaseEvent, CloseEvent

SETUP = frozenset({"start", "spawn", "brief", "event", "note", "pause", "resume", "pace", "stop"})
"""What a run that never began its first beat may hold (a stop in setup plays no beat)."""
BOOKKEEPING = frozenset({"beat", "round", "route", "call", "agent_call", "delta", "stop", "pause", "resume", "pace"})
"""The engine's own marks: a beat holding nothing else was begun, not played."""
MARKERS = frozenset({"beat", "round"})
"""The events that begin a beat (a round): a number the record holds without one was never begun."""
NOT_COMPLETED = ("stop", "error", "provider-error", "record-error", "budget")
"""Close reasons of a scene that did not complete on its own (`success` false): an operator's stop, a
failed engine, failed model calls, a folder that could not be written, the budget. Every other close
(natural, explicit, caps, stall, a collaboration's final, cap or no_handoff, a roundtable's end) is its own."""


def close_event(events: list[BaseEvent]) -> CloseEvent | None:
    """The scene's close, if it was reached."""
    return next((e for e in reversed(events) if isinstance(e, CloseEvent)), None)


def beats(events: list[BaseEvent]) -> int:
    """Beats numbered in the record (the highest number, plus one for beat 0): a per-beat table's length."""
    numbers = [e.beat for e in events if e.beat is not None]
    return (max(numbers) + 1) if numbers else 0


def beats_played(events: list[BaseEvent]) -> int:
    """Beats played before the close (a stop between beats closes with the next number), less a setup
    beat 0, and less a last beat the close cut before anything in it was played; none when stopped in setup."""
    played = events[:events.index(close)] if (close := close_event(events)) is not None else events
    calls = {e.beat for e in played if e.type == "call"}
    if not calls and all(e.type in SETUP for e in played):
        return 0
    count = beats(played) - bool(calls and 0 not in calls)
    last = max((e.beat for e in played if e.beat is not None), default=0)
    at_last = [e for e in played if e.beat == last]
    never_begun = any(e.type in MARKERS for e in played) and not any(e.type in MARKERS for e in at_last)
    if close is not None and close.reason in NOT_COMPLETED and last > 0 and (
            never_begun or all(e.type in BOOKKEEPING for e in at_last)):
        count -= 1
    return max(count, 0)
