"""The console side of a format: `ConsoleFormat`, what a format with no opinion gets.

A format's console side subclasses `ConsoleFormat` and overrides only how it differs, as the
core's formats do on `promptdesk.core.engine.format.Format` (and autogen's team types on one manager): the
transcript lines of its own event types, what it folds into the session panel and the rows it
shows there, how the wizard offers it and turns a scene file into it, what the cast check lists,
its room, and the question it may put to the operator. The base class plays like a scene: no
event types of its own, beats counted, every character listed, no room, nothing asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

from promptdesk.core.record.events import BaseEvent
from promptdesk.tui.lines import Cast, Line, safe
from promptdesk.tui.snapshot import StageState

LineMaker = Callable[[BaseEvent, Cast], Line | None]
"""One event type's transcript line (None: the event has no line)."""
Direct = Callable[..., None]
"""A control of the session's format only, called as `direct(name, **arguments)`."""


class Row(NamedTuple):
    """One row of the session panel: its label, its value (already made safe) and the value's style."""

    label: str
    value: str
    style: str = ""


class Choice(NamedTuple):
    """A format as the wizard offers it: its key, its label, and its place in the list (0 first)."""

    key: str
    label: str
    place: int


def extra(event: BaseEvent, key: str) -> Any:
    """A field the event's format added to it (None when it has none)."""
    return (event.model_extra or {}).get(key)


def marker_line(event: BaseEvent, cast: Cast) -> Line:
    """A marker between sections (a beat, a round, a phase): its text between rules."""
    return Line.of((f"── {safe(event.text)} ──", "beat"))


def tagged(prefix: str, role: str) -> LineMaker:
    """A line maker for a plain event: `prefix` and the event's text, all in one role."""
    def line(event: BaseEvent, cast: Cast) -> Line:
        return Line.of((prefix, role), (safe(event.text), role))
    return line


