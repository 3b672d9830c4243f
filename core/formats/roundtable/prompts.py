"""What every roundtable call is told. Blindness is structural here: a participant's message is built
from the topic, the project context, the question, the facilitator's previous synthesis and its own
role, and from nothing else - except, with `participation: sequential`, the answers given before
its own in the same round (spec 002's sequential mode, recorded as giving up blind answers).

Each message carries a fenced YAML block of facts (which the offline improviser also reads), then
plain instructions and the answer format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from promptdesk.core.characters.loading import Character
from promptdesk.core.protocol.lines import one_line
from promptdesk.core.formats.roundtable.answers import Answer, Question, Synthesis
from promptdesk.core.formats.roundtable.state import RoundtableState

PARTICIPANT_FORMAT = """Answer with exactly one YAML block and nothing else:
```yaml
position: "<your position, in one sentence>"
rationale: "<why, in two to four sentences>"
confidence: <a number from 0.0 to 1.0: how sure you are>
```"""

QUESTION_FORMAT = """Answer with exactly one YAML block and nothing else:
```yaml
action: question
question: "<one question for the participants>"
participants: all            # or a list of participant slugs
focus: "<what the answers should concentrate on>"
```"""

SYNTHESIS_FORMAT = """Answer with exactly one YAML block and nothing else:
```yaml
action: synthesis
synthesis: "<what this round established, in two to four sentences>"
consensus: ["<a point everyone agrees on>"]
conflicts: [{topic: "<what is disputed>", positions: {<slug>: "<their position>"}}]
resolved: ["<a conflict of earlier rounds now settled>"]
next_action: continue        # continue | phase | conclude | escalate
next_focus: "<what the next question should explore>"
recommendation: "<your recommendation so far>"
```
`phase` moves to the next phase (only once its minimum rounds are done); `conclude` ends the
discussion; `escalate` asks the human operator to decide. A conflict still open keeps its `topic` word
for word from the previous synthesis: its rounds (`open_conflicts_rounds`) are counted by that topic, and
one open too long goes to the operator; give a new topic only to a new disagreement."""

FACILITATOR_SYSTEM = """You are the facilitator of a roundtable discussion. You never argue a position yourself:
you ask questions, and you synthesise the participants' answers (consensus, conflicts, what was resolved)
and decide what happens next. Participants answer alone and blind: they only ever see your question and
your previous synthesis, so make both self-contained. Follow the strategy's phases and their goals."""

PARTICIPANT_SYSTEM = """You are {name}, one participant at a roundtable discussion led by a facilitator.
Stay yourself: answer from your own experience, priorities and temperament. You answer each question on
your own; between rounds you see only the facilitator's synthesis. Be concrete, say what you really think,
and give an honest confidence.

{format}

## WHO YOU ARE
{profile}
"""


def _block(data: Mapping[str, Any]) -> str:
    return "```yaml\n" + yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100) + "```"


def participant_system(character: Character, perspective: str = "") -> str:
    """A participant's stable system prompt: who they are (their own profile and the scene's private
    perspective for them, never anyone else's) and the format."""
    text = PARTICIPANT_SYSTEM.format(name=character.name, format=PARTICIPANT_FORMAT, profile=character.profile.strip())
    if perspective.strip():
        text += f"\n## YOUR PRIVATE PERSPECTIVE (no one else at the table knows it)\n{perspective.strip()}\n"
    return text


def facilitator_system(operator_context: str = "") -> str:
    """The facilitator's system prompt; role A adds the operator's context (notes.md, notes)."""
    extra = f"\n\n## THE OPERATOR'S CONTEXT\n{operator_context.strip()}" if operator_context.strip() else ""
    return FACILITATOR_SYSTEM + extra


def synthesis_view(synthesis: Synthesis | None) -> dict[str, Any] | None:
    """What a participant may know of the previous round: the synthesis, never the answers."""
    if synthesis is None:
        return None
    data = synthesis.to_dict()
    data.pop("recommendation", None)
    return data


