"""The `collaborate` format (spec 001 §6): a bounded turn loop between participants.

Each round the router calls the speaker with the goal, the transcript window, "Round r of max"
and the schema instruction; shows the envelope's `message` (`agent_response`); then `final`
ends (reason `final`), a `handoff` names the next speaker and its `task` becomes a router item
addressed to them (`handoff`), and no handoff ends (reason `no_handoff`). Past `max_rounds` the
loop ends (reason `cap`). Stop ends at once with the router line "Collaboration canceled by user."
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from promptdesk.core.engine.actors import ThreadActor
from promptdesk.core.formats.collaborate.ask import Reply, ask
from promptdesk.core.formats.collaborate.context import Item, user_message, window
from promptdesk.core.formats.collaborate.settings import settings as collab_settings
from promptdesk.core.formats.collaborate.state import Collaboration
from promptdesk.core.engine.coordinator import Decision
from promptdesk.core.engine.scheduled import fire_due, say_unplayed
from promptdesk.core.errors import RecordingError
from promptdesk.core.improv.dice import rng_for
from promptdesk.core.engine.turn import actor_failed
from promptdesk.core.providers.pricing import dollars

if TYPE_CHECKING:
    from promptdesk.core.engine.session import Session

ROUTER = "router"
HUMAN = "you"
"""Spec 001's sender of the human's messages."""
USER = "user"
"""Spec 001's transcript role of the human's items (the operator's world events and notes to all)."""
CANCELED = "Collaboration canceled by user."


def say(session: Session, collab: Collaboration, type_: str, text: str, *, source: str, **extra: Any) -> None:
    """Emit a collaboration event with spec 001's fields: `sender` (beside `from`), `thread`,
    `session_id`, `round`, `max_rounds` and an epoch `ts` (beside the relative `t`)."""
    session.say(type_, text, source=source, sender=source, ts=int(collab.epoch0 + session.now()),
                **collab.tags(**extra))


def close(reason: str, text: str, goal_achieved: bool = False) -> Decision:
    return Decision(decision="close", reason=reason, text=text, goal_achieved=goal_achieved)


def start(session: Session) -> Collaboration:
    """The collaboration's state, from the scene; the session's `format_state`. On the simulated
    clock (every call to the offline improviser) its ids come from the run's seed, the scene and the
    goal, and `ts` from simulated time, so the same seed gives the same record byte for byte."""
    scene, settings = session.scene, collab_settings(session.scene)
    simulated = session.clock.arrivals == "simulated"
    ids = rng_for(int(session.start_info.get("seed") or 0), "collaboration", scene.name, scene.goal) if simulated else None
    collab = Collaboration.new(goal=scene.goal, participants=list(session.actors), max_rounds=settings.max_rounds,
                               first=scene.initial_speaker or next(iter(session.actors)),
                               session_id=settings.session_id, window_items=settings.window_items,
                               window_tokens=settings.window_tokens, ids=ids)
    session.state.max_beats = collab.max_rounds
    session.format_state = collab
    for actor in session.actors.values():
        if isinstance(actor, ThreadActor):
            actor.token_budget = collab.window_tokens
    return collab


async def play(session: Session) -> Decision:
    """Run the collaboration to `final`, `no_handoff`, `cap`, an error or the operator's stop."""
    from promptdesk.core.engine.session import SceneStopped

    collab = start(session)
    say(session, collab, "human_message", collab.goal, source=HUMAN, target=ROUTER)
    try:
        decision = await _rounds(session, collab)
    except SceneStopped:
        if session.failure is None:  # else the run was aborted because its calls fail, not canceled
            say(session, collab, "stop", CANCELED, source=ROUTER, target="all")
        return close("stop", CANCELED)
    say_unplayed(session, f"the collaboration ended at beat {session.state.beat} (round {collab.round})")
    return decision


def take_operator_lines(session: Session, collab: Collaboration) -> None:
    """The operator's world events and director's notes delivered since the last round (each
    participant's inbox): a line every participant received joins the shared transcript as the
    human's (`user`) item; a note to one participant waits for that participant's next call only."""
    inboxes = {slug: actor.inbox for slug, actor in session.actors.items()}
    for actor in session.actors.values():
        actor.inbox = []
    boxes = list(inboxes.values())
    shared = [line for line in boxes[0] if all(line in box for box in boxes[1:])] if boxes else []
    collab.transcript.extend(Item(USER, line) for line in shared)
    for slug, box in inboxes.items():
        collab.private.setdefault(slug, []).extend(line for line in box if line not in shared)


async def _rounds(session: Session, collab: Collaboration) -> Decision:
    while collab.round < collab.max_rounds:
        collab.round += 1
        session.state.beat = collab.round - 1
        await session.safe_point()
        fire_due(session, session.state.beat)
        take_operator_lines(session, collab)
        say(session, collab, "round", f"Round {collab.round} of {collab.max_rounds}", source=ROUTER)
        reply = await _turn(session, collab)
        if reply is None:
            return close("error", f"{session.state.cast[collab.speaker]} was unable to respond")
        decision = _after(session, collab, reply)
        if decision is not None:
            return decision
        if session.budget_usd is not None and session.state.cost_usd >= session.budget_usd:
            return close("budget", f"Budget of {dollars(session.budget_usd)} reached (${session.state.cost_usd:.4f})")
    return close("cap", f"Reached the cap of {collab.max_rounds} rounds without a final answer")


async def _turn(session: Session, collab: Collaboration) -> Reply | None:
    """Call the speaker (cancellable by stop); record the call and the response."""
    from promptdesk.core.engine.session import SceneStopped

    slug, actor = collab.speaker, session.actors[collab.speaker]
    call_id = collab.new_id()
    tags = collab.tags(call_id=call_id)
    user_text = _context(collab, slug, actor.isolation)
    last = next((item for item in reversed(collab.transcript) if item.role != USER), None)  # past the operator's lines
    pending = last.text if last is not None and last.role == ROUTER else collab.goal
    say(session, collab, "agent_call", pending, source=ROUTER, target=slug, call_id=call_id)
    if session.stopped:
        raise SceneStopped
    request = actor.request(user_text, collab.round - 1, purpose="envelope")
    task = session.track(asyncio.create_task(ask(session, actor, request, collab.participants, tags)))
    await asyncio.gather(task, return_exceptions=True)
    if session.stopped or task.cancelled():
        raise SceneStopped
    error = task.exception()
    if error is None:
        try:
            _record(session, collab, task.result(), tags, user_text)
            return task.result()
        except RecordingError:
            raise
        except Exception as exc:  # noqa: BLE001 - an unrecordable reply is a failed turn
            error = exc
    if isinstance(error, RecordingError):
        raise error
    actor_failed(session, actor, session.state.beat, error, **tags)
    return None


def _context(collab: Collaboration, slug: str, isolation: str) -> str:
    """Isolation a: the whole window each call. Isolation b: only what is new to this thread. Either
    way, the operator's notes to this participant alone, once."""
    own = collab.private.pop(slug, [])
    if isolation == "b" and slug in collab.seen:
        new = collab.transcript[collab.seen[slug]:]
        return user_message(collab.goal, window(new, collab.window_items, collab.window_tokens), collab.round,
                            collab.max_rounds, heading="NEW SINCE YOUR LAST TURN (oldest first)", own=own)
    items = window(collab.transcript, collab.window_items, collab.window_tokens)
    return user_message(collab.goal, items, collab.round, collab.max_rounds, own=own)


def _record(session: Session, collab: Collaboration, reply: Reply, tags: dict, user_text: str) -> None:
    slug, envelope = collab.speaker, reply.envelope
    handoff = envelope.next_handoff if reply.valid else None
    extra = {} if reply.valid else {"envelope_valid": False, "problem": reply.problem}
    say(session, collab, "agent_response", envelope.message, source=slug, target=handoff.to if handoff else "all",
        final=envelope.is_final or None, **extra, call_id=tags["call_id"])
    session.state.turns[slug] += 1
    collab.transcript.append(Item(slug, envelope.message))
    actor = session.actors[slug]
    if actor.isolation == "b":
        actor.remember(user_text, [], reply.thread_text(), None)
        collab.seen[slug] = len(collab.transcript)


def _after(session: Session, collab: Collaboration, reply: Reply) -> Decision | None:
    """Act on the envelope: final, handoff, or no handoff (an invalid reply never hands off)."""
    name = session.state.cast[collab.speaker]
    if not reply.valid:
        return close("no_handoff", f"{name}'s reply was not a valid envelope ({reply.problem}); "
                     "shown as a plain message, collaboration ended")
    if reply.envelope.is_final:
        return close("final", f"{name} marked the collaboration final", goal_achieved=True)
    handoff = reply.envelope.next_handoff
    if handoff is None:
        return close("no_handoff", f"{name} handed off to no one")
    say(session, collab, "handoff", handoff.task, source=collab.speaker, target=handoff.to)
    collab.transcript.append(Item(ROUTER, handoff.task, to=handoff.to))
    collab.speaker = handoff.to
    return None
