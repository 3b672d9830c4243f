"""Dialogs over a dimmed picture of the screen below, drawn once rather than once per frame.

Textual draws a modal screen's translucent background by rendering the whole screen below and
tinting every cell of it, in every frame the modal draws; opening a dialog takes several frames (its
widgets are mounted, laid out, focused), so the stage below was drawn and tinted several times
before the dialog showed. `Backdrop` keeps the tinted picture for the size it was drawn at, and
draws it again at most every `BACKDROP_EVERY_S` (a running scene goes on behind the dialog).
"""

from __future__ import annotations

from time import monotonic
from typing import Any, Generic, TypeVar

from textual import events
from textual._context import active_app
from textual.await_complete import AwaitComplete
from textual.command import CommandPalette
from textual.css.styles import RulesMap
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

ResultType = TypeVar("ResultType")
BACKDROP_EVERY_S = 1.0
"""How often a dialog redraws the dimmed screen below it while it stays open (a live stage goes on)."""


class Backdrop(Visual):
    """A `BackgroundScreen` rendered to strips once per size (and again once it is `BACKDROP_EVERY_S` old):
    every later frame of the dialog takes the strips as they are."""

    def __init__(self, inner: BackgroundScreen) -> None:
        self.inner = inner
        self.key = (id(inner.screen), inner.color)
        self._strips: list[Strip] | None = None
        self._size: tuple[int, int | None] = (0, None)
        self._drawn_at = 0.0

    def stale(self) -> bool:
        """True once the picture is old enough to be drawn again."""
        return self._strips is not None and monotonic() - self._drawn_at >= BACKDROP_EVERY_S

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        if self._strips is None or (width, height) != self._size:
            app = active_app.get()
            lines = app.console.render_lines(self.inner, app.console_options.update(width=width, height=height),
                                             pad=True)
            self._strips = [Strip(line, width) for line in lines]
            self._size, self._drawn_at = (width, height), monotonic()
        return self._strips

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self._size[1] or 0


class BackdropMixin:
    """A modal screen whose dimmed background is a `Backdrop` (mixed in before the screen class)."""

    _backdrop: Backdrop | None = None

    def render(self) -> Any:
        inner = super().render()  # type: ignore[misc]
        if not isinstance(inner, BackgroundScreen):
            return inner
        key = (id(inner.screen), inner.color)
        if self._backdrop is None or self._backdrop.key != key or self._backdrop.stale():
            self._backdrop = Backdrop(inner)
        return self._backdrop

    def _on_mount(self) -> None:
        """Textual calls this class's handler besides the screen's own (its `on_mount`)."""
        self.set_interval(BACKDROP_EVERY_S, self._redraw_backdrop)  # type: ignore[attr-defined]

    def _redraw_backdrop(self) -> None:
        """Let the screen below show through as it is now (a live stage goes on behind the dialog)."""
        if self._backdrop is not None and self._backdrop.stale():
            self.refresh()  # type: ignore[attr-defined]


class Dialog(BackdropMixin, ModalScreen[ResultType], Generic[ResultType]):
    """The console's modal dialogs: a `ModalScreen` over a backdrop drawn once, dismissed once.

    Textual's `dismiss` pops whatever screen is on top: keys a terminal sends faster than a dialog
    closes (`enter` typed ahead, a burst) reach the dialog still closing, and a second `dismiss` there
    would pop the screen below it too (the stage, with its scene still running). A dialog answers once;
    later dismissals do nothing, and the keys its fields held after the answering `enter` are handed on
    to the screen below (`typed_ahead`)."""

    _answered = False
    _early: list[events.Key] | None = None
    _settled = False

    def holds(self, key: events.Key) -> bool:
        """Hold a key that comes before any field of the dialog has the focus (typed right after the
        key that opened it), or behind keys held so; it is given to the field once it has the focus
        (or to the dialog's own keys, once it is drawn, when nothing in it takes the focus)."""
        if self._answered or (self._early is None and (self.focused is not None or self._settled)):
            return False
        self._early = [*(self._early or []), key]
        return True

    def _on_mount(self) -> None:
        self.call_after_refresh(self._settle)

    def _settle(self) -> None:
        """Drawn with nothing that can take the focus: the keys held go to the dialog's own bindings."""
        if self.focus_chain:
            return  # its field takes the focus, and the keys held with it (`on_descendant_focus`)
        self._settled = True
        if self.focused is None:
            early, self._early = self._early or [], None
            for key in early:
                self.app.post_message(key)

    def on_key(self, event: events.Key) -> None:
        if self.holds(events.Key(event.key, event.character)):
            event.stop()
            event.prevent_default()

    def on_descendant_focus(self) -> None:
        early, self._early = self._early or [], None
        if early and self.focused is not None:
            for key in early:
                self.focused._forward_event(key)

    def dismiss(self, result: ResultType | None = None) -> AwaitComplete:
        if self._answered:
            return AwaitComplete(_nothing())
        self._answered = True
        done = super().dismiss(result)
        for field in self.query("LineInput"):  # by name: the field module imports this one
            field.pass_on()  # keys typed after the answering `enter` act on the screen below
        return done


async def _nothing() -> None:
    """What a dismissal of a dialog already dismissed waits for."""


class Palette(BackdropMixin, CommandPalette):
    """Textual's command palette over a backdrop drawn once."""
