"""The roundtable turn policy (spec 002): round after round - question, blind answers, synthesis -
each finished round written to `session.yaml` in one batch, then `next_action` is acted on:
continue, phase (never before the phase's `min_rounds`), conclude or escalate. The four escalation
triggers are checked after every round; `max_rounds` forces a concluding synthesis."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from promptdesk.core.engine.coordinator import Decision
from promptdesk.core.engine.scheduled import fire_due, say_unplayed
from promptdesk.core.formats.roundtable import decide
from promptdesk.core.formats.roundtable.calls import FACILITATOR, TableSetup
from promptdesk.core.formats.roundtable.escalation import acknowledge, triggers
from promptdesk.core.formats.roundtable.record import SessionFile, write_summary
from promptdesk.core.formats.roundtable.round import RoundResult, play_round, synthesise
from promptdesk.core.formats.roundtable.settings import settings
from promptdesk.core.formats.roundtable.state import RoundtableState
from promptdesk.core.formats.roundtable.table import Table
from promptdesk.core.providers.pricing import dollars

if TYPE_CHECKING:
    from promptdesk.core.engine.session import Session


def new_state(session: Session, setup: TableSetup) -> RoundtableState:
    """The discussion before its first round."""
    spec, scene = settings(session.scene), session.scene
    cast = {slug: actor.name for slug, actor in session.actors.items()}
    return RoundtableState(topic=(spec.topic or scene.prompt or scene.goal).strip(), strategy=setup.strategy,
                           participants=cast, participation=setup.participation, max_rounds=spec.max_rounds,
                           context=_context(scene.setting, spec.context or (scene.prompt if spec.topic else "")),
                           roles=setup.strategy.roles_for(list(cast)))


def _context(setting: str, context: str) -> str:
    """The table's project context: the scene's `setting` (where the table sits, told to every actor
    as in a scene), then the section's `context` (or the scene's prompt beside an explicit topic)."""
    return "\n\n".join(part for part in (f"Setting: {setting.strip()}" if setting.strip() else "", context.strip()) if part)


async def play(session: Session) -> Decision:
    """Play rounds until a conclusion; the session file and `summary.md` are written whatever happens."""
    table: Table = session.format_state
    setup = table.setup
    state = new_state(session, setup)
    table.discussion = state
    session.state.max_beats, session.state.turns_mode = state.max_rounds, state.participation
    file = SessionFile(session.recorder.run_dir / "session.yaml")
    table.file = file
    file.write(state)
    if not state.blind:
        session.say("system", "participation: sequential - each participant sees the answers before theirs; "
                    "answers are not blind", reason="not-blind")
    _announce_phase(session, state)
    try:
        decision = await _rounds(session, setup, state, file)
        say_unplayed(session, f"the roundtable ended at beat {session.state.beat} (round {state.round})")
    except BaseException as exc:
        if session.failure is not None:  # aborted because its calls fail: not the operator's stop
            state.status, note = "error", session.failure
        else:
            state.status = "stopped" if session.stopped else "error"
            note = "stopped by the operator" if session.stopped else (str(exc) or type(exc).__name__)
        state.conclusion = {"reason": "provider-error" if session.failure is not None else state.status, "note": note}
        from promptdesk.core.engine.session import SceneStopped
        if state.status == "stopped" and isinstance(exc, SceneStopped):  # not concluded: goalAchieved false, as documented
            return Decision(decision="close", reason="stop", text="Scene stopped by the operator", goal_achieved=False)
        raise
    finally:
        file.write(state)
        write_summary(session.recorder.run_dir, state, improvised=_improvised(session, state))
        if failed := facilitator_failures(session.recorder.events):
            session.state.closing_notices.append(
                f"the facilitator's call failed {failed} time{'s' if failed != 1 else ''}: spec 002's fallback "
                f"question or synthesis took its place (see debug.log)")
    return decision


def _improvised(session: Session, state: RoundtableState) -> list[str]:
    """Who at this table the offline improviser played (the facilitator first), for `summary.md` to say."""
    table = session.format_state
    facilitator = getattr(getattr(table, "setup", None), "facilitator", None)
    seated = [state.participants[slug] for slug, actor in session.actors.items()
              if slug in state.participants and getattr(actor.provider, "name", "") == "offline"]
    return (["the facilitator"] if getattr(facilitator, "name", "") == "offline" else []) + seated


def facilitator_failures(events: list) -> int:
    """The facilitator's calls that failed and were replaced by spec 002's fallbacks (`calls.fallback`)."""
    return sum(1 for e in events if e.type == "system" and getattr(e, "reason", None) == "fallback"
               and (e.model_extra or {}).get("about") == FACILITATOR and (e.model_extra or {}).get("failed"))


async def _rounds(session: Session, setup: TableSetup, state: RoundtableState, file: SessionFile) -> Decision:
    spec = settings(session.scene)
    while True:
        await session.safe_point()
        if len(state.rounds) >= state.max_rounds:
            return await _forced_conclusion(session, setup, state)
        state.round = len(state.rounds) + 1
        session.state.beat = state.round
        fire_due(session, state.round)
        result = await play_round(session, setup, state)
        action = _gate(session, state, result)
        state.rounds.append(result.record(state))
        state.last, state.rounds_in_phase = result.synthesis, state.rounds_in_phase + 1
        state.age_conflicts(result.synthesis)
        fired = triggers(state, result.answers, result.synthesis, max_rounds_per_conflict=spec.max_rounds_per_conflict,
                         threshold=spec.confidence_threshold, keywords=spec.critical_keywords)
        if fired:
            state.rounds[-1]["escalation"] = [t.to_dict() for t in fired]
        if action == "phase" and not fired:
            _advance(session, state)
        file.write(state)
        if fired:
            outcome = await _escalation(session, setup, state, fired, result, file)
            if outcome is not None:
                return outcome
            if action == "phase":
                _advance(session, state)
                file.write(state)
        if action == "conclude":
            return _conclude(session, state, result.synthesis, "concluded", "The facilitator concluded the discussion")
        if session.budget_usd is not None and session.state.cost_usd >= session.budget_usd:
            return await _forced_conclusion(session, setup, state, reason="budget")


def _gate(session: Session, state: RoundtableState, result: RoundResult) -> str:
    """The synthesis's `next_action` after phase gating (no `phase` before `min_rounds`; `phase` in
    the last phase concludes); announces the synthesis. `escalate` is left to the triggers."""
    synthesis = result.synthesis
    asked = synthesis.next_action
    if asked == "phase" and state.rounds_in_phase + 1 < state.phase.min_rounds:
        session.say("phase", f"Phase {state.phase.name} needs {state.phase.min_rounds} rounds before advancing "
                    f"({state.rounds_in_phase + 1} done): continuing", source=FACILITATOR, beat=state.round,
                    reason="gated", phase=state.phase.name)
        synthesis.next_action = "continue"
    elif asked == "phase" and state.last_phase:
        synthesis.next_action = "conclude"
    extra = {k: v for k, v in synthesis.to_dict().items() if k != "synthesis"}
    session.say("synthesis", synthesis.synthesis, source=FACILITATOR, beat=state.round, round=state.round, **extra,
                requested_action=asked if asked != synthesis.next_action else None,
                consensus_count=len(synthesis.consensus), conflict_count=len(synthesis.conflicts))
    return "continue" if synthesis.next_action == "escalate" else synthesis.next_action


def _announce_phase(session: Session, state: RoundtableState) -> None:
    phase = state.phase
    session.say("phase", f"Phase {state.phase_index + 1}/{len(state.strategy.phases)}: {phase.name} - {phase.goal}",
                source=FACILITATOR, phase=phase.name, phase_number=state.phase_index + 1,
                min_rounds=phase.min_rounds, beat=state.round)


def _advance(session: Session, state: RoundtableState) -> None:
    state.advance_phase()
    _announce_phase(session, state)


async def _escalation(session: Session, setup: TableSetup, state: RoundtableState, fired, result: RoundResult,
                      file: SessionFile) -> Decision | None:
    """Ask, record the decision (a second write of the session file), and conclude unless `continue`."""
    from promptdesk.core.engine.session import SceneStopped

    try:
        answered = await decide.escalate(session, setup, state, fired, result.synthesis, result.answers)
    except asyncio.CancelledError:
        if session.stopped:
            raise SceneStopped from None
        raise
    recommendation = result.synthesis.recommendation or result.synthesis.synthesis
    entry = decide.record(session, state, answered, recommendation)
    file.write(state)
    if answered.decision == "continue":
        acknowledge(state, fired)
        return None
    if answered.decision in ("accept", "own"):
        return _conclude(session, state, result.synthesis, "decided", f"The operator decided ({answered.decision})",
                         recommendation=entry["text"], achieved=True)
    return _conclude(session, state, result.synthesis, "escalation", answered.text or "Concluded at an escalation",
                     achieved=False)


async def _forced_conclusion(session: Session, setup: TableSetup, state: RoundtableState,
                             reason: str = "max-rounds") -> Decision:
    """`max_rounds` (or the budget) reached: ask for a concluding synthesis; spec 002's fallback if unreadable."""
    note = (f"max_rounds ({state.max_rounds}) reached: concluding synthesis forced" if reason == "max-rounds"
            else f"budget of {dollars(session.budget_usd)} reached: concluding synthesis forced")
    last = state.rounds[-1] if state.rounds else None
    sink: list = []
    from promptdesk.core.formats.roundtable.answers import Answer, Question

    question = (Question(**{k: v for k, v in last["question"].items() if k != "action"}) if last
                else Question(question=state.topic))
    answers = {s: Answer(**a) for s, a in (last["answers"] if last else {}).items()}
    synthesis = await synthesise(session, setup, state, question, answers, sink,
                                 conclude=f"The discussion has reached its limit ({note}).")
    synthesis.next_action = "conclude"
    session.say("synthesis", synthesis.synthesis, source=FACILITATOR, beat=state.round, round=state.round,
                **{k: v for k, v in synthesis.to_dict().items() if k != "synthesis"}, forced=reason,
                consensus_count=len(synthesis.consensus), conflict_count=len(synthesis.conflicts))
    decision = _conclude(session, state, synthesis, reason, note, achieved=False)
    state.conclusion["note"] = note
    if sink:
        state.conclusion["fallbacks"] = sink
    return decision


def _conclude(session: Session, state: RoundtableState, synthesis, reason: str, text: str, *,
              recommendation: str | None = None, achieved: bool = True) -> Decision:
    state.status = "concluded"
    state.conclusion = {"reason": reason, "recommendation": recommendation or synthesis.recommendation
                        or synthesis.synthesis, "consensus": synthesis.consensus, "open_conflicts": synthesis.conflicts,
                        "synthesis": synthesis.synthesis}
    return Decision(decision="close", reason=reason, text=text, goal_achieved=achieved)
