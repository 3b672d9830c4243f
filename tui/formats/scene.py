"""The scene format's console side (spec 000): the base class's behaviour, and its turn mode shown.

A scene's events (speech, beats, journals, world events, notes) are the engine's own, so their
lines are `promptdesk.tui.render`'s; the scene adds no event type, no room and no question to the operator.
"""

from __future__ import annotations

from typing import ClassVar

from promptdesk.tui.formats.base import Choice, ConsoleFormat
from promptdesk.tui.snapshot import StageState


class SceneFormat(ConsoleFormat):
    """Characters improvising in beats, in parallel or in turns."""

    name: ClassVar[str] = "scene"
    choices: ClassVar[tuple[Choice, ...]] = (Choice("scene", "Scene", 2),)

    def format_label(self, state: StageState) -> str:
        """The format and how turns are taken (`scene · parallel`)."""
        return " · ".join(x for x in (state.format, state.turns_mode) if x)
