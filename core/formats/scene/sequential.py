"""Sequential dialogue (spec 000): one actor at a time; speech only is routed to the others; the
next speaker is the one addressed, else the next in the cast (an unavailable actor passed over); after a
leave-taking the scene may not yet close on, the actor it waits for."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from promptdesk.core.engine.coordinator import Decision, closes_naturally
from promptdesk.core.formats.scene.common import addressed, beats, opener, played, playing, recheck, route
from promptdesk.core.engine.turn import play_turn

if TYPE_CHECKING:
    from promptdesk.core.engine.actors import Actor
    from promptdesk.core.record.events import SpeakEvent
    from promptdesk.core.engine.session import Session


async def play(session: Session) -> Decision:
    """Turn by turn until the coordinator, a limit or the operator closes the scene."""
    from promptdesk.core.engine.session import SceneStopped

    speaker = opener(session)
    decision, judged = await recheck(session)
    if decision:
        return decision
    if judged is not None:
        speaker = next_speaker(session, speaker, judged[0] if judged else None)
    async for beat in beats(session):
        session.say("beat", f"Turn {beat}: {speaker.name}", beat=beat, target=speaker.slug)
        task = session.track(asyncio.create_task(play_turn(session, speaker, beat, timeout_s=speaker.turn_timeout_s)))
        try:
            speech = await task
        except asyncio.CancelledError:
            if session.stopped:
                raise SceneStopped from None
            raise
        if speech is not None:
            route(session, speech)
        played(session, beat)
        decision = await session.check([speech] if speech else [])
        if decision:
            return decision
        speaker = next_speaker(session, speaker, speech)
    raise AssertionError("unreachable: beats() never ends")


def next_speaker(session: Session, speaker: Actor, speech: SpeakEvent | None) -> Actor:
    """The actor addressed, else the next in the cast after `speaker`; an unavailable one is passed over.
    After a leave-taking the scene may not close on yet (someone has spoken fewer than the scene's
    `min_turns_per_character`), the quietest of those it waits for: a goodbye addressed to one who has
    spoken passed the turn back and forth while the one waited for never had a turn."""
    cast = list(session.actors.values())
    live = playing(session)
    if speech is not None and closes_naturally(speech):
        least, turns = session.scene.limits.min_turns_per_character, session.state.turns
        waited = [actor for actor in live if actor is not speaker and turns.get(actor.slug, 0) < least]
        if waited:
            return min(waited, key=lambda actor: turns.get(actor.slug, 0))
    wanted = addressed(session, speech)
    if wanted is not None and wanted in live:
        return wanted
    order = cast[cast.index(speaker) + 1:] + cast[:cast.index(speaker) + 1]
    return next((actor for actor in order if actor in live), speaker)
