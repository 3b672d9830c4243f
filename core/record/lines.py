"""How a format's own events read in the record: the transcripts, `metadata.json` and the batch lines.

The record knows speech, world events, notes and system lines; every other event type belongs to a
format, which describes it with one `FormatLines` (see `promptdesk.core.engine.format`). The scene format adds
nothing (`PLAIN`). Readers of a finished run get the right one by the format its `start` event names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from promptdesk.core.protocol.lines import one_line
from promptdesk.core.record.events import BaseEvent

Names = Mapping[str, str]


def _never(event: BaseEvent) -> bool:
    return False


def _text(event: BaseEvent, names: Names) -> str:
    """The event's text on one line: nothing in it can start a line of the record."""
    return one_line(event.text)


def _nothing(events: list[BaseEvent]) -> dict[str, Any]:
    return {}


def _unprinted(event: BaseEvent, names: Names) -> str | None:
    return None


def at_beat(beat: int | None) -> str:
    """Where a batch line happened: `[beat N]`, or `[-]` outside the beats."""
    return f"[beat {beat}]" if beat is not None else "[-]"


@dataclass(frozen=True)
class FormatLines:
    """A format's own event types, as the record and the batch printer show them (pure functions)."""

    is_public: Callable[[BaseEvent], bool] = _never
    """True for the format's events the audience sees (they are transcribed)."""
    txt_line: Callable[[BaseEvent, Names], str] = _text
    """One public event as a `transcript.txt` line: exactly one line, model text folded into it."""
    md_line: Callable[[BaseEvent, Names], str] = _text
    """One public event as a `transcript.md` paragraph: model text never starts a line of its own
    (further lines indented, see `promptdesk.core.protocol.lines.indented`)."""
    metadata: Callable[[list[BaseEvent]], dict[str, Any]] = _nothing
    """The format's own keys of `metadata.json`."""
    turn_types: tuple[str, ...] = ()
    """Event types that count as an actor's spoken turn, besides speech."""
    printed: Callable[[BaseEvent, Names], str | None] = _unprinted
    """The batch printer's line for one of the format's events (None: no line)."""
    where: Callable[[int | None], str] = at_beat
    """Where a batch line of the record's own events (close, world event, system line) happened."""


PLAIN = FormatLines()
"""A format with no event types of its own (the scene format)."""
