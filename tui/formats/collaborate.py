"""The collaborate format's console side (spec 001): its lines, its Collab chip, its room, single calls.

A single call is the console's one-participant collaboration with `max_rounds` 1: the wizard
offers it as its own choice, a room command starts one, and it reads as one call and one reply
(no hand-over, no cap). The room (`promptdesk.tui.formats.room_bar`) starts more collaborations from a
collaboration's stage; its scenes are built here in code from the stage's own scene.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from promptdesk.core.record.events import BaseEvent
from promptdesk.tui.formats.base import Choice, ConsoleFormat, LineMaker, Row, extra, marker_line
from promptdesk.tui.formats.room_commands import RoomCommand
from promptdesk.tui.lines import Cast, Line, safe
from promptdesk.tui.snapshot import StageState

SINGLE = "single"
"""The wizard's key of a single call."""


def _audience(event: BaseEvent, cast: Cast) -> str:
    target = event.target or ""
    return "everyone" if target in ("", "all") else cast.name(target)


def _task(event: BaseEvent, cast: Cast) -> Line:
    return Line.of(("✎ Task from you: ", "note"), (safe(event.text), "note"))


def _response(event: BaseEvent, cast: Cast) -> Line:
    final = " (final)" if extra(event, "final") and not cast.single_call else ""
    to = "" if cast.single_call or event.target == event.from_ else f" → {_audience(event, cast)}"
    return Line.of((cast.name(event.from_), cast.role(event.from_)), (f"{to}{final}", "target"),
                   (f'  "{safe(event.text)}"', "speech"))


def _handoff(event: BaseEvent, cast: Cast) -> Line | None:
    """Who speaks next; nothing when there is no one else (a single call, or a hand-over to oneself)."""
    if cast.single_call or event.target == event.from_:
        return None
    return Line.of((f"{cast.name(event.from_)} hands over to {_audience(event, cast)}: ", "muted"),
                   (safe(event.text), "muted"))


