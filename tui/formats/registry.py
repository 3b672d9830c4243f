"""Every format's console side, by the name `promptdesk.core.formats.registry` gives the format.

The rest of the console never tests which format it shows: it looks the format up here (`get`,
`of`, `of_record`) and asks it, or asks all of them at once (`LINES`, `fold`, `CHOICES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptdesk.core.record.events import BaseEvent
from promptdesk.tui.formats.base import Choice, ConsoleFormat, LineMaker
from promptdesk.tui.formats.collaborate import CollaborateFormat
from promptdesk.tui.formats.roundtable import RoundtableFormat
from promptdesk.tui.formats.scene import SceneFormat
from promptdesk.tui.snapshot import StageState

FORMATS: dict[str, ConsoleFormat] = {}
"""The console side of each format, by name, in the core registry's order."""


def register(fmt: ConsoleFormat) -> None:
    """Add a format's console side (its name is the core's)."""
    FORMATS[fmt.name] = fmt


register(SceneFormat())
register(CollaborateFormat())
register(RoundtableFormat())

DEFAULT = SceneFormat.name
"""The format of a scene file that names none (the core's default)."""
UNKNOWN = ConsoleFormat()
"""What a format this console does not know gets (an old or foreign recording): the base class."""


def get(name: str) -> ConsoleFormat:
    """The console side of format `name` (the base class's behaviour for a name it does not know)."""
    return FORMATS.get(name, UNKNOWN)


def of(state: Any) -> ConsoleFormat:
    """The console side of a session's format, from its state (a `SessionState` or `StageState`)."""
    return get(state.format)


def of_record(info: Mapping[str, Any]) -> ConsoleFormat:
    """The console side of a recorded run's format, from its `start` event's facts."""
    return get((info.get("scene") or {}).get("format", DEFAULT))


def _lines() -> dict[str, LineMaker]:
    lines: dict[str, LineMaker] = {}
    for fmt in FORMATS.values():
        for kind, maker in fmt.lines.items():
            if lines.setdefault(kind, maker) is not maker:
                raise ValueError(f"two formats read `{kind}` events differently")
    return lines


LINES: Mapping[str, LineMaker] = _lines()
"""Transcript line makers of every format's own event types (an event type reads the same in any format)."""


MARKERS: frozenset[str] = frozenset({"beat"}).union(*(fmt.markers for fmt in FORMATS.values()))
"""Event types that begin a unit of play: the engine's `beat`, and each format's own (its rounds)."""


def fold(state: StageState, event: BaseEvent) -> None:
    """Let every format take what an event of its own types says (a run's events are its own format's)."""
    for fmt in FORMATS.values():
        fmt.fold(state, event)


CHOICES: tuple[Choice, ...] = tuple(sorted((c for fmt in FORMATS.values() for c in fmt.choices),
                                           key=lambda c: c.place))
"""Every format the wizard offers, in the order shown."""


def offering(key: str) -> ConsoleFormat:
    """The format that the wizard's choice `key` runs."""
    return next(fmt for fmt in FORMATS.values() if any(c.key == key for c in fmt.choices))


def label(key: str) -> str:
    """How the wizard names choice `key`."""
    return next(c.label for c in CHOICES if c.key == key)


def choice_of(scene: Any) -> str:
    """The wizard's choice for a scene file as it is."""
    return get(scene.format).choice_of(scene)


def as_choice(scene: Any, key: str) -> Any:
    """`scene` as the wizard's choice `key` (unchanged when it already is); raises the engine's
    `InvalidConfig`. Its cast (as much as the format takes), provider and goal are kept: the goal,
    or the prompt, or what the scene's own format says it is about, or the setting."""
    if key == choice_of(scene):
        return scene
    goal = scene.goal or scene.prompt or get(scene.format).topic(scene) or scene.setting
    return offering(key).converted(scene, key, set(FORMATS), goal)


def _help(kind: str) -> str:
    return next(text for fmt in FORMATS.values() if (text := getattr(fmt, kind)))


ROOM_HELP = _help("room_help")
"""The stage's room key, as the format with a room describes it."""
ASK_HELP = _help("ask_help")
"""The stage's decide key, as the format that asks the operator describes it."""
