"""What the session-state panel shows: one plain dataclass, filled live or folded from recorded events.

Kept apart from the folding (`promptdesk.tui.stage_state`) so that every part of the console that reads or
fills a snapshot (the formats' console sides among them) can import it without importing the fold.
"""

from __future__ import annotations

from dataclasses import dataclass

from promptdesk.core.engine.state import SessionState


@dataclass
class StageState(SessionState):
    """Where the scene is and what it has cost: the engine's `SessionState`, plus what the panel
    folds in from the events of the formats' own types."""

    goal_achieved: bool | None = None
    round: int | None = None
    """The round under way, from the events (formats that play in rounds)."""
    max_rounds: int | None = None
    """The bound on rounds, from the events."""
    phase: str | None = None
    """The phase under way, from the events (formats that play in phases)."""
    consensus_count: int | None = None
    """Points of consensus in the latest synthesis, from the events."""
    conflict_count: int | None = None
    """Open conflicts in the latest synthesis, from the events."""
    blind: bool | None = None
    """Whether answers are blind (sequential participation gives that up); None where no one answers blind."""
    beats_played: int = 0
    """Beats begun so far (the last `beat` event's number plus one); once a stop (a budget, a failure) has
    closed the run, less a last beat it cut before anything was played: what the record's `totalBeats` counts."""
    paused_s: float = 0.0
    """Seconds spent paused so far (the elapsed time shown leaves them out)."""
    single_call: bool = False
    """A single call from the room (its close reads as an answer, not as a cap on rounds)."""
    waiting: str | None = None
    """Live: what the scene is holding for at its safe point (the operator's decision), if anything."""
    slow: dict[str, float] | None = None
    """Live: the actors waited on for a while, and for how many seconds (`promptdesk.tui.waits`)."""
    retrying: dict[str, str] | None = None
    """Live: of those, the ones whose call is being retried, and why (the retry's notice)."""
    answers: dict[str, int] | None = None
    """Answers given per participant, from the events (formats whose participants answer, not speak)."""
    unpriced: tuple[str, ...] = ()
    """Models of this run with no known price (from its start record): what their calls cost is unknown."""


FROM_EVENTS = ("goal_achieved", "round", "max_rounds", "phase", "consensus_count", "conflict_count", "blind", "answers")
"""The fields only the events tell: a live snapshot takes them from what the stage folded in."""