class CollaborateFormat(ConsoleFormat):
    """Two participants (or one, for a single call) handing a goal to each other, round by round."""

    name: ClassVar[str] = "collaborate"
    noun: ClassVar[str] = "collaboration"
    choices: ClassVar[tuple[Choice, ...]] = (Choice(SINGLE, "Single call", 0), Choice("collaborate", "Collaborate", 1))
    lines: ClassVar[Mapping[str, LineMaker]] = {
        "human_message": _task, "agent_response": _response, "handoff": _handoff, "round": marker_line,
    }
    """Its events' lines (`agent_call`, like `route`, has no line: it only says who is asked)."""
    markers: ClassVar[frozenset[str]] = frozenset({"round"})
    lists_cast: ClassVar[bool] = False
    """Participants are personas loaded as a pair: the engine's one error says what is wrong."""
    answered: ClassVar[frozenset[str]] = frozenset({"cap", "final", "no_handoff"})
    """How a single call's one round ends when its participant answered (the collaboration's own words)."""
    has_room: ClassVar[bool] = True
    has_thinking: ClassVar[bool] = False
    """Participants answer in the open: no private thinking to show."""
    counts_silences: ClassVar[bool] = False
    room_help: ClassVar[str] = ("Type in the room: a goal, @gpt text for a single call, "
                                "or @router collaborate gpt claude: GOAL")

    # -- the session panel ---------------------------------------------------------------------

    def fold(self, state: StageState, event: BaseEvent) -> None:
        """The round under way and the bound on rounds, as the events carry them; each participant's
        replies, the Session panel's turns (a replay has no session to count them)."""
        facts = event.model_extra or {}
        if event.type == "agent_response" and event.from_:
            state.turns[event.from_] += 1
        if isinstance(facts.get("round"), int) and event.type in ("round", "agent_call"):
            state.round = facts["round"]
        if isinstance(facts.get("max_rounds"), int):
            state.max_rounds = facts["max_rounds"]

    def format_label(self, state: StageState) -> str:
        """A single call says so (it is not a collaboration to the operator)."""
        return "single call" if state.single_call else state.format

    def progress_row(self, state: StageState) -> Row:
        """The Collab chip: the round of the bound."""
        return Row("Collab", f"{state.round or 0}/{state.max_rounds or '?'}")

    def closed_rows(self, state: StageState) -> list[Row]:
        """A single call that was answered says so, instead of its collaboration's close reason."""
        if state.close_reason and state.single_call and state.close_reason in self.answered:
            return [Row("Closed", "answered (single call)", "bold")]
        return super().closed_rows(state)

    # -- the stage, replay and the room --------------------------------------------------------

    def single_call(self, scene: Any, cast_size: int) -> bool:
        """One participant, and a `collaborate:` section that caps the rounds at 1."""
        section = scene.section(self.name) if hasattr(scene, "section") else None
        return cast_size == 1 and section is not None and section.max_rounds == 1

    def recorded_single_call(self, info: Mapping[str, Any], cast_size: int) -> bool:
        """One participant, and a recorded cap of 1 round."""
        return cast_size == 1 and info.get("max_rounds") == 1

    def room_participants(self, scene: Any) -> set[str]:
        """The built-in personas and this scene's participants."""
        from promptdesk.core.formats.collaborate.personas import BUILTIN

        return set(BUILTIN) | set(getattr(scene, "characters", []))

    def room_scene(self, command: RoomCommand, base: Any) -> Any:
        """A validated `format: collaborate` scene for a room command (raises the engine's `InvalidConfig`).

        The provider (and any per-participant override) is the base scene's; the limits are the new
        scene's own (the format's defaults, or 1 round for a single call), never the stage's it was
        started from. Validation is the engine's (`scene_from_dict`)."""
        from promptdesk.core.casting.scene_file import scene_from_dict

        first = command.participants[0]
        who = " + ".join(command.participants)
        cast = {slug: spec.model_dump(exclude_none=True) for slug, spec in base.cast.items()
                if slug in command.participants}
        return scene_from_dict({
            "name": "single-call" if command.single else "collaboration",
            "title": f"Single call: @{first}" if command.single else f"Collaboration: {who}",
            "format": self.name, "goal": command.goal, "characters": list(command.participants), "cast": cast,
            self.name: {"first": first, **({"max_rounds": command.max_rounds} if command.max_rounds else {})},
            "provider": base.provider.model_dump(exclude_none=True)}, source="the room")

    # -- the wizard ----------------------------------------------------------------------------

    def choice_of(self, scene: Any) -> str:
        """A one-round, one-participant collaboration is a single call."""
        from promptdesk.core.formats.collaborate.settings import settings

        return SINGLE if len(scene.characters) == 1 and settings(scene).max_rounds == 1 else self.name

    def fill(self, data: dict[str, Any], scene: Any, key: str, goal: str) -> None:
        """The first participant (single call) or the first two, and the round cap (1 for a single call)."""
        from promptdesk.core.formats.collaborate.settings import settings

        data["characters"] = scene.characters[:1] if key == SINGLE else scene.characters[:2]
        data["cast"] = {k: v for k, v in data.get("cast", {}).items() if k in data["characters"]}
        data["perspectives"] = {k: v for k, v in data.get("perspectives", {}).items() if k in data["characters"]}
        data[self.name] = {"max_rounds": 1 if key == SINGLE else settings(scene).max_rounds}

    def wizard_fields(self, key: str) -> tuple[str, ...]:
        """A collaboration: who speaks first and the round cap; a single call has neither."""
        return ("seed",) if key == SINGLE else ("seed", "first", "max_rounds")

    def field_defaults(self, scene: Any) -> dict[str, Any]:
        """The first speaker and the round cap of the `collaborate:` section (defaults filled in)."""
        from promptdesk.core.formats.collaborate.settings import settings

        section = settings(scene)
        return {"first": section.first or scene.initial_speaker or scene.characters[0], "max_rounds": section.max_rounds}

    def tuned(self, scene: Any, values: Mapping[str, Any]) -> Any:
        """The `collaborate:` section with the first speaker and round cap given (the first speaker is a
        participant: the wizard offers only those)."""
        from promptdesk.core.formats.collaborate.settings import settings

        update = {name: values[name] for name in ("first", "max_rounds") if values.get(name) is not None}
        if not update:
            return scene
        changes: dict[str, Any] = {self.name: settings(scene).model_copy(update=update)}
        if "first" in update:
            changes["initial_speaker"] = update["first"]
        return scene.model_copy(update=changes)

    def bound(self, scene: Any) -> str:
        """A collaboration runs in rounds, not beats."""
        return f"at most {self.field_defaults(scene)['max_rounds']} rounds"

    def summary_rows(self, scene: Any) -> list[tuple[str, str]]:
        """The goal, who speaks first and the round cap."""
        defaults = self.field_defaults(scene)
        return [("Goal", scene.goal or scene.prompt or "—"), ("First", defaults["first"]),
                ("Rounds", f"at most {defaults['max_rounds']}")]
