"""The journal step (spec 000): after the close, each actor writes an entry in character.

The step is part of the run's bill: with `--budget-usd` it is skipped, with a `system` line, once the
budget is spent, and entries are then written one at a time so that the step stops as soon as the
budget runs out. Any failure (the call, the reply, appending to the character's own journal) is a
`system` event naming the actor; the run still writes every derived file. A stop cancels the step.

A run killed during the step is resumed by writing what is missing (`pending`, `resume_step`): the
entries of the actors the log has neither an entry nor a failure for, and the recorded entries that
never reached the character's own journal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from promptdesk.core.characters.journal_store import append_entry, drop_torn_entry, holds_entry
from promptdesk.core.engine.briefing import JOURNAL_PROMPT
from promptdesk.core.errors import RecordingError
from promptdesk.core.protocol.tags import TagReader
from promptdesk.core.record.cut import JOURNALS_SKIPPED_AFTER, pending_journals
from promptdesk.core.record.events import BaseEvent, CloseEvent, JournalEvent
from promptdesk.core.engine.turn import call, failure_reason
from promptdesk.core.providers.pricing import dollars

if TYPE_CHECKING:
    from promptdesk.core.engine.actors import Actor
    from promptdesk.core.engine.stage import Stage

SKIPPED_AFTER = JOURNALS_SKIPPED_AFTER
"""Close reasons after which no journal step is taken."""
pending = pending_journals
"""The actors whose journal step a killed run never finished (`promptdesk.core.record.cut`)."""


async def write_all(session: Stage, only: Sequence[str] | None = None) -> None:
    """Ask every actor (or those in `only`) for its entry (concurrently, or one by one under a
    budget); record each and append it to its journal. A run without memory (`--journals none`,
    `Stage.journal_step` False) takes no journal step at all.

    Only formats that keep journals write them (spec 000's scenes): a collaboration's participants
    are assistants, and a roundtable's answers are positions, not lived moments a character would remember.
    An actor that left the scene (its provider failed for good: `promptdesk.core.engine.outcome`) is
    never called again, so it is not asked either: a `system` line says so. Its entry would be a
    memory of a scene it did not play to the end, from a provider that already refused it.
    """
    if not session.format.keeps_journals or not session.journal_step:
        return
    actors = [a for a in session.actors.values() if only is None or a.slug in only]
    for actor in [a for a in actors if a.slug in session.health.unavailable]:
        session.say("system", f"{actor.name} is not asked for a journal entry: the actor left the scene "
                    f"({session.health.unavailable[actor.slug]})", reason="unavailable-journal", about=actor.slug)
    actors = [a for a in actors if a.slug not in session.health.unavailable]
    if session.budget_usd is None:
        await asyncio.gather(*(_tracked(session, actor) for actor in actors), return_exceptions=True)
        return
    for index, actor in enumerate(actors):
        if session.stopped:
            return
        if session.state.cost_usd >= session.budget_usd:
            skipped = ", ".join(a.name for a in actors[index:])
            session.say("system", f"Journal step skipped for {skipped}: the budget of {dollars(session.budget_usd)} "
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
        completion = await session.clock.wait_for(call(session, actor.provider, request),
                                                 actor.journal_timeout_s or actor.turn_timeout_s)
        entry = entry_of(completion.text)
        if completion.refusal:
            session.say("system", f"{actor.name} wrote no journal entry: the model refused (its words are in "
                        "debug.log)", reason="refused", about=actor.slug)
            return
        if not entry:
            session.recorder.log("warning", f"journal for {actor.slug}: the reply held no entry", raw=completion.text)
            session.say("system", f"{actor.name} wrote no journal entry: the reply held only private text (thinking, "
                        "another tag, a fence) or nothing", reason="empty", about=actor.slug)
            return
        session.emit(JournalEvent(t=session.now(), **{"from": actor.slug}, text=entry))
        if completion.truncated:
            session.say("system", f"{actor.name}'s journal entry stopped at its token limit ({request.max_tokens} "
                        "tokens): it may be cut short", about=actor.slug, reason="truncated")
    except RecordingError:
        raise
    except Exception as exc:  # noqa: BLE001 - any fault is this actor's missing entry, never a lost run
        _failed(session, actor, f"{actor.name} could not write a journal entry", exc)
        return
    _append(session, actor, entry)


def entry_of(reply: str) -> str:
    """The journal entry a reply holds. The journal prompt is spec 000's word for word, so an actor
    whose system prompt asks for `<thinking>`/`<speech>` on every turn may answer in that form: then
    the entry is its one well-formed speech, else the reply's text outside its elements and inside
    its speeches, without tags. What the turn protocol holds private never reaches a journal: the
    inside of `<thinking>` and of any other tag (a reasoning model's `<think>` preamble, closed or
    not), a fence or a comment, a speech holding a tag. A reply in plain prose is the entry as written."""
    reader = TagReader()
    reader.feed(reply, final=True)
    if not reader.tags_seen:
        return reply.strip()
    speech = reader.public_speech()
    if speech:
        return speech
    loose = iter(reader.loose)
    pending = next(loose, None)
    parts: list[str] = []
    for index in range(len(reader.elements) + 1):
        while pending is not None and pending[0] == index:
            parts.append(pending[1])
            pending = next(loose, None)
        element = reader.elements[index] if index < len(reader.elements) else None
        if element is not None and element.kind == "speech" and not element.tainted:
            parts.append(element.text)
    return "".join(parts).strip()


def _append(session: Stage, actor: Actor, entry: str) -> None:
    """Add a recorded entry to the character's own journal (when this run writes them)."""
    character = session.characters.get(actor.slug)
    if character is None or not session.write_character_journals:
        return
    try:
        append_entry(character, entry, when=datetime.now(), scene_title=session.scene.title)
    except Exception as exc:  # noqa: BLE001 - the entry is in the run folder; the character file failed
        _failed(session, actor, f"{actor.name}'s journal entry is in this run's journals/ but could not be "
                f"added to {character.journal_path}", exc)


def _failed(session: Stage, actor: Actor, text: str, exc: BaseException) -> None:
    reason = failure_reason(exc)
    session.recorder.log("error", f"journal for {actor.slug} failed", error=reason)
    session.say("system", text, reason=reason, about=actor.slug)


def unappended(session: Stage, events: Sequence[BaseEvent]) -> list[JournalEvent]:
    """Entries on the log after the close that the character's own journal does not hold (a kill
    between recording an entry and appending it)."""
    if not session.write_character_journals or not session.format.keeps_journals:
        return []
    closes = [i for i, e in enumerate(events) if isinstance(e, CloseEvent)]
    after = events[closes[-1] + 1:] if closes else []
    return [e for e in after if isinstance(e, JournalEvent) and e.from_ in session.characters
            and not holds_entry(session.characters[e.from_], e.text)]


async def resume_step(session: Stage, slugs: Sequence[str], recorded: Sequence[JournalEvent]) -> None:
    """Finish a journal step cut off by a kill: append the `recorded` entries the characters'
    journals miss (replacing an entry's block the kill tore part way, never appending it twice), then
    ask the actors in `slugs` for theirs."""
    for entry in recorded:
        character = session.characters.get(entry.from_)
        if character is not None:
            drop_torn_entry(character, entry.text, scene_title=session.scene.title)
        _append(session, session.actors[entry.from_], entry.text)
    if slugs:
        await write_all(session, only=slugs)
