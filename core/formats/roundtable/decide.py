"""Asking the operator: the `escalate` event (every position with its rationale, the facilitator's
recommendation, the triggers), then the answer - from the console through
`Session.direct("answer_escalation", ...)`, or at once from the headless `--on-escalate` policy. In `--batch`
without `--on-escalate`, an escalation concludes the discussion and says so."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from promptdesk.core.record.events import OPERATOR
from promptdesk.core.formats.roundtable.answers import Answer, Synthesis
from promptdesk.core.formats.roundtable.calls import FACILITATOR, TableSetup
from promptdesk.core.formats.roundtable.escalation import Answered, Trigger
from promptdesk.core.formats.roundtable.state import RoundtableState

if TYPE_CHECKING:
    from promptdesk.core.engine.session import Session

BATCH_DEFAULT = ("escalation in --batch without --on-escalate: concluding the discussion. "
                 "Give --on-escalate accept|continue|conclude to choose what an escalation does.")


def details(state: RoundtableState, fired: Sequence[Trigger], synthesis: Synthesis,
            answers: dict[str, Answer]) -> dict[str, Any]:
    """What the escalation dialog shows: positions with rationales, the recommendation, the triggers."""
    positions = [{"slug": s, "name": state.participants[s], "role": state.roles.get(s), **a.to_dict()}
                 for s, a in answers.items()]
    return {"round": state.round, "phase": state.phase.name, "triggers": [t.to_dict() for t in fired],
            "positions": positions, "conflicts": synthesis.conflicts, "consensus": synthesis.consensus,
            "recommendation": synthesis.recommendation or synthesis.synthesis,
            "choices": ["accept", "own", "continue"]}


async def escalate(session: Session, setup: TableSetup, state: RoundtableState, fired: Sequence[Trigger],
                   synthesis: Synthesis, answers: dict[str, Answer]) -> Answered:
    """Announce the escalation and return the decision (the desk is opened before the announcement)."""
    info = details(state, fired, synthesis, answers)
    waiting = None if setup.on_escalate or setup.headless else session.format_state.desk.open(info)
    reasons = "; ".join(t.detail for t in fired)
    session.say("escalate", f"Escalation to the operator: {reasons}", source=FACILITATOR, beat=state.round,
                reason=",".join(sorted({t.kind for t in fired})), **info)
    if setup.on_escalate:
        return Answered(setup.on_escalate, None, f"--on-escalate {setup.on_escalate}")
    if waiting is None:
        session.say("system", BATCH_DEFAULT, beat=state.round)
        return Answered("conclude", "concluded without a decision (no --on-escalate in --batch)", "batch default")
    try:
        return await session.track(asyncio.ensure_future(waiting))
    finally:
        session.format_state.desk.close()


def record(session: Session, state: RoundtableState, answered: Answered, recommendation: str) -> dict[str, Any]:
    """Record the decision (event and `decisions` entry); `accept` takes the recommendation as its text."""
    text = recommendation if answered.decision == "accept" else answered.text
    entry = {"round": state.round, "decision": answered.decision, "by": answered.by}
    if text:
        entry["text"] = text
    state.decisions.append(entry)
    session.say("decision", text or answered.decision, source=OPERATOR, beat=state.round,
                reason=answered.decision, by=answered.by, round=state.round)
    session.notes += f"- Decision at round {state.round}: {answered.decision} (by {answered.by})" + (
        f": {' '.join(text.split())}\n" if text else "\n")
    session.recorder.write_notes(session.notes)
    return entry
