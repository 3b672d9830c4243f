"""The in-memory state of one collaboration (spec 001 §2), owned by one session and nothing else:
two collaborations never share any of it."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from promptdesk.core.formats.collaborate.context import Item


@dataclass
class Collaboration:
    """`sessions[session_id]` of spec 001 §2: participants, goal, cap, round, speaker, transcript."""

    session_id: str
    goal: str
    participants: list[str]
    max_rounds: int
    speaker: str
    window_items: int = 8
    window_tokens: int = 2500
    round: int = 0
    thread: str = "default"
    epoch0: float = 0.0
    """Wall-clock seconds (epoch) when the collaboration started: `ts` = epoch0 + the event's `t`."""
    transcript: list[Item] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    """Per participant: how much of the transcript its own thread already holds (isolation b)."""

    @classmethod
    def new(cls, *, goal: str, participants: list[str], max_rounds: int, first: str,
            session_id: str | None = None, window_items: int = 8, window_tokens: int = 2500) -> Collaboration:
        return cls(session_id=session_id or str(uuid.uuid4()), goal=goal, participants=participants,
                   max_rounds=max_rounds, speaker=first, window_items=window_items, window_tokens=window_tokens,
                   epoch0=time.time())

    def tags(self, **more: Any) -> dict[str, Any]:
        """The collaboration fields every event of this session carries (§2)."""
        return {"thread": self.thread, "session_id": self.session_id, "round": self.round,
                "max_rounds": self.max_rounds, **more}

    @property
    def chip(self) -> str:
        """The console's status chip (§7): `Collab: n/max`."""
        return f"Collab: {self.round}/{self.max_rounds}"
