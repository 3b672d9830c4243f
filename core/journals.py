"""The journal step (spec 000): after the close, each actor writes an entry in character."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING

from core.briefing import JOURNAL_PROMPT
from core.characters import append_journal
from core.errors import ProviderError
from core.events import JournalEvent
from core.turn import call

if TYPE_CHECKING:
    from core.actors import Actor
    from core.session import Session


async def write_all(session: Session) -> None:
    """Ask every actor for its entry concurrently; record each and append it to its journal.

    Only scenes keep journals (spec 000): a collaboration's participants are assistants, and a
    roundtable's answers are positions, not lived moments a character would remember.
    """
    if session.scene.format != "scene":
        return
    await asyncio.gather(*(write_one(session, actor) for actor in session.actors.values()))


async def write_one(session: Session, actor: Actor) -> None:
    """One actor's entry; a failure is a `system` line, never a lost run."""
    request = actor.request(JOURNAL_PROMPT, session.state.beat, purpose="journal")
    try:
        completion = await asyncio.wait_for(call(session, actor.provider, request), actor.turn_timeout_s)
    except (ProviderError, asyncio.TimeoutError, OSError) as exc:
        session.recorder.log("error", f"journal for {actor.slug} failed", error=str(exc))
        session.say("system", f"{actor.name} could not write a journal entry", reason=str(exc))
        return
    entry = completion.text.strip()
    session.emit(JournalEvent(t=session.now(), **{"from": actor.slug}, text=entry))
    character = session.characters.get(actor.slug)
    if character is not None and session.write_character_journals:
        append_journal(character, entry, when=datetime.now(), scene_title=session.scene.title)
