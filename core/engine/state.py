"""A session's state at a glance: the snapshot the console and the batch summary show.

Kept apart from `promptdesk.core.engine.session` so that readers of a run (replay) need nothing of the engine.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class SessionState:
    """A snapshot for display: where the session is and what it has cost so far."""

    format: str = "scene"
    turns_mode: str = ""
    isolation: str = "?"
    coordinator: str = "?"
    cast: dict[str, str] = field(default_factory=dict)
    max_beats: int | None = None
    beat: int = 0
    turns: Counter[str] = field(default_factory=Counter)
    silent_streak: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    unknown_usage: int = 0
    """Calls whose response carried no usage: their tokens and cost are unknown (not in the totals)."""
    elapsed_s: float = 0.0
    status: str = "ready"
    close_reason: str | None = None
    run_dir: str = ""
    pace_s: float = 0.0
    """The minimum seconds per beat (pacing; 0 plays as fast as the actors answer)."""
    suggestion: str | None = None
    """The world event the coordinator suggested and the operator has not accepted yet (`suggested_events: ask`)."""
    withheld: str | None = None
    """Why the coordinator's latest suggested world event was withheld (it carried private material;
    its words are not kept here), until a clean one replaces it."""
    judge_fallbacks: int = 0
    """How many times a judge's answer was unusable and role C's rules decided instead."""
    closing_notices: list[str] = field(default_factory=list)
    """What the format has to say once the run is over (a facilitator whose calls failed): a NOTICE on
    stderr headless, and a line of `notes.md`."""
    tones: dict[str, str] = field(default_factory=dict)
    """Each actor's latest `TONE:`, trimmed and lower-cased (an actor that never gave one is absent)."""

    def note_tone(self, slug: str, tone: str | None) -> None:
        """Keep an actor's latest tone (a speech with none leaves the one before)."""
        if tone and tone.strip():
            self.tones[slug] = tone.strip().lower()
