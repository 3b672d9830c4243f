"""A closed stage's replay, made ready while the stage waits, so that `o` only has to show it.

Opening a screen costs Textual its composing, mounting and styling (about 40 ms for the replay's
twenty widgets on the benchmark machine), and, for a screen that is mounted as it is pushed, a
second layout pass once its last child has mounted (Textual's `AwaitMount` asks for one, after the
first frame is drawn). A screen registered with the app before it is pushed is composed and mounted
then, off screen; pushed later, it is only styled for the screen, laid out and drawn.

Off screen, the ready replay is also laid out for the app's size, until its widgets' answers to
their sizes change nothing more. Shown, it then only has its styles refreshed and is drawn: one frame
(about 55 ms where a replay composed as `o` is pressed takes about 110).

A replay shown is kept (installed with the app, so that closing it does not remove it). Back on the
stage, it is rewound to the run's start and made ready again; `o` pressed before that (typed ahead
with the key that closed it) rewinds it as it shows it. Only the first `o` after the close, pressed
within `READY_AFTER_S`, composes a replay as it is pushed. The kept replay goes with its stage.

Registering a screen without pushing it is what Textual's `push_screen` does first for a screen that
is not running yet (`App._register`, a private method of the pinned Textual); laying a screen out is
`Screen._refresh_layout`, which draws nothing for a screen that is not the current one. Where
`_register` is missing, nothing is made ready and `o` builds the replay as it is pushed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.timer import Timer

READY_AFTER_S = 0.1
"""How long the closed stage stays on screen before its replay is made ready (its close's own frames
and notices come first). Shorter than a person takes to see the stage and press a key: only `o` typed
ahead (with the key that brought the stage back) finds nothing ready."""
SETTLE_S = 0.05
"""Between two layouts of the ready replay off screen (its widgets answer their new sizes between)."""
SETTLE_LAYOUTS = 6
"""At most this many layouts off screen (three settle the replay: its size, its panes' answer, a look)."""
SETTLE_WAITS = 40
"""At most this many looks while the ready replay is still mounting."""


class ReplayReady:
    """The replay of a closed stage's run, made ready off screen, shown, kept, made ready again."""

    def __init__(self, stage: Screen, build: Callable[[], Screen]) -> None:
        self.stage, self.build = stage, build
        self.screen: Screen | None = None
        """The ready replay, registered with the app and mounted, not yet shown."""
        self.settled = False
        """Whether `screen` is laid out for the app's size, with nothing left to lay out."""
        self.kept: Screen | None = None
        """The replay shown last, installed with the app so that closing it keeps it: made ready
        again, rewound, instead of a new one (a screen without `rewind` is not kept)."""
        self._name = f"promptdesk-replay-{id(self)}"
        self._timer: Timer | None = None

    def soon(self) -> None:
        """Make the replay ready once the stage has stayed on screen `READY_AFTER_S` (again after each
        return to the stage: the one shown is rewound), or finish laying it out."""
        if self._timer is not None or not hasattr(App, "_register"):
            return
        if self.screen is None:
            self._timer = self.stage.set_timer(READY_AFTER_S, self._make)
        elif not self.settled:
            self._timer = self.stage.set_timer(SETTLE_S, self._settle)

    def _make(self) -> None:
        self._timer = None
        app: Any = self.stage.app
        if self.screen is not None or app.screen is not self.stage:
            return
        screen = self._rewound()
        if screen is None:
            try:
                screen = self.build()
            except Exception:  # noqa: BLE001 - the run cannot be read now: `o` will build it and say why
                return
            app._register(app, screen)  # noqa: SLF001 - see the module docstring
        self.screen, self.settled = screen, False
        self._timer = self.stage.set_timer(SETTLE_S, self._settle)

    def _settle(self, layouts: int = SETTLE_LAYOUTS, waits: int = SETTLE_WAITS) -> None:
        """Lay the ready replay out for the app's size while it is off screen, then again once its
        widgets have answered their new sizes (the thinking panes pick their grid from theirs), until
        a look finds nothing to do: shown, it then needs no layout of its own (Textual lays a resumed
        screen out only when its size differs from the app's) and no second pass. At most `layouts`
        layouts, and `waits` looks while it is still mounting; past either, `o` lays it out."""
        self._timer = None
        screen: Any = self.screen
        app = self.stage.app
        if screen is None or app.screen is not self.stage:
            return
        if not screen.is_mounted:
            if waits > 0:
                self._timer = self.stage.set_timer(SETTLE_S, lambda: self._settle(layouts, waits - 1))
            return
        if screen._size == app.size and not screen._layout_required and not screen._layout_widgets:  # noqa: SLF001
            self.settled = True
            return
        if layouts > 0:
            screen._refresh_layout(app.size)  # noqa: SLF001 - see the module docstring
            screen._layout_required = False  # noqa: SLF001
            self._timer = self.stage.set_timer(SETTLE_S, lambda: self._settle(layouts - 1, waits))

    def take(self) -> Screen:
        """The ready replay (and nothing ready any more), else the kept one rewound, else one built
        now; kept from now on."""
        screen, self.screen, self.settled = self.screen, None, False
        if screen is None:
            screen = self._rewound()
        if screen is None:
            screen = self.build()
        self._keep(screen)
        return screen

    def _rewound(self) -> Screen | None:
        """The kept replay, rewound, when it is off screen and still mounted; else None."""
        kept: Any = self.kept
        if kept is None or not kept.is_mounted or kept in self.stage.app.screen_stack:
            return None
        kept.rewind()
        return kept

    def _keep(self, screen: Screen) -> None:
        if screen is self.kept:
            return
        self._drop_kept()
        app = self.stage.app
        if callable(getattr(screen, "rewind", None)) and not app.is_screen_installed(self._name):
            app.install_screen(screen, self._name)
            self.kept = screen

    def _drop_kept(self) -> None:
        kept, self.kept = self.kept, None
        if kept is not None and kept not in self.stage.app.screen_stack:
            self.stage.app.uninstall_screen(kept)
            kept.remove()

    def discard(self) -> None:
        """The stage is going: the replay made ready, and the one kept, go with it."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        screen, self.screen, self.settled = self.screen, None, False
        if screen is not None and screen is self.kept:
            screen = None
        self._drop_kept()
        if screen is not None and screen.is_mounted:
            screen.remove()
        elif screen is not None:  # still composing: removed once its widgets are mounted, not under them
            screen.call_later(screen.remove)
