"""The formats Promptdesk plays, by name: adding a format is one package and one line here.

Each registration also teaches the offline improviser the format's parts (`Format.players`), so a
run of any format can be played with no key and no network.
"""

from __future__ import annotations

from promptdesk.core.engine.format import Format
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.formats.collaborate.format import CollaborateFormat
from promptdesk.core.formats.roundtable.format import RoundtableFormat
from promptdesk.core.formats.scene.format import SceneFormat
from promptdesk.core.improv import PLAYERS
from promptdesk.core.record.events import BaseEvent
from promptdesk.core.record.outputs import scene_format

FORMATS: dict[str, Format] = {fmt.name: fmt for fmt in (
    SceneFormat(),
    CollaborateFormat(),
    RoundtableFormat(),
)}
"""Every format, in the order the console offers them."""

for _format in FORMATS.values():
    PLAYERS.update(_format.players)


def get(name: str) -> Format:
    """The format `name`; InvalidConfig naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise InvalidConfig(f"unknown format {name!r}; formats: {', '.join(FORMATS)}") from None


def of_run(events: list[BaseEvent]) -> Format:
    """The format a recorded run was played in (its `start` event; a scene when it names none known)."""
    return FORMATS.get(scene_format(events), FORMATS["scene"])
