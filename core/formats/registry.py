"""The formats Promptdesk plays, by name: adding a format is one package and one line here.

Each format's package offers `add_flags(parser)` (its command-line flags, importing nothing heavy)
and `load()` (its `Format`), so that the command line builds its parser (`promptdesk --help`)
without loading the engine. `FORMATS` loads every format the first time it is read, and teaches
the offline improviser each format's parts (`Format.players`), so a run of any format can be
played with no key and no network.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.formats import collaborate, roundtable, scene

if TYPE_CHECKING:
    from promptdesk.core.engine.format import Format
    from promptdesk.core.record.events import BaseEvent

PACKAGES = (scene, collaborate, roundtable)
"""Every format's package, in the order the console offers them."""


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Every format's own flags, on the one `promptdesk` parser."""
    for package in PACKAGES:
        package.add_flags(parser)


class Formats(Mapping[str, "Format"]):
    """Every format by name, in the console's order, loaded on first use."""

    def __init__(self) -> None:
        self._loaded: dict[str, Format] | None = None

    def _all(self) -> dict[str, Format]:
        if self._loaded is None:
            from promptdesk.core.improv import PLAYERS

            loaded = {}
            for package in PACKAGES:
                fmt = package.load()
                loaded[fmt.name] = fmt
                PLAYERS.update(fmt.players)
            self._loaded = loaded
        return self._loaded

    def __getitem__(self, name: str) -> Format:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


FORMATS: Mapping[str, Format] = Formats()
"""Every format, in the order the console offers them."""


def get(name: str) -> Format:
    """The format `name`; InvalidConfig naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise InvalidConfig(f"unknown format {name!r}; formats: {', '.join(FORMATS)}") from None


def of_run(events: list[BaseEvent]) -> Format:
    """The format a recorded run was played in (its `start` event; a scene when it names none known)."""
    from promptdesk.core.record.outputs import scene_format

    return FORMATS.get(scene_format(events), FORMATS["scene"])
