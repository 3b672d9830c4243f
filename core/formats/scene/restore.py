"""Restoring a session's state from the events of its log, by the engine's own rules.

`Replay.apply(event)` takes the kept events of a killed run in order and leaves the fresh session as
the engine had it: every actor's inbox and (isolation b) thread or (a) witnessed lines, the turns,
nudges, winding down, silent streak and fired world events of the coordinator, the public lines, tokens and cost,
the call health (who left the scene, whose calls fail) and the beat number. A turn that was under way when the log stops gives its lines back to its actor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from promptdesk.core.engine.briefing import note_line
from promptdesk.core.engine.coordinator import JudgeCoordinator
from promptdesk.core.engine.winding import states_a_position
from promptdesk.core.record.events import OPERATOR, BaseEvent, CallEvent, SpeakEvent
from promptdesk.core.protocol.lines import speech_line, world_event_line
from promptdesk.core.engine.briefing import BEGIN_NOTE
from promptdesk.core.formats.scene.common import Resumed, initial_speaker
from promptdesk.core.record.seams import is_seam

if TYPE_CHECKING:
    from promptdesk.core.engine.session import Session


@dataclass
class Turn:
    """An actor's turn in flight while the log is replayed: what it was told, what it thought."""

    user_text: str
    items: list[str]
    thinking: str = ""


@dataclass
class Replay:
    """Replays kept events into a fresh session, beat by beat."""

    session: Session
    turns: dict[str, Turn] = field(default_factory=dict)
    in_beat: bool = False
    spoke: bool = False

    def apply(self, event: BaseEvent) -> None:
        """Take one recorded event into the session's state."""
        session = self.session
        session.health.replay(event)
        if isinstance(event, CallEvent):
            session._account(event)
        elif event.type == "beat":
            self.end_beat()
            self.start_beat(event)
        elif event.type == "event":
            self.world_event(event)
        elif event.type == "note":
            self.note(event)
        elif event.type == "think" and event.from_ in self.turns:
            self.turns[event.from_].thinking = event.text
        elif isinstance(event, SpeakEvent) and event.from_ in self.turns:
            self.speak(event)
        session.state.elapsed_s = event.t

    def start_beat(self, event: BaseEvent) -> None:
        """The actors who play this beat take their inboxes, as `promptdesk.core.engine.turn.play_turn` does."""
        session, beat = self.session, event.beat or 0
        session.state.beat = beat
        if session.scene.turns == "sequential":
            playing = [session.actors[event.target]] if event.target in session.actors else []
        else:
            playing = [session.actors[initial_speaker(session)]] if beat == 0 else list(session.actors.values())
        for actor in playing:
            user_text, items = actor.take_inbox(beat, session.state.max_beats)
            self.turns[actor.slug] = Turn(user_text, items)
        self.in_beat = True

    def end_beat(self, checked: bool = True) -> None:
        """What a failed turn and (`checked`) `checks.after_beat` leave behind: unheard lines, the silent streak."""
        if not self.in_beat:
            return
        state = self.session.state
        if checked:
            state.silent_streak = 0 if self.spoke else state.silent_streak + 1
        for slug, turn in self.turns.items():
            actor = self.session.actors[slug]
            actor.inbox = turn.items + actor.inbox
        self.turns, self.spoke, self.in_beat = {}, False, False

    def speak(self, speech: SpeakEvent) -> None:
        """The actor keeps its turn as `promptdesk.core.engine.turn` would, and the speech is routed as `policies.common.route`."""
        session, turn = self.session, self.turns.pop(speech.from_)
        actor = session.actors[speech.from_]
        said = speech.raw or ("[SILENT]" if speech.action == "silent" else "")  # a silenced turn's, as kept
        normalised = f"<thinking>{turn.thinking}</thinking>\n<speech>{said}</speech>"
        own = speech_line(actor.name, speech) if speech.action != "silent" else None
        actor.remember(turn.user_text, turn.items, normalised, own)
        if speech.action == "silent":
            return
        self.spoke = True
        winding = session.winding
        if winding.close_beat is not None and speech.beat is not None and speech.beat > winding.close_beat \
                and states_a_position(speech):
            winding.spoken.add(speech.from_)
        session.state.turns[speech.from_] += 1
        session.state.note_tone(speech.from_, speech.tone)
        session.public_lines.append(own)
        for slug, other in session.actors.items():
            if slug != speech.from_:
                other.receive(own)

    def world_event(self, event: BaseEvent) -> None:
        """Routed to every actor; a scheduled one counts as fired."""
        session = self.session
        session.public_lines.append(world_event_line(event.text))
        for actor in session.actors.values():
            actor.receive(world_event_line(event.text))
        if event.from_ != OPERATOR:
            for index, scheduled in enumerate(session.scene.events):
                if index not in session.fired_events and scheduled.text == event.text:
                    session.fired_events.add(index)
                    break

    def note(self, event: BaseEvent) -> None:
        """Routed to its actor or all; a soft-cap note is a nudge; role A's judge keeps the operator's."""
        session = self.session
        for slug, actor in session.actors.items():
            if event.target is None or slug == event.target:
                actor.receive(note_line(event.text))
        reason = getattr(event, "reason", None)
        if reason == "soft-cap" and event.target in session.actors:
            session.nudged[event.target] = session.state.turns[event.target]
        if reason == "judge-nudge" and event.target in session.actors:
            session.winding.judge_nudged.add(event.target)
        if reason == "wind-down":
            session.winding.nearing_beat = event.beat
        elif reason == "close-note":
            session.winding.close_beat, session.winding.close_line = event.beat, len(session.public_lines)
        if event.from_ == OPERATOR and isinstance(session.coordinator, JudgeCoordinator):
            session.coordinator.director_notes.append(event.text)


def restore(session: Session, kept: list[BaseEvent], cut_beat: BaseEvent | None,
            finished: BaseEvent | None = None) -> None:
    """Replay a killed scene's kept events into its fresh session: the opening note, every inbox and
    thread, the coordinator's counters; in sequential turns, who speaks at the replayed beat. After a
    beat that had `finished`, its speeches wait for the coordinator's check made again (`Resumed.recheck`)."""
    replay = Replay(session)
    session.actors[initial_speaker(session)].receive(note_line(BEGIN_NOTE))
    for event in kept:
        if not is_seam(event):
            replay.apply(event)
    replay.end_beat(checked=finished is None)
    if finished is not None:
        last = next((e for e in reversed(kept) if e.type == "beat" and e.beat == finished.beat), None)
        speeches = [e for e in kept if isinstance(e, SpeakEvent) and e.beat == finished.beat]
        speaker = last.target if last is not None and session.scene.turns == "sequential" else None
        session.format_state = Resumed(speaker, speeches)
        return
    speaker = cut_beat.target if cut_beat is not None and session.scene.turns == "sequential" else None
    session.format_state = Resumed(speaker)
