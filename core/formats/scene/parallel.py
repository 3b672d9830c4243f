"""Parallel beats (specs 003/004): every actor gets the update at once; responses are kept in
arrival order, SILENT is logged but not transcribed, and one failing actor does not stop the beat
(one whose provider failed for good is left out of the beats after it: `common.playing`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

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
    async for beat in beats(session):
        speeches = await run_beat(session, [first] if beat == 0 else playing(session), beat)
        decision = await session.check(speeches)
        if decision:
            return decision
    raise AssertionError("unreachable: beats() never ends")


async def run_beat(session: Session, actors: list[Actor], beat: int) -> list[SpeakEvent]:
    """Ask every actor concurrently; return their speeches in arrival order, routed."""
    from promptdesk.core.engine.session import SceneStopped

    session.say("beat", f"Beat {beat}", beat=beat)
    if session.stopped:
        raise SceneStopped
    first = len(session.recorder.events)
    tasks = [session.track(asyncio.create_task(play_turn(session, actor, beat, timeout_s=actor.turn_timeout_s)))
             for actor in actors]
    await asyncio.gather(*tasks, return_exceptions=True)
    if session.stopped:
        raise SceneStopped
    speeches = [e for e in session.recorder.events[first:] if isinstance(e, SpeakEvent)]
    for speech in speeches:
        route(session, speech)
    played(session, beat)
    return speeches
