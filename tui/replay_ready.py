"""A closed stage's replay, made ready while the stage waits, so that `o` only has to show it.

Opening a screen costs Textual its composing, mounting and styling (about 40 ms for the replay's
twenty widgets on the benchmark machine), and, for a screen that is mounted as it is pushed, a
second layout pass once its last child has mounted (Textual's `AwaitMount` asks for one, after the
first frame is drawn). A screen registered with the app before it is pushed is composed and mounted
then, off screen; pushed later, it is only styled for the screen, laid out and drawn.

Registering a screen without pushing it is what Textual's `push_screen` does first for a screen that
is not running yet (`App._register`, a private method of the pinned Textual). Where it is missing,
nothing is made ready and `o` builds the replay as it is pushed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.timer import Timer

READY_AFTER_S = 0.3
"""How long the closed stage stays on screen before its replay is made ready (its close's own frames
and notices come first)."""


class ReplayReady:
    """One replay screen for a closed stage's run, made ready off screen; handed over once."""

    def __init__(self, stage: Screen, build: Callable[[], Screen]) -> None:
        self.stage, self.build = stage, build
        self.screen: Screen | None = None
        """The ready replay, registered with the app and mounted, not yet shown."""
        self._timer: Timer | None = None

    def soon(self) -> None:
        """Make the replay ready once the stage has stayed on screen `READY_AFTER_S` (again after each
        return to the stage: a replay shown is not shown twice)."""
        if self.screen is None and self._timer is None and hasattr(App, "_register"):
            self._timer = self.stage.set_timer(READY_AFTER_S, self._make)

    def _make(self) -> None:
        self._timer = None
        app: Any = self.stage.app
        if self.screen is not None or app.screen is not self.stage:
            return
        try:
            screen = self.build()
        except Exception:  # noqa: BLE001 - the run cannot be read now: `o` will build it and say why
            return
        app._register(app, screen)  # noqa: SLF001 - see the module docstring
        self.screen = screen

    def take(self) -> Screen:
        """The ready replay (and nothing ready any more), or one built now."""
        screen, self.screen = self.screen, None
        return screen if screen is not None else self.build()

    def discard(self) -> None:
        """The stage is going: a replay made ready and never shown goes with it."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        screen, self.screen = self.screen, None
        if screen is not None:
            screen.remove()
