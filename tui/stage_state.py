"""What the session-state panel shows, from a live session's state or folded from recorded events.

The live stage copies `core.state.SessionState`; replay rebuilds the same picture from the
events it has shown so far. Both end up as a `StageState`, so the panel has one input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

from core.events import BaseEvent, CallEvent, CloseEvent, SpeakEvent
from core.state import SessionState


@dataclass
class StageState(SessionState):
    """Where the scene is and what it has cost: the engine's `SessionState`, plus what the panel
    folds in from the events of the other formats."""

    goal_achieved: bool | None = None
    round: int | None = None
    """Collaborate and roundtable: the round under way, from the events."""
    max_rounds: int | None = None
    """Collaborate: the bound on rounds, from the events."""
    phase: str | None = None
    """Roundtable: the phase under way, from the events."""
    consensus_count: int | None = None
    """Roundtable: points of consensus in the latest synthesis, from the events."""
    conflict_count: int | None = None
    """Roundtable: open conflicts in the latest synthesis, from the events."""
    blind: bool | None = None
    """Roundtable: whether answers are blind (sequential participation gives that up)."""
    beats_played: int = 0
    """Beats begun so far (the last `beat` event's number plus one): what the record's `totalBeats` counts."""
    paused_s: float = 0.0
    """Seconds spent paused so far (the elapsed time shown leaves them out)."""
    single_call: bool = False
    """A single call from the room (its close reads as an answer, not as a collaboration's cap)."""
    waiting: str | None = None
    """Live: what the scene is holding for at its safe point (the operator's decision), if anything."""


def note_progress(state: StageState, event: BaseEvent) -> None:
    """Take the beats begun, and the round, bound and phase an event of the other formats carries."""
    extra = event.model_extra or {}
    if event.type == "beat" and event.beat is not None:
        state.beats_played = max(state.beats_played, event.beat + 1)
    if isinstance(extra.get("round"), int) and event.type in ("round", "agent_call", "phase", "question"):
        state.round = extra["round"]
    if isinstance(extra.get("max_rounds"), int):
        state.max_rounds = extra["max_rounds"]
    if isinstance(extra.get("phase"), str):
        state.phase = extra["phase"]
    if event.type == "synthesis":
        state.consensus_count = _count(extra, "consensus", "consensus_count")
        state.conflict_count = _count(extra, "conflicts", "conflict_count")
    if event.type == "system" and getattr(event, "reason", None) == "not-blind":
        state.blind = False


def _count(extra: dict[str, Any], key: str, count_key: str) -> int:
    """The synthesis's own count when it gives one, else the length of its list."""
    given = extra.get(count_key)
    if isinstance(given, int):
        return given
    items = extra.get(key)
    return len(items) if isinstance(items, list) else 0


def from_session(state: Any, elapsed_s: float | None = None) -> StageState:
    """A copy of a live `SessionState` (with a fresher elapsed time when one is given)."""
    copied = {f.name: getattr(state, f.name) for f in fields(SessionState)}
    copied.update(cast=dict(state.cast), turns=Counter(state.turns), run_dir=str(state.run_dir))
    if elapsed_s is not None:
        copied["elapsed_s"] = elapsed_s
    return StageState(**copied, blind=(state.turns_mode != "sequential") if state.format == "roundtable" else None)


class PlayedTime:
    """The scene's clock without its pauses: recorded `t`s count paused time, the panel does not."""

    def __init__(self) -> None:
        self.paused_s = 0.0
        self._paused_at: float | None = None

    def feed(self, event: BaseEvent) -> None:
        """Note a pause or a resume (by its recorded `t`)."""
        if event.type == "pause" and self._paused_at is None:
            self._paused_at = event.t
        elif event.type == "resume" and self._paused_at is not None:
            self.paused_s += max(0.0, event.t - self._paused_at)
            self._paused_at = None

    def played(self, t: float) -> float:
        """Seconds of play at scene time `t`: the clock stands still while paused."""
        stopped = self._paused_at if self._paused_at is not None else t
        return max(0.0, min(t, stopped) - self.paused_s)


class StateFold:
    """Replay's state: events are folded in one at a time, in recorded order."""

    def __init__(self, run_dir: str = "") -> None:
        self.state = StageState(run_dir=run_dir)
        self.time = PlayedTime()
        self._spoke_this_beat: bool | None = None

    def snapshot(self, playhead: float | None = None) -> StageState:
        """A copy of the state so far (elapsed: the play time at `playhead`, pauses left out)."""
        state = replace(self.state, turns=Counter(self.state.turns), cast=dict(self.state.cast))
        state.elapsed_s = self.time.played(self.state.elapsed_s if playhead is None else playhead)
        return state

    def feed(self, events: Iterable[BaseEvent]) -> None:
        """Fold more events in."""
        for event in events:
            self._one(event)

    def _one(self, event: BaseEvent) -> None:
        s = self.state
        s.elapsed_s = max(s.elapsed_s, event.t)
        self.time.feed(event)
        note_progress(s, event)
        if event.type == "start":
            self._start(event.model_extra or {})
        elif event.type in ("beat", "round"):
            self._next_beat(event.beat)
        elif isinstance(event, SpeakEvent) and event.action != "silent":
            s.turns[event.from_] += 1
            self._spoke_this_beat = True
        elif isinstance(event, CallEvent):
            s.tokens += event.input_tokens + event.output_tokens + event.cache_write_tokens + event.cache_read_tokens
            s.cost_usd += event.cost_usd
        elif isinstance(event, CloseEvent):
            s.status, s.close_reason, s.goal_achieved = "closed", event.reason, event.goal_achieved
        elif event.type in ("pause", "resume", "stop"):
            s.status = {"pause": "paused", "resume": "running", "stop": "closing"}[event.type]

    def _start(self, info: dict[str, Any]) -> None:
        s, scene = self.state, info.get("scene") or {}
        s.format, s.turns_mode = scene.get("format", "scene"), scene.get("turns", "")
        s.isolation, s.coordinator = info.get("isolation", "?"), info.get("coordinator", "?")
        s.cast, s.max_beats, s.status = dict(info.get("cast") or {}), info.get("max_beats"), "running"
        s.pace_s = float(info.get("pace_s") or 0.0)

    def _next_beat(self, beat: int | None) -> None:
        if self._spoke_this_beat is not None:
            self.state.silent_streak = 0 if self._spoke_this_beat else self.state.silent_streak + 1
        self._spoke_this_beat = False
        if beat is not None:
            self.state.beat = beat
