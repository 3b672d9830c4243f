"""What the session-state panel shows, from a live session's state or folded from recorded events.

The live stage copies `promptdesk.core.engine.state.SessionState`; replay rebuilds the same picture from the
events it has shown so far. Both end up as a `StageState` (`promptdesk.tui.snapshot`), so the panel has one
input; what a format's own events say is folded in by its console side (`promptdesk.tui.formats`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import fields, replace
from typing import Any

from promptdesk.core.engine.pacing import clamp
from promptdesk.core.engine.state import SessionState
from promptdesk.core.record.events import BaseEvent, CallEvent, CloseEvent, SpeakEvent
from promptdesk.core.record.outputs import JUDGE_FALLBACK, well_formed
from promptdesk.core.record.played import BOOKKEEPING, NOT_COMPLETED
from promptdesk.tui.formats import registry
from promptdesk.tui.snapshot import StageState

__all__ = ["PlayedTime", "StageState", "StateFold", "from_session", "note_progress"]


def note_progress(state: StageState, event: BaseEvent) -> None:
    """Take the beats begun, and what an event of a format's own types says (its round, bound, phase,
    counts), as that format's console side folds it."""
    if event.type == "beat" and event.beat is not None:
        state.beats_played = max(state.beats_played, event.beat + 1)
    registry.fold(state, event)


def from_session(state: Any, elapsed_s: float | None = None, start_info: dict[str, Any] | None = None) -> StageState:
    """A copy of a live `SessionState` (with a fresher elapsed time when one is given), with what its
    format implies beyond it (whether answers are blind) and the models its start record names unpriced."""
    copied = {f.name: getattr(state, f.name) for f in fields(SessionState)}
    copied["unpriced"] = tuple((start_info or {}).get("unpriced_models") or ())
    copied.update(cast=dict(state.cast), turns=Counter(state.turns), run_dir=str(state.run_dir), tones=dict(state.tones))
    if elapsed_s is not None:
        copied["elapsed_s"] = elapsed_s
    return StageState(**copied, **registry.of(state).live_facts(state))


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
        self._last_played = True
        """Whether anything beyond the engine's bookkeeping happened in the last beat begun (a beat a stop
        cut before that is begun, not played: `core/record/played.py`)."""

    def snapshot(self, playhead: float | None = None) -> StageState:
        """A copy of the state so far (elapsed: the play time so far, pauses left out; `playhead` is a
        time already on that axis, replay's)."""
        state = replace(self.state, turns=Counter(self.state.turns), cast=dict(self.state.cast), tones=dict(self.state.tones))
        state.elapsed_s = self.time.played(self.state.elapsed_s) if playhead is None else playhead
        return state

    def prime(self, info: dict[str, Any]) -> None:
        """Know the run's choices, format and cast before its first event is shown (from its start
        record): the panel never reads `?` for what the run folder already says."""
        self._start(info)
        self.state.status = "ready"

    def feed(self, events: Iterable[BaseEvent]) -> None:
        """Fold more events in."""
        for event in events:
            self._one(event)

    def _one(self, event: BaseEvent) -> None:
        s = self.state
        s.elapsed_s = max(s.elapsed_s, event.t)
        self.time.feed(event)
        begun = s.beats_played
        note_progress(s, event)
        if s.beats_played > begun:
            self._last_played = False
        elif event.beat is not None and event.beat + 1 == s.beats_played and event.type not in BOOKKEEPING \
                and not isinstance(event, CloseEvent):
            self._last_played = True
        if event.type == "start":
            self._start(well_formed(event.model_extra or {}))
        elif event.type in registry.MARKERS:
            self._next_beat(event.beat)
        elif event.type == "beat_end":
            self._beat_ended()
        elif isinstance(event, SpeakEvent) and event.action != "silent":
            s.turns[event.from_] += 1
            s.note_tone(event.from_, event.tone)
            self._spoke_this_beat = True
        elif isinstance(event, CallEvent):
            s.tokens += event.tokens
            s.cost_usd += event.cost_usd or 0.0
            s.unknown_usage += event.unknown
        elif isinstance(event, CloseEvent):
            s.status, s.close_reason, s.goal_achieved = "closed", event.reason, event.goal_achieved
            if event.reason in NOT_COMPLETED and not self._last_played and s.beats_played > 1:
                s.beats_played -= 1  # the last beat was begun, not played: as the record counts it
        elif event.type == "system" and getattr(event, "reason", None) == JUDGE_FALLBACK:
            s.judge_fallbacks += 1
        elif event.type == "pace" and _seconds(pace := (event.model_extra or {}).get("pace_s")):
            s.pace_s = clamp(pace)
        elif event.type in ("pause", "resume", "stop") and s.status != "closed":
            s.status = {"pause": "paused", "resume": "running", "stop": "closing"}[event.type]

    def _start(self, info: dict[str, Any]) -> None:
        s, scene = self.state, info.get("scene") or {}
        s.format, s.turns_mode = scene.get("format", registry.DEFAULT), scene.get("turns", "")
        s.isolation, s.coordinator = info.get("isolation", "?"), info.get("coordinator", "?")
        s.cast, s.max_beats, s.status = dict(info.get("cast") or {}), info.get("max_beats"), "running"
        s.pace_s = float(info.get("pace_s") or 0.0)
        s.unpriced = tuple(m for m in info.get("unpriced_models") or () if isinstance(m, str))

    def _next_beat(self, beat: int | None) -> None:
        self._beat_ended()
        self._spoke_this_beat = False
        if beat is not None:
            self.state.beat = beat

    def _beat_ended(self) -> None:
        """Count the beat being played as silent or not, once: at its `beat_end` (the last beat before a
        stall's close has one), else at the next beat (records whose format writes no `beat_end`)."""
        if self._spoke_this_beat is not None:
            self.state.silent_streak = 0 if self._spoke_this_beat else self.state.silent_streak + 1
        self._spoke_this_beat = None


def _seconds(value: Any) -> bool:
    """Whether a recorded pace is a number of seconds (not a flag, not NaN)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