def phase_facts(state: RoundtableState) -> dict[str, Any]:
    phase = state.phase
    return {"name": phase.name, "goal": phase.goal, "number": state.phase_index + 1,
            "of": len(state.strategy.phases), "rounds_done_in_phase": state.rounds_in_phase,
            "min_rounds": phase.min_rounds, "instruction": phase.instruction}


def participant_message(state: RoundtableState, slug: str, question: Question, *,
                        earlier: Sequence[tuple[str, Answer]] = (), notes: Sequence[str] = ()) -> str:
    """One participant's message for this round. `earlier` is given only in sequential mode."""
    role = state.roles.get(slug)
    facts: dict[str, Any] = {"round": state.round, "topic": state.topic, "phase": state.phase.name,
                             "phase_goal": state.phase.goal, "question": question.question, "focus": question.focus}
    if role:
        facts["role"] = {"name": role, "brief": state.strategy.roles.get(role, "")}
    facts["previous_synthesis"] = synthesis_view(state.last)
    parts = [f"ROUND {state.round} - phase {state.phase.name}: {state.phase.goal}", _block(facts)]
    if state.phase.instruction:
        parts.append(f"Instruction for this phase: {state.phase.instruction}")
    if state.context.strip():
        parts.append("PROJECT CONTEXT:\n" + state.context.strip())
    if notes:
        parts.append("FROM THE OPERATOR:\n" + "\n".join(notes))
    if earlier:
        lines = [f"- {state.participants[s]}: {one_line(a.position)} ({one_line(a.rationale)})" for s, a in earlier]
        parts.append("ANSWERS GIVEN BEFORE YOURS THIS ROUND (sequential discussion):\n" + "\n".join(lines))
    parts.append(PARTICIPANT_FORMAT)
    return "\n\n".join(parts)


def question_message(state: RoundtableState, speakers: Sequence[str], notes: Sequence[str] = ()) -> str:
    """The facilitator's task: ask this round's question (phase, consensus, conflicts, last synthesis)."""
    facts = {"task": "question", "round": state.round, "max_rounds": state.max_rounds, "topic": state.topic,
             "strategy": state.strategy.name, "phase": phase_facts(state),
             "participants": [{"slug": s, "name": n, **({"role": state.roles[s]} if s in state.roles else {})}
                              for s, n in state.participants.items()],
             "speakers_this_phase": list(speakers), "previous_synthesis": synthesis_view(state.last),
             "open_conflicts_rounds": dict(state.conflict_ages)}
    parts = [f"TASK: question (round {state.round})", _block(facts)]
    if state.context.strip():
        parts.append("PROJECT CONTEXT:\n" + state.context.strip())
    if notes:
        parts.append("FROM THE OPERATOR:\n" + "\n".join(notes))
    parts.append(QUESTION_FORMAT)
    return "\n\n".join(parts)


def synthesis_message(state: RoundtableState, question: Question, answers: Mapping[str, Answer], *,
                      conclude: str = "") -> str:
    """The facilitator's task: synthesise this round's answers (or, with `conclude`, end the discussion)."""
    task = "conclude" if conclude else "synthesis"
    phase = phase_facts(state)
    phase["may_advance"] = state.rounds_in_phase + 1 >= state.phase.min_rounds
    phase["last_phase"] = state.last_phase
    facts = {"task": task, "round": state.round, "max_rounds": state.max_rounds, "topic": state.topic,
             "strategy": state.strategy.name, "phase": phase, "question": question.to_dict(),
             "answers": {s: {"name": state.participants[s], **a.to_dict()} for s, a in answers.items()},
             "previous_synthesis": synthesis_view(state.last), "open_conflicts_rounds": dict(state.conflict_ages)}
    parts = [f"TASK: {task} (round {state.round})", _block(facts)]
    if conclude:
        parts.append(f"{conclude} Write the concluding synthesis now, with next_action: conclude and your "
                     "recommendation.")
    parts.append(SYNTHESIS_FORMAT)
    return "\n\n".join(parts)
