"""The in-memory state of one collaboration (spec 001 §2), owned by one session and nothing else:
two collaborations never share any of it."""

from __future__ import annotations

import random
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
    private: dict[str, list[str]] = field(default_factory=dict)
    """Per participant: the operator's notes to it alone, waiting for its next call."""
    ids: random.Random = field(default_factory=random.Random, repr=False)
    """Where the session id and the call ids come from (`new`)."""

    @classmethod
    def new(cls, *, goal: str, participants: list[str], max_rounds: int, first: str,
            session_id: str | None = None, window_items: int = 8, window_tokens: int = 2500,
            ids: random.Random | None = None) -> Collaboration:
        """A collaboration about to start. With `ids` (a run on the simulated clock: see
        `policy.start`) the ids are drawn from it and `ts` counts simulated seconds from 0, so the same
        seed gives the same record; without, the ids are random and `ts` is the wall clock's epoch."""
        draw = ids or random.Random()
        collab = cls(session_id="", goal=goal, participants=participants, max_rounds=max_rounds, speaker=first,
                     window_items=window_items, window_tokens=window_tokens,
                     epoch0=0.0 if ids is not None else time.time(), ids=draw)
        collab.session_id = session_id or collab.new_id()
        return collab

    def new_id(self) -> str:
        """A fresh uuid (version 4 in form), drawn from `ids`."""
        return str(uuid.UUID(int=self.ids.getrandbits(128), version=4))

    def tags(self, **more: Any) -> dict[str, Any]:
        """The collaboration fields every event of this session carries (§2). `round` starts at 1, as §2
        says: the goal that opens the session (and a stop before its first call) belongs to round 1,
        though the chip counts 0 rounds played until it begins."""
        return {"thread": self.thread, "session_id": self.session_id, "round": max(self.round, 1),
                "max_rounds": self.max_rounds, **more}

    def event_tags(self, now: float, source: str | None = None) -> dict[str, Any]:
        """What every other event of the session carries (a world event, a note, a `system` line, the close),
        as spec 001 §2 asks "when running a collaboration session": the session's fields, the epoch `ts`, and
        `sender: you` on what the operator (the human) wrote."""
        return {**self.tags(), "ts": int(self.epoch0 + now), **({"sender": "you"} if source == "operator" else {})}

    @property
    def chip(self) -> str:
        """The console's status chip (§7): `Collab: n/max`."""
        return f"Collab: {self.round}/{self.max_rounds}"
