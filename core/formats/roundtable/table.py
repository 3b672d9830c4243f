"""The roundtable's state on a session (`session.format_state`): what setup prepared and what play holds.

One object, so that the engine carries one opaque per-format state: the setup (strategy, facilitator,
headless policy), the discussion under way, its `session.yaml` writer and the operator's escalation desk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from promptdesk.core.formats.roundtable.escalation import EscalationDesk

if TYPE_CHECKING:
    from promptdesk.core.formats.roundtable.calls import TableSetup
    from promptdesk.core.formats.roundtable.record import SessionFile
    from promptdesk.core.formats.roundtable.state import RoundtableState


@dataclass
class Table:
    """A roundtable session's own state."""

    setup: TableSetup
    discussion: RoundtableState | None = None
    """Where the discussion is (phase, round, consensus, conflicts); None before the first round."""
    file: SessionFile | None = None
    """The writer of `session.yaml`."""
    desk: EscalationDesk = field(default_factory=EscalationDesk)
    """The open escalation waiting for the operator, if any."""
