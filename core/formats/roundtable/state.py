"""Where a roundtable is: topic, strategy, phase, the rounds so far, open conflicts and decisions.

The console reads it (as `session.format_state.discussion`) for the stage: phase and round, consensus and
conflict counts. It is also what `session.yaml` is written from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from promptdesk.core.formats.roundtable.answers import Synthesis
from promptdesk.core.formats.roundtable.strategies import Phase, Strategy


def conflict_key(topic: str) -> str:
    """A conflict's identity across rounds: its topic, lower-cased, punctuation and spacing folded."""
    return " ".join(re.sub(r"[^\w\s-]", " ", topic.lower()).split())


@dataclass
class RoundtableState:
    """The discussion so far. `rounds` holds one dict per finished round, as written to the file."""

    topic: str
    strategy: Strategy
    participants: dict[str, str]
    participation: str = "parallel"
    max_rounds: int = 20
    context: str = ""
    roles: dict[str, str] = field(default_factory=dict)
    phase_index: int = 0
    rounds_in_phase: int = 0
    round: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    last: Synthesis | None = None
    conflict_ages: dict[str, int] = field(default_factory=dict)
    acknowledged: set[str] = field(default_factory=set)
    conclusion: dict[str, Any] | None = None
    status: str = "running"

    @property
    def phase(self) -> Phase:
        return self.strategy.phases[self.phase_index]

    @property
    def last_phase(self) -> bool:
        return self.phase_index == len(self.strategy.phases) - 1

    @property
    def blind(self) -> bool:
        """True while answers are blind: parallel participation gives them; sequential gives them up."""
        return self.participation == "parallel"

    @property
    def consensus_count(self) -> int:
        return len(self.last.consensus) if self.last else 0

    @property
    def conflict_count(self) -> int:
        return len(self.last.conflicts) if self.last else 0

    def age_conflicts(self, synthesis: Synthesis) -> None:
        """Count, for each conflict in this synthesis, the rounds in a row it has been open."""
        ages = {}
        for item in synthesis.conflicts:
            key = conflict_key(item["topic"])
            ages[key] = self.conflict_ages.get(key, 0) + 1
        self.conflict_ages = ages

    def advance_phase(self) -> None:
        """Move to the next phase of the strategy."""
        self.phase_index += 1
        self.rounds_in_phase = 0
