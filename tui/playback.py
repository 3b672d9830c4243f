"""Replay's transport: which recorded events are on stage, the playhead, speed, play and pause.

Pure logic, no widgets: every move returns the events to add to the stage, or says that the
stage must be rebuilt from the start (a seek backwards).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from promptdesk.core.record.events import BaseEvent
from promptdesk.tui.formats.registry import MARKERS

SPEEDS = (1.0, 4.0, 16.0)
TIMELESS_BEAT_S = 1.5
"""A record whose every event has one time (a headless run on the offline improviser of a scene without
`latency_ms`: simulated time that never moved) plays a beat every this many seconds at 1x, as the
console plays the improviser live, instead of all at once."""
BEAT_MARKERS = MARKERS
"""Where a beat step stops: a beat, or a format's own unit of play (a round)."""


@dataclass(frozen=True)
class Move:
    """The result of a transport move: events to show, after clearing the stage if `rebuild`."""

    events: list[BaseEvent]
    rebuild: bool = False


def played_times(events: Sequence[BaseEvent]) -> list[float]:
    """Each event's time on the replay's axis: its recorded `t` without the time the operator kept the
    scene paused before it (what was recorded during a pause sits at the moment the pause began)."""
    times: list[float] = []
    paused_s, paused_at = 0.0, None
    for event in events:
        if event.type == "pause" and paused_at is None:
            paused_at = event.t
        elif event.type == "resume" and paused_at is not None:
            paused_s += max(0.0, event.t - paused_at)
            paused_at = None
        t = (event.t if paused_at is None else paused_at) - paused_s
        times.append(max(t, times[-1]) if times else t)
    return times


class Playback:
    """Plays recorded events on the played time axis: by `t`, the operator's pauses left out."""

    def __init__(self, events: Sequence[BaseEvent]) -> None:
        self.events = list(events)
        self.times = played_times(self.events)
        self.shown = 0
        """How many events are on stage (always a prefix of the recording)."""
        self.playhead = self.times[0] if self.times else 0.0
        self.speed = SPEEDS[0]
        self.playing = False
        self.timeless = len(self.events) > 1 and self.duration <= self.times[0]
        """Every event has the same time: play goes by beats (`TIMELESS_BEAT_S`), not by `t`."""
        self._credit = 0.0

    @property
    def duration(self) -> float:
        """Seconds of play from the scene's start to its last recorded event (pauses left out)."""
        return self.times[-1] if self.times else 0.0

    @property
    def done(self) -> bool:
        """True when every event is on stage."""
        return self.shown >= len(self.events)

    def cycle_speed(self) -> float:
        """1x → 4x → 16x → 1x."""
        self.speed = SPEEDS[(SPEEDS.index(self.speed) + 1) % len(SPEEDS)]
        return self.speed

    def toggle(self) -> Move:
        """Play or pause; playing from the end starts again from the beginning."""
        restart = self.seek_index(0) if self.done and not self.playing else Move([])
        self.playing = not self.playing
        self._credit = TIMELESS_BEAT_S  # a timeless record shows its first beat as play starts
        return restart

    def tick(self, seconds: float) -> Move:
        """Advance the playhead by `seconds` of real time (times the speed) while playing."""
        if not self.playing:
            return Move([])
        if self.timeless:
            self._credit += seconds * self.speed
            shown = []
            while self._credit >= TIMELESS_BEAT_S and not self.done:
                self._credit -= TIMELESS_BEAT_S
                shown += self.step_beat().events
            return Move(shown)
        return self._forward(bisect_right(self.times, self.playhead + seconds * self.speed),
                             min(self.duration, self.playhead + seconds * self.speed))

    def step_event(self) -> Move:
        """Show exactly one more event."""
        return self._forward(self.shown + 1)

    def step_beat(self) -> Move:
        """Show everything up to the next beat (or round) marker after the next event."""
        end = next((i for i in range(self.shown + 1, len(self.events)) if self.events[i].type in BEAT_MARKERS),
                   len(self.events))
        return self._forward(end)

    def jump(self, fraction: float) -> Move:
        """Scrub by a fraction of the run (by time, or by events when every `t` is the same)."""
        if self.duration > (self.times[0] if self.times else 0.0):
            return self.seek_time(self.playhead + fraction * self.duration)
        return self.seek_index(self.shown + round(fraction * len(self.events)))

    def seek_time(self, t: float) -> Move:
        """Put the playhead at `t` seconds, showing every event recorded by then."""
        t = max(0.0, min(self.duration, t))
        move = self.seek_index(bisect_right(self.times, t))
        self.playhead = t
        return move

    def seek_index(self, index: int) -> Move:
        """Show exactly the first `index` events."""
        index = max(0, min(len(self.events), index))
        if index >= self.shown:
            return self._forward(index)
        self.shown = index
        self.playhead = self.times[index - 1] if index else 0.0
        return Move(self.events[:index], rebuild=True)

    def _forward(self, index: int, playhead: float | None = None) -> Move:
        index = max(self.shown, min(len(self.events), index))
        new = self.events[self.shown:index]
        self.shown = index
        if playhead is not None:
            self.playhead = playhead
        elif new:
            self.playhead = max(self.playhead, self.times[index - 1])
        if self.done:
            self.playing = False
        return Move(new)
