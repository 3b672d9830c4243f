"""Pacing: a minimum number of seconds per beat, so that a fast scene can be watched, paused and directed.

The wait happens at the safe point between beats (never inside one), on the session's clock, so a
test on a `VirtualClock` paces deterministically. The pace is the operator's to change while the
scene runs (`Session.set_pace`); a stop ends the wait at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

OFFLINE_CONSOLE_S = 1.5
"""The console's pace when every call goes to the offline improviser and nothing else set one."""
STEP_S = 0.5
"""How much `+`/`-` on the stage changes the pace."""
MAX_S = 60.0
"""The slowest pace: a minute per beat."""
SLICE_S = 0.25
"""The wait is taken in slices this long, so a pace lowered mid-wait takes effect at once."""


def clamp(seconds: float) -> float:
    """A pace within 0 and `MAX_S`, to a tenth of a second."""
    return round(min(MAX_S, max(0.0, float(seconds))), 1)


def resolve(flag: float | None, in_scene: float | None, offline_default: float, providers: Iterable[Any]) -> float:
    """`--pace`, else the scene's `pace:`, else the offline default when every provider is offline, else 0."""
    if flag is not None:
        return clamp(flag)
    if in_scene is not None:
        return clamp(in_scene)
    names = [getattr(spec, "name", None) for spec in providers]
    return clamp(offline_default) if names and all(name == "offline" for name in names) else 0.0


class Pace:
    """When the last beat began and how long a beat must last at least."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = clamp(seconds)
        self._began: float | None = None

    def remaining(self, now: float) -> float:
        """Seconds still to wait before the next beat may begin (0 before the first beat)."""
        if self._began is None or self.seconds <= 0:
            return 0.0
        return max(0.0, self._began + self.seconds - now)

    def began(self, now: float) -> None:
        """A beat begins now."""
        self._began = now
