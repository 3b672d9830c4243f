"""Which actors' thinking panes the stage shows, when the cast is larger than the panes that fit.

A crowd (up to `promptdesk.core.engine.scene.MAX_CAST` actors) does not fit on the stage as one pane each:
the stage shows as many panes as fit at a readable size (`pane_capacity`; every pane of a cast of
up to `ALWAYS_SHOWN` fits anyway, as it always did), and the operator picks which ones, with `v`
(`PanePicker`, a checklist of the cast) or from the command palette (`pane_commands`: show or hide
one actor's pane). Hidden panes keep receiving their actor's thoughts, so showing one again shows
everything it thought. The live stage and replay both offer it (`PaneControls`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from rich.segment import Segment
from textual import on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.strip import Strip
from textual.widgets import SelectionList, Static
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import OptionDoesNotExist

from promptdesk.tui.dialog import Dialog
from promptdesk.tui.lines import literal, safe

READABLE_WIDTH, READABLE_HEIGHT = 24, 6
"""The smallest pane (border included) a crowd's panes are given: about three lines of 22 characters."""
ALWAYS_SHOWN = 8
"""Casts this size or smaller show every pane, as the stage always has (their panes shrink to fit), as
long as each still says PRIVATE (`MARKED_WIDTH`)."""
MARKED_WIDTH, MARKED_HEIGHT = 13, 5
"""The narrowest pane whose border still says `PRIVATE` whole (the word, its corners and the `─ ` ` ─`
around it), and the lowest that keeps a line of thought between its borders."""


def pane_capacity(width: int, height: int) -> int:
    """How many thinking panes fit in a `width` x `height` area at a readable size (at least `ALWAYS_SHOWN`),
    never more than can each still say PRIVATE whole."""
    marked = max(1, width // MARKED_WIDTH) * max(1, height // MARKED_HEIGHT)
    return min(marked, max(ALWAYS_SHOWN, (width // READABLE_WIDTH) * (height // READABLE_HEIGHT)))


def shown_panes(cast: Sequence[str], chosen: Sequence[str] | None, capacity: int) -> list[str]:
    """The slugs whose panes are shown, in cast order: the operator's choice (or, with none, the
    cast from its start), no more than `capacity`."""
    wanted = [slug for slug in (chosen if chosen is not None else cast) if slug in cast][:capacity]
    return [slug for slug in cast if slug in wanted]


def with_pane(shown: Sequence[str], slug: str, capacity: int) -> list[str]:
    """`shown` with `slug` added; when they are already as many as fit, the first one shown gives way."""
    kept = [s for s in shown if s != slug]
    return [*kept[max(0, len(kept) - capacity + 1):], slug]


class Checklist(SelectionList[str]):
    """A `SelectionList` whose box says, not only by its colour, whether a row is ticked: `▐✓▌` or `▐ ▌`."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 2 or segments[1].text != ToggleButton.BUTTON_INNER:
            return strip
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        segments[1] = Segment("✓" if option.value in self._selected else " ", segments[1].style)
        return Strip(segments, strip.cell_length)


class PanePicker(Dialog[list[str] | None]):
    """A checklist of the cast: tick the actors whose thinking panes to show (Enter), Esc to cancel."""

    DEFAULT_CSS = """
    PanePicker { align: center middle; }
    PanePicker > Vertical { width: 60; max-width: 95%; height: 80%; border: thick $primary; background: $surface;
                            padding: 0 1; }
    PanePicker #pane-help { height: auto; color: $text-muted; margin-bottom: 1; }
    PanePicker SelectionList { height: 1fr; }
    """
    BINDINGS = [
        Binding("enter", "apply", "Show", id="panes.apply", tooltip="Show the ticked actors' thinking panes",
                priority=True),
        Binding("escape", "cancel", "Cancel", id="panes.cancel", tooltip="Keep the panes as they are"),
    ]

    def __init__(self, cast: dict[str, str], shown: Sequence[str], capacity: int) -> None:
        super().__init__()
        self.cast, self.shown, self.capacity = cast, list(shown), capacity

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content(f"Thinking panes: {len(self.shown)} of {len(self.cast)} shown; {self.capacity} fit. "
                                 "Space ticks an actor, Enter shows the ticked ones (the first "
                                 f"{self.capacity} in cast order), Esc cancels."), id="pane-help")
            yield Checklist(*((Content(safe(name)), slug, slug in self.shown) for slug, name in self.cast.items()),
                            id="pane-list")

    def on_mount(self) -> None:
        """Focus the checklist on its first actor, so that space ticks someone at once."""
        self.query_one(Vertical).border_title = "Thinking panes"
        choices = self.query_one(SelectionList)
        choices.highlighted = 0
        choices.focus()

    @on(SelectionList.SelectedChanged)
    def _count(self) -> None:
        ticked = len(self.query_one(SelectionList).selected)
        self.query_one("#pane-help", Static).update(Content(
            f"{ticked} ticked; {self.capacity} fit (the first {self.capacity} in cast order are shown). "
            "Space ticks, Enter shows, Esc cancels."))

    def action_apply(self) -> None:
        self.dismiss(list(self.query_one(SelectionList).selected))

    def action_cancel(self) -> None:
        self.dismiss(None)


def panes_binding(screen: str) -> Binding:
    """The `v` key of a screen holding a stage (not in the footer: the stage's thinking area names it
    when some panes are hidden)."""
    return Binding("v", "panes", "Panes", id=f"{screen}.panes", show=False,
                   tooltip="Pick which actors' thinking panes are shown (a large cast does not fit at once)")


class PaneControls:
    """The pane choice on a screen that holds a `StageView` (as `view`): the `v` key and its palette commands."""

    def panes_why_not(self) -> str | None:
        """Why `v` cannot act now: no panes on this stage, or every actor's pane already shows (None: it can)."""
        view = self.pane_view()  # type: ignore[attr-defined]
        if not view.thinking:
            return "no one thinks in private on this stage, so it has no thinking panes"
        if len(view.shown) == len(view.cast.names):
            count = len(view.cast.names)
            return f"every actor's thinking pane is shown ({count} of {count})"
        return None

    def action_panes(self) -> None:
        """Open the checklist of the cast (or say why not, when every pane already shows)."""
        reason = self.panes_why_not()
        if reason is not None:
            self.notify(f"Panes: not now, {reason}.", title="Not now", markup=False, timeout=3)  # type: ignore[attr-defined]
            return
        view = self.pane_view()  # type: ignore[attr-defined]

        def chosen(slugs: list[str] | None) -> None:
            if slugs is not None:
                view.show_panes(slugs)

        self.app.push_screen(PanePicker(dict(view.cast.names), view.shown, view.capacity), chosen)  # type: ignore[attr-defined]

    def pane_commands(self) -> Iterator[SystemCommand]:
        """One palette command per actor: show its pane (if hidden) or hide it (if shown)."""
        view = self.pane_view()  # type: ignore[attr-defined]
        if len(view.cast.names) <= 1:
            return
        for slug, name in view.cast.names.items():
            if slug in view.shown:
                yield SystemCommand(f"Hide thinking: {literal(name)}", f"Hide {literal(name)}'s thinking pane",
                                    lambda slug=slug: view.show_panes([s for s in view.shown if s != slug]))
            else:
                yield SystemCommand(f"Show thinking: {literal(name)}", f"Show {literal(name)}'s thinking pane "
                                    "(the first one shown gives way when no more fit)",
                                    lambda slug=slug: view.show_panes(with_pane(view.shown, slug, view.capacity)))
