"""What both scene policies share: scheduled world events, routing speech, addressing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from promptdesk.core.engine.briefing import BEGIN_NOTE, note_line
from promptdesk.core.engine.scheduled import fire_due
from promptdesk.core.engine.turn import addressable
from promptdesk.core.record.events import SpeakEvent
from promptdesk.core.protocol.lines import speech_line

if TYPE_CHECKING:
    from promptdesk.core.engine.actors import Actor
    from promptdesk.core.engine.coordinator import Decision
    from promptdesk.core.engine.session import Session


@dataclass
class Resumed:
    """A resumed scene's own state (`session.format_state`): who speaks at its first beat (sequential turns)."""

    speaker: str | None = None
    recheck: list[SpeakEvent] | None = None
    """The speeches of the last beat, when it had finished before the kill: the coordinator's check
    after it is made again before the next beat (None: the run resumes inside a beat, or is fresh)."""


def played(session: Session, beat: int) -> None:
    """Record that a beat's turns were all played and routed (`beat_end`, durable at once): a resume
    goes on after it, never playing it again."""
    session.say("beat_end", f"Beat {beat} played", beat=beat)


async def recheck(session: Session) -> tuple[Decision | None, list[SpeakEvent] | None]:
    """A run resumed after a beat that had finished: the coordinator's check after it, made again (the
    kill came during or after it, and what it recorded was moved aside). Returns its decision and the
    speeches it judged (None, None for any other run)."""
    resumed = session.format_state if isinstance(session.format_state, Resumed) else None
    if session.seam is None or resumed is None or resumed.recheck is None:
        return None, None
    session.state.beat = session.first_beat - 1
    return await session.check(resumed.recheck), resumed.recheck


def opener(session: Session) -> Actor:
    """The initial speaker, told to begin the scene (a resumed run: who speaks at its first beat,
    the note having been restored from the log with the rest of the inboxes)."""
    if session.seam is not None:
        resumed = session.format_state if isinstance(session.format_state, Resumed) else Resumed()
        return session.actors[resumed.speaker or initial_speaker(session)]
    actor = session.actors[initial_speaker(session)]
    actor.receive(note_line(BEGIN_NOTE))
    return actor


def playing(session: Session) -> list[Actor]:
    """The cast still in the scene: every actor but those whose provider failed for good."""
    return [session.actors[slug] for slug in session.health.playing(list(session.actors))]


def initial_speaker(session: Session) -> str:
    """The slug of the actor who opens the scene."""
    return session.scene.initial_speaker or next(iter(session.actors))


async def beats(session: Session, settle: bool = True) -> AsyncIterator[int]:
    """Beat numbers from 0 (a resumed run: from its cut beat); before each, a safe point (stop, pause,
    controls) and the world events due. `settle=False`: the beat settles the heap itself (`Stage.safe_point`)."""
    beat = session.first_beat
    while True:
        session.state.beat = beat
        await session.safe_point(settle)
        fire_due(session, beat)
        yield beat
        beat += 1


def route(session: Session, speech: SpeakEvent) -> None:
    """Count a spoken turn and forward the speech (never thinking) to every other actor still in the
    scene: one who left it (its provider failed for good) is never called again, so nothing is forwarded
    to it, and the log records no `route` that never happened."""
    if speech.action == "silent":
        return
    session.state.turns[speech.from_] += 1
    session.state.note_tone(speech.from_, speech.tone)
    speaker = session.actors[speech.from_]
    line = speech_line(speaker.name, speech)
    session.public_lines.append(line)
    for slug, actor in session.actors.items():
        if slug != speech.from_ and slug not in session.health.unavailable:
            actor.receive(line)
            session.say("route", f"Forwarding {speaker.name}'s speech to {actor.name}", target=slug,
                        beat=speech.beat)


def addressed(session: Session, speech: SpeakEvent | None) -> Actor | None:
    """The cast member a speech's `TO:` names, if any: by slug or full name, else by a short name no
    other member answers to (`promptdesk.core.engine.turn.addressable`: `Ann` is Ann, never Ann Lee, in
    a cast that has both; `Eva` is no one when Eva Brandt and Prof. Eva Brandt are both present)."""
    if speech is None or not speech.target:
        return None
    names = {key.casefold(): name for key, name in addressable(session).items()}
    name = names.get(speech.target.strip().casefold())
    actor = next((actor for actor in session.actors.values() if actor.name == name), None)
    return actor if actor is not None and actor.slug != speech.from_ else None