class ConsoleFormat:
    """One format on the console. Class attributes describe it; methods are its hooks."""

    name: ClassVar[str] = ""
    """The `format:` of a scene file: this object's key here and in `promptdesk.core.formats.registry`."""
    noun: ClassVar[str] = "scene"
    """What one run of the format is called in a sentence (`a scene`, `a collaboration`)."""
    choices: ClassVar[tuple[Choice, ...]] = ()
    """How the wizard offers the format (a format may be offered in more than one shape)."""
    lines: ClassVar[Mapping[str, LineMaker]] = {}
    """Transcript line makers of the format's own event types."""
    markers: ClassVar[frozenset[str]] = frozenset()
    """Its event types that begin a unit of play, as the engine's `beat` does (a round)."""
    control_events: ClassVar[frozenset[str]] = frozenset()
    """Its event types after which the stage's available actions may have changed."""
    lists_cast: ClassVar[bool] = True
    """True when a cast that cannot be loaded is listed character by character (found, or why not)."""
    answered: ClassVar[frozenset[str]] = frozenset()
    """Close reasons that read as the answer of a single call (only a format with single calls has any)."""
    has_room: ClassVar[bool] = False
    """True when its stage has a room: an input line that starts more sessions."""
    room_help: ClassVar[str] = ""
    """What the stage's room key says (the format with a room)."""
    asks_on: ClassVar[frozenset[str]] = frozenset()
    """Its event types after which it may be waiting for the operator (the stage opens its dialog)."""
    ask_help: ClassVar[str] = ""
    """What the stage's decide key says (the format that asks)."""
    waiting_label: ClassVar[str] = "your decision (a)"
    """The panel's Waiting row while the format waits for the operator."""
    has_thinking: ClassVar[bool] = True
    """True when its actors think in private (the stage gives each a PRIVATE pane)."""
    counts_silences: ClassVar[bool] = True
    """True when an actor may stay silent for a beat (the panel counts silent beats in a row)."""

    # -- the session panel ---------------------------------------------------------------------

    def fold(self, state: StageState, event: BaseEvent) -> None:
        """Take what one event of the format's own types says into `state` (round, phase, counts)."""

    def live_facts(self, state: Any) -> dict[str, Any]:
        """Fields of a `StageState` that a live session's `SessionState` implies for this format."""
        return {}

    def format_label(self, state: StageState) -> str:
        """The panel's Format row."""
        return state.format

    def progress_row(self, state: StageState) -> Row:
        """How far the scene is (shown bold): beats, or turns when they are taken one at a time."""
        of = f" of {state.max_beats}" if state.max_beats else ""
        return Row("Turns" if state.turns_mode == "sequential" else "Beats", f"{state.beats_played}{of}")

    def rows(self, state: StageState) -> list[Row]:
        """The format's own rows, after the progress row."""
        return []

    def turn_counts(self, state: StageState) -> tuple[str, Mapping[str, int]]:
        """The panel's per-actor count: its heading and the count per slug (turns taken, by default)."""
        return "Turns", state.turns

    def closed_rows(self, state: StageState) -> list[Row]:
        """How the scene closed, and whether its goal was achieved (nothing while it runs)."""
        if not state.close_reason:
            return []
        rows = [Row("Closed", safe(state.close_reason), "bold")]
        if state.goal_achieved is not None:
            rows.append(Row("Goal", "achieved" if state.goal_achieved else "not achieved"))
        return rows

    # -- the stage and replay ------------------------------------------------------------------

    def single_call(self, scene: Any, cast_size: int) -> bool:
        """True when a live session of this scene is a single call (one participant, one reply)."""
        return False

    def recorded_single_call(self, info: Mapping[str, Any], cast_size: int) -> bool:
        """True when a recorded run (its `start` event's facts) was a single call."""
        return False

    def room_participants(self, scene: Any) -> set[str]:
        """Who can be named in the room (a format with a room)."""
        return set()

    def room_scene(self, command: Any, base: Any) -> Any:
        """The scene a room command starts (a format with a room)."""
        raise NotImplementedError(f"format {self.name} has no room")

    def waiting(self, format_state: Any) -> Any | None:
        """What the session waits for the operator to decide (its details), from the format's state."""
        return None

    def dialog(self, details: Any) -> Any:
        """The dialog that asks the operator about `details` (a format that asks)."""
        raise NotImplementedError(f"format {self.name} asks nothing")

    def is_dialog(self, screen: Any) -> bool:
        """True when `screen` is the format's own dialog (it is never stacked twice)."""
        return False

    def answer(self, direct: Direct, answer: Any) -> None:
        """Send the operator's answer from the dialog through the session's `direct` control."""
        raise NotImplementedError(f"format {self.name} asks nothing")

    # -- the wizard ----------------------------------------------------------------------------

    def choice_of(self, scene: Any) -> str:
        """The wizard's key for a scene file of this format."""
        return self.name

    def topic(self, scene: Any) -> str:
        """What a scene file of this format is about beyond its goal and prompt ('' for nothing)."""
        return ""

    def wizard_fields(self, key: str) -> tuple[str, ...]:
        """The run fields the wizard offers for choice `key` (`promptdesk.tui.widgets.run_fields.FIELDS`): a
        scene's actors answer in the actor protocol, so it has a reply protocol."""
        return ("seed", "protocol", "max_beats")

    def field_defaults(self, scene: Any) -> dict[str, Any]:
        """What a blank run field means for `scene` (a scene of this format), by field name."""
        return {"max_beats": scene.limits.beats_for(len(scene.characters))}

    def tuned(self, scene: Any, values: Mapping[str, Any]) -> Any:
        """`scene` (of this format) with the format's own run fields applied (`first`, `max_rounds`…)."""
        return scene

    def bound(self, scene: Any) -> str:
        """How long the scene may run, as the wizard's line about it says (`up to 30 beats`)."""
        return f"up to {scene.limits.beats_for(len(scene.characters))} beats"

    def summary_rows(self, scene: Any) -> list[tuple[str, str]]:
        """What the confirm step says the scene is about (label, value)."""
        return [("Setting", scene.setting or "—"), ("Goal", scene.goal or "—")]

    def fill(self, data: dict[str, Any], scene: Any, key: str, goal: str) -> None:
        """Make `data` (a scene file turned into this format, shaped as choice `key`) fit the format:
        its cast and its own section."""

    def converted(self, scene: Any, key: str, exclude: set[str], goal: str) -> Any:
        """`scene` turned into this format as choice `key`: its cast, provider and `goal` kept, the
        sections named in `exclude` dropped; raises the engine's `InvalidConfig` when it does not fit."""
        from promptdesk.core.casting.scene_file import scene_from_dict

        data: dict[str, Any] = scene.model_dump(exclude_none=True, exclude=exclude | {"initial_speaker"})
        data.update(goal=goal, format=self.name)
        self.fill(data, scene, key, goal)
        return scene_from_dict(data, source=f"{scene.name} as {key}")
