"""One round of spec 002: the facilitator's question, the participants' answers (blind and in
parallel, or sequential), and the facilitator's synthesis. Nothing here writes the session file:
the policy writes the finished round in one batch."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from promptdesk.core.formats.roundtable import prompts
from promptdesk.core.formats.roundtable.answers import (Answer, Question, Synthesis, fallback_conclusion, fallback_question,
                                     UNKNOWN_PARTICIPANTS, fallback_synthesis, parse_answer, parse_question,
                                     parse_synthesis)
from promptdesk.core.formats.roundtable.calls import FACILITATOR, TableSetup, ask_facilitator, ask_participant, fallback
from promptdesk.core.formats.roundtable.state import RoundtableState

if TYPE_CHECKING:
    from promptdesk.core.engine.session import Session


@dataclass
class RoundResult:
    """A played round, before it is written."""

    question: Question
    answers: dict[str, Answer]
    synthesis: Synthesis
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    """Who the question was for, including a participant who could no longer be asked."""

    def record(self, state: RoundtableState) -> dict[str, Any]:
        """The round as it goes into `session.yaml`: the question and the synthesis as spec 002 writes
        them, each led by its `action:` (`question`, `synthesis`); `no_answer` names whoever the
        question was for and gave no answer (their provider failed), so no one is dropped silently."""
        data: dict[str, Any] = {"round": state.round, "phase": state.phase.name,
                                "question": {"action": "question", **self.question.to_dict()},
                                "answers": {s: a.to_dict() for s, a in self.answers.items()}}
        if missing := [s for s in self.asked if s not in self.answers]:
            data["no_answer"] = missing
        data["synthesis"] = {"action": "synthesis", **self.synthesis.to_dict()}
        return {**data, "fallbacks": self.fallbacks} if self.fallbacks else data


def operator_lines(session: Session) -> dict[str, list[str]]:
    """Take the notes and world events the operator queued for each participant since the last round
    (`play_round` gives back those of a participant the round does not ask, for the round that does)."""
    taken = {}
    for slug, actor in session.actors.items():
        taken[slug], actor.inbox = actor.inbox, []
    return taken


def addressed_to_all(notes: dict[str, list[str]]) -> list[str]:
    """The operator's lines every participant received (world events, notes to all): only these
    reach the facilitator; a note to one participant stays with that participant."""
    inboxes = list(notes.values())
    return [line for line in inboxes[0] if all(line in other for other in inboxes[1:])] if inboxes else []


async def play_round(session: Session, setup: TableSetup, state: RoundtableState) -> RoundResult:
    """Question, answers, synthesis; every event emitted as it happens."""
    phase = state.phase
    session.say("round", f"Round {state.round} - phase {phase.name}", beat=state.round, round=state.round,
                phase=phase.name, phase_number=state.phase_index + 1, phases=len(state.strategy.phases))
    notes = operator_lines(session)
    shared = addressed_to_all(notes)
    sink: list[dict[str, Any]] = []
    speakers = setup.strategy.speakers(phase, list(state.participants))
    question = await _question(session, setup, state, speakers, shared, sink)
    if question.participants != "all" and (outside := [s for s in question.participants if s not in speakers]):
        kept = [s for s in question.participants if s in speakers]  # the phase's `speakers` bound the question
        kept = kept or (list(speakers) if len(speakers) < len(state.participants) else [])
        fallback(session, FACILITATOR, f"participants ({', '.join(kept) or 'all'})",
                 f"{outside} may not speak in phase {phase.name} (its speakers: {', '.join(speakers)})", state.round, sink)
        question.participants = kept or "all"
    wanted = [s for s in speakers if question.participants == "all" or s in question.participants] or speakers
    asked = session.health.playing(wanted)  # a participant whose provider failed for good is asked no more
    for slug in [s for s in notes if s not in asked]:  # left out of this round: its lines wait for its next one
        session.actors[slug].inbox[:0] = notes.pop(slug)
    session.say("question", question.question, source=FACILITATOR, target=",".join(asked), beat=state.round,
                focus=question.focus, participants=asked, round=state.round)
    answers = await _answers(session, state, question, asked, notes, sink)
    synthesis = await synthesise(session, setup, state, question, answers, sink)
    return RoundResult(question, answers, synthesis, sink, wanted)


async def _question(session: Session, setup: TableSetup, state: RoundtableState, speakers: list[str],
                    notes: list[str], sink: list[dict[str, Any]]) -> Question:
    text = await ask_facilitator(session, setup, prompts.question_message(state, speakers, notes), state.round)
    if text is None:
        fallback(session, FACILITATOR, "question", "no answer from the facilitator", state.round, sink, failed=True)
        return fallback_question(state.topic)
    question, problem = parse_question(text, state.topic, state.participants)
    if problem:  # the facilitator's own question with its unknown names dropped, or spec 002's fallback
        kept = question.participants if isinstance(question.participants, str) else ", ".join(question.participants)
        what = f"participants ({kept})" if problem.startswith(UNKNOWN_PARTICIPANTS) else "question"
        fallback(session, FACILITATOR, what, problem, state.round, sink)
    return question


async def _answers(session: Session, state: RoundtableState, question: Question, asked: list[str],
                   notes: dict[str, list[str]], sink: list[dict[str, Any]]) -> dict[str, Answer]:
    """Blind and concurrent (parallel), or one by one with the earlier answers (sequential)."""
    from promptdesk.core.engine.session import SceneStopped

    answers: dict[str, Answer] = {}

    async def one(slug: str, earlier: list[tuple[str, Answer]]) -> None:
        content = prompts.participant_message(state, slug, question, earlier=earlier, notes=notes.get(slug, []))
        text = await ask_participant(session, session.actors[slug], content, state.round)
        if text is not None:
            answers[slug] = _answer(session, state, slug, text, sink)

    if state.blind:
        tasks = [session.track(asyncio.create_task(one(slug, []))) for slug in asked]
        await asyncio.gather(*tasks, return_exceptions=True)
    else:
        for slug in asked:
            await session.track(asyncio.create_task(one(slug, list(answers.items()))))
    if session.stopped:
        raise SceneStopped
    return answers


def _answer(session: Session, state: RoundtableState, slug: str, text: str, sink: list[dict[str, Any]]) -> Answer:
    answer, problem = parse_answer(text)
    if problem:
        what = "answer (first line as position, confidence unknown)" if answer.fallback else "confidence (unknown)"
        fallback(session, slug, what, problem, state.round, sink)
    session.say("answer", answer.position, source=slug, target=FACILITATOR, beat=state.round, round=state.round,
                rationale=answer.rationale, confidence=answer.confidence, fallback=answer.fallback or None)
    return answer


async def synthesise(session: Session, setup: TableSetup, state: RoundtableState, question: Question,
                     answers: dict[str, Answer], sink: list[dict[str, Any]], conclude: str = "") -> Synthesis:
    """The facilitator's synthesis of this round (or the concluding one), falling back when unreadable."""
    content = prompts.synthesis_message(state, question, answers, conclude=conclude)
    text = await ask_facilitator(session, setup, content, state.round)
    what = "conclusion" if conclude else "synthesis"
    if text is None:
        fallback(session, FACILITATOR, what, "no answer from the facilitator", state.round, sink, failed=True)
        return _fallback_synthesis(state, conclude)
    synthesis, problem = parse_synthesis(text, state.topic)
    if problem and synthesis == fallback_synthesis(state.topic):
        fallback(session, FACILITATOR, what, problem, state.round, sink)
        return _fallback_synthesis(state, conclude)
    if problem:
        fallback(session, FACILITATOR, "next_action (continue)", problem, state.round, sink)
    return synthesis


def _fallback_synthesis(state: RoundtableState, conclude: str) -> Synthesis:
    """Spec 002's fallback synthesis, or its max-rounds conclusion (keeping the last consensus and conflicts)."""
    if conclude:
        last = state.last
        return fallback_conclusion(last.consensus if last else [], last.conflicts if last else [])
    return fallback_synthesis(state.topic)
