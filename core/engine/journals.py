"""The journal step (spec 000): after the close, each actor writes an entry in character.

The step is part of the run's bill: with `--budget-usd` it is skipped, with a `system` line, once the
budget is spent, and entries are then written one at a time so that the step stops as soon as the
budget runs out. Any failure (the call, the reply, appending to the character's own journal) is a
`system` event naming the actor; the run still writes every derived file. A stop cancels the step.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING

from core.engine.briefing import JOURNAL_PROMPT
from core.characters.loading import append_journal
from core.errors import RecordingError
from core.record.events import JournalEvent
from core.engine.turn import call, failure_reason

if TYPE_CHECKING:
    from core.engine.actors import Actor
    from core.engine.stage import Stage


async def write_all(session: Stage) -> None:
    """Ask every actor for its entry (concurrently, or one by one under a budget); record each and
    append it to its journal.

    Only formats that keep journals write them (spec 000's scenes): a collaboration's participants
    are assistants, and a roundtable's answers are positions, not lived moments a character would remember.
    """
    if not session.format.keeps_journals:
        return
    actors = list(session.actors.values())
    if session.budget_usd is None:
        await asyncio.gather(*(_tracked(session, actor) for actor in actors), return_exceptions=True)
        return
    for index, actor in enumerate(actors):
        if session.stopped:
            return
        if session.state.cost_usd >= session.budget_usd:
            skipped = ", ".join(a.name for a in actors[index:])
            session.say("system", f"Journal step skipped for {skipped}: the budget of ${session.budget_usd:.2f} "
                        f"is spent (${session.state.cost_usd:.4f})", reason="budget")
            return
        await asyncio.gather(_tracked(session, actor), return_exceptions=True)


def _tracked(session: Stage, actor: Actor) -> asyncio.Task[None]:
    """One entry as a task the operator's stop can cancel."""
    return session.track(asyncio.create_task(write_one(session, actor)))


async def write_one(session: Stage, actor: Actor) -> None:
    """One actor's entry; a failure is a `system` line, never a lost run."""
    try:
        request = actor.request(JOURNAL_PROMPT, session.state.beat, purpose="journal")
        completion = await session.clock.wait_for(call(session, actor.provider, request), actor.turn_timeout_s)
        entry = completion.text.strip()
        session.emit(JournalEvent(t=session.now(), **{"from": actor.slug}, text=entry))
    except RecordingError:
        raise
    except Exception as exc:  # noqa: BLE001 - any fault is this actor's missing entry, never a lost run
        _failed(session, actor, f"{actor.name} could not write a journal entry", exc)
        return
    character = session.characters.get(actor.slug)
    if character is None or not session.write_character_journals:
        return
    try:
        append_journal(character, entry, when=datetime.now(), scene_title=session.scene.title)
    except Exception as exc:  # noqa: BLE001 - the entry is in the run folder; the character file failed
        _failed(session, actor, f"{actor.name}'s journal entry is in this run's journals/ but could not be "
                f"added to {character.journal_path}", exc)


def _failed(session: Stage, actor: Actor, text: str, exc: BaseException) -> None:
    reason = failure_reason(exc)
    session.recorder.log("error", f"journal for {actor.slug} failed", error=reason)
    session.say("system", text, reason=reason, about=actor.slug)
