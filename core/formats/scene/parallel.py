"""Parallel beats (specs 003/004): every actor gets the update at once; responses are kept in
arrival order, SILENT is logged but not transcribed, and one failing actor does not stop the beat
(one whose provider failed for good is left out of the beats after it: `common.playing`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

from promptdesk.core.engine import heap
from promptdesk.core.engine.checks import tally
from promptdesk.core.engine.coordinator import Decision
from promptdesk.core.record.events import SpeakEvent
from promptdesk.core.formats.scene.common import beats, opener, played, playing, recheck, route
from promptdesk.core.engine.turn import play_turn

if TYPE_CHECKING:
    from promptdesk.core.engine.actors import Actor
    from promptdesk.core.engine.session import Session


async def play(session: Session) -> Decision:
    """Beat 0: the initial speaker opens. Then every beat goes to the whole cast."""
    first = opener(session)
    decision, _ = await recheck(session)
    if decision:
        return decision
    async for beat in beats(session, settle=False):
        speeches = await run_beat(session, [first] if beat == 0 else playing(session), beat)
        decision = await session.check(speeches)
        if decision:
            return decision
    raise AssertionError("unreachable: beats() never ends")


async def run_beat(session: Session, actors: list[Actor], beat: int) -> list[SpeakEvent]:
    """Ask every actor concurrently; return their speeches in arrival order, routed.

    Each speech is routed as soon as it is recorded, while the beat still waits for its slower
    actors: a line reaches the others' inboxes for the next beat either way, and a crowd's routes (one
    per speaker and listener) are then not all paid between two beats. The order of the routes, of
    `public_lines` and of the returned speeches is the order the speeches were recorded in.

    On a provider that sends requests ahead (`promptdesk.core.providers.early`), the turns start
    one after another, each once the one before has sent its request: such a request is finished
    by its own call's task, which the turn wakes, so started all at once the beat would build every
    request before any left.

    The heap is settled (`promptdesk.core.engine.heap`) when the beat's first turn is back, after
    its requests went out, rather than before the beat: at fifty actors the 2 ms it takes would
    otherwise delay every request of the beat; and while the turns are started the collector is
    held off (`heap.paused`), for the same reason."""
    from promptdesk.core.engine.session import SceneStopped

    session.say("beat", f"Beat {beat}", beat=beat)
    if session.stopped:
        raise SceneStopped
    first = seen = len(session.recorder.events)
    tasks = []
    with heap.paused():
        for actor in actors:
            if session.stopped:
                break
            tasks.append(session.track(asyncio.create_task(play_turn(session, actor, beat, timeout_s=actor.turn_timeout_s))))
            if actor.provider.sends_ahead:
                await asyncio.sleep(0)  # this turn's request leaves (through its early call, woken) before the next is built
        if tasks and actors[len(tasks) - 1].provider.sends_ahead:
            await asyncio.sleep(0)  # and so does the last one
    waiting, settled, playing_as = set(tasks), False, dict(zip(tasks, actors))
    while waiting:
        done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not settled:
            heap.settle()
            settled = True
        if session.stopped:
            break
        if waiting:  # the beat's last turn: the next beat asks it at once, nothing to gain ahead
            _ahead(session, (playing_as[task] for task in done
                             if not task.cancelled() and task.exception() is None and task.result() is not None))
        seen = _route_new(session, seen)
    for task in tasks:  # a turn's exception is its own (a failed turn is recorded by play_turn): read, never raised
        if task.done() and not task.cancelled():
            task.exception()
    if session.stopped:
        raise SceneStopped
    _route_new(session, seen)
    played(session, beat)
    return [e for e in session.recorder.events[first:] if isinstance(e, SpeakEvent)]


def _ahead(session: Session, actors: Iterable[Actor]) -> None:
    """Prepare each actor's next request now, as far as it is known (`Actor.ahead`), while this
    beat still waits for its slower actors: what its recording will encode is encoded
    (`Recorder.prepare_prompt`), and on a provider that sends ahead the request is opened
    (`Provider.open_early`), so that only its update is left to send when the next beat asks it
    (`promptdesk.core.providers.early`)."""
    for actor in actors:
        if (start := actor.ahead()) is not None:
            session.recorder.prepare_prompt(start)
            if actor.provider.sends_ahead:
                actor.provider.open_early(start)


def _route_new(session: Session, seen: int) -> int:
    """Route the speeches recorded since event `seen`, and bring the checks' tally of the record up
    to date with them and their routes (`checks.tally`: read now, while the beat waits, not all
    after its last turn); returns the number of events now recorded."""
    for event in session.recorder.events[seen:]:
        if isinstance(event, SpeakEvent):
            route(session, event)
    tally(session)
    return len(session.recorder.events)
