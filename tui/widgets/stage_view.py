"""The stage itself: transcript and live speech, the session panel, one thinking pane per actor
(as many shown as fit; the operator picks which: `promptdesk.tui.widgets.pane_picker`).

`StageView.apply(events)` is the one place where core events become widget updates; the live
stage (through the bridge) and replay (from `events.jsonl`) both feed it, in batches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.events import Resize

from promptdesk.core.record.events import BaseEvent, CloseEvent, DeltaEvent, SpeakEvent, ThinkEvent
from promptdesk.tui.lines import Cast
from promptdesk.tui.render import transcript_line
from promptdesk.tui.snapshot import FROM_EVENTS, StageState
from promptdesk.tui.stage_state import note_progress
from promptdesk.tui.widgets.live_speech import LiveSpeech
from promptdesk.tui.widgets.pane_picker import MARKED_HEIGHT, MARKED_WIDTH, pane_capacity, shown_panes
from promptdesk.tui.widgets.state_panel import StatePanel
from promptdesk.tui.widgets.thinking_pane import ThinkingPane
from promptdesk.tui.widgets.transcript import Transcript
from promptdesk.tui.widgets.wrapped_log import WrappedLog

PANE_MIN_WIDTH, PANE_MIN_HEIGHT = 16, 5
"""The smallest a thinking pane may get (border included) when choosing how many rows of panes."""


def pane_grid(count: int, width: int, height: int) -> tuple[int, int]:
    """Rows and columns for `count` panes in a `width` x `height` area: the layout that leaves the
    most room for text, among those where no pane is smaller than the minimum; else among those where
    every pane still says PRIVATE whole (`MARKED_WIDTH` x `MARKED_HEIGHT`); else one row."""
    for least_w, least_h in ((PANE_MIN_WIDTH, PANE_MIN_HEIGHT), (MARKED_WIDTH, MARKED_HEIGHT)):
        best, best_room = None, -1
        for rows in range(1, max(1, count) + 1):
            columns = math.ceil(count / rows)
            pane_w, pane_h = width // max(1, columns), height // rows
            room = (pane_w - 2) * (pane_h - 2)
            if pane_w >= least_w and pane_h >= least_h and room > best_room:
                best, best_room = (rows, columns), room
        if best is not None:
            return best
    return 1, max(1, count)


@dataclass
class _PaneBatch:
    """What one batch of events does to one thinking pane."""

    reset: bool = False
    thoughts: list[tuple[int | None, str]] = field(default_factory=list)
    stream: str = ""


class StageView(Vertical):
    """Renders a scene's events; knows nothing about where they come from."""

    DEFAULT_CSS = """
    StageView { height: 1fr; }
    StageView > #upper { height: 3fr; }
    StageView #speech { width: 1fr; border: round $primary; }
    StageView > #thinking { height: 2fr; }
    StageView > #thinking.-crowd { border-top: solid $secondary; border-title-color: $text-muted; }
    """

    def __init__(self, cast: dict[str, str], *, single_call: bool = False, answered: frozenset[str] = frozenset(),
                 thinking: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.thinking = thinking
        """Whether the actors think in private (a pane each); formats that answer in the open have none."""
        self.cast = Cast(dict(cast), single_call=single_call, answered=answered)
        self.progress = StageState()
        """What the events say beyond the session's own state: goal achieved, round, bound, phase."""
        self._panes: dict[str, ThinkingPane] = {}
        self.chosen: list[str] | None = None
        """The actors whose panes the operator chose to show (None: the cast from its start)."""
        self.capacity = len(self.cast.names)
        """How many thinking panes fit (see `pane_capacity`)."""
        self._area = (0, 0)

    def compose(self) -> ComposeResult:
        with Horizontal(id="upper"):
            with Vertical(id="speech"):
                yield Transcript(id="transcript")
                yield LiveSpeech(id="live")
            yield StatePanel(id="state")
        if self.thinking:
            with Grid(id="thinking"):
                longest = max((cell_len(self.cast.name(slug)) for slug in self.cast.names), default=0)
                for slug, name in self.cast.names.items():
                    yield ThinkingPane(slug, name, self.cast.role(slug), longest, tuple(self.cast.names.values()))

    def on_mount(self) -> None:
        if not self.app.is_running:  # the app is closing (a replay made ready off screen as it quit)
            return
        self.query_one("#speech").border_title = "Transcript"
        self.query_one(LiveSpeech).cast = self.cast

    def on_resize(self, event: Resize) -> None:
        self._area = (event.size.width, event.size.height * 2 // 5)
        self.capacity = pane_capacity(*self._area)
        self._lay_out_panes()

    @property
    def shown(self) -> list[str]:
        """The slugs whose thinking panes are shown, in cast order."""
        return shown_panes(list(self.cast.names), self.chosen, self.capacity)

    def show_panes(self, slugs: list[str] | None) -> None:
        """Show these actors' thinking panes (as many as fit, in cast order); hide the others. None:
        as before any choice (the cast from its start)."""
        self.chosen = None if slugs is None else [slug for slug in self.cast.names if slug in slugs]
        self._lay_out_panes()

    def _lay_out_panes(self) -> None:
        """Show the chosen panes (hidden ones keep their thoughts) in the grid that suits them best."""
        if not self.thinking:
            return
        shown = set(self.shown)
        for slug in self.cast.names:
            pane = self.pane(slug)
            if pane is not None:
                pane.display = slug in shown
        rows, columns = pane_grid(len(shown), *self._area)
        grid = self.query_one("#thinking", Grid)
        grid.styles.grid_size_columns, grid.styles.grid_size_rows = columns, rows
        hidden = len(self.cast.names) - len(shown)
        grid.set_class(bool(hidden), "-crowd")
        grid.border_title = Content(f"Thinking: {len(shown)} of {len(self.cast.names)} shown · v picks which") \
            if hidden else None

    def pane(self, slug: str) -> ThinkingPane | None:
        """The thinking pane of one actor, if it is in the cast."""
        if not self._panes:
            self._panes = {pane.slug: pane for pane in self.query(ThinkingPane)}
        return self._panes.get(slug)

    def show_state(self, state: StageState) -> None:
        """Redraw the session panel (with what the events said that the state does not hold)."""
        for name in FROM_EVENTS:
            if getattr(state, name) is None:
                setattr(state, name, getattr(self.progress, name))
        state.beats_played = max(state.beats_played, self.progress.beats_played)
        state.single_call = self.cast.single_call
        self.query_one(StatePanel).show(state)

    def apply(self, events: Sequence[BaseEvent]) -> None:
        """Render a batch of events: one transcript write and one update per pane per batch."""
        live = self.query_one(LiveSpeech)
        lines, panes = [], {}
        for event in events:
            batch = panes.setdefault(event.from_, _PaneBatch()) if event.from_ in self.cast.names else None
            if isinstance(event, DeltaEvent):
                self._delta(event, batch, live)
                continue
            if isinstance(event, ThinkEvent) and batch is not None:
                batch.thoughts.append((event.beat, event.text))
                batch.stream, batch.reset = "", True
                continue
            self._finish_turns(event, panes, live)
            note_progress(self.progress, event)
            line = transcript_line(event, self.cast)
            if line is not None:
                lines.append(line)
        self.query_one(Transcript).add(lines)
        self._flush_panes(panes)
        live.refresh_view()

    @staticmethod
    def _delta(event: DeltaEvent, batch: _PaneBatch | None, live: LiveSpeech) -> None:
        """Stream a fragment; a `reset` (a broken stream about to be retried) takes back what was shown."""
        if event.channel == "reset":
            live.end(event.from_)
            if batch is not None:
                batch.stream, batch.reset = "", True
        elif event.channel == "speech":
            live.stream(event.from_, event.text)
        elif batch is not None and event.channel != "retry":
            batch.stream += event.text

    def _finish_turns(self, event: BaseEvent, panes: dict[str, _PaneBatch], live: LiveSpeech) -> None:
        """A finished, corrected or failed turn ends that actor's streams; a close ends them all."""
        if isinstance(event, SpeakEvent):
            live.end(event.from_)
        elif event.type in ("correct", "system") and event.target in self.cast.names:
            live.end(event.target)
            panes.setdefault(event.target, _PaneBatch()).reset = True
            panes[event.target].stream = ""
        elif isinstance(event, CloseEvent):
            self.progress.goal_achieved = event.goal_achieved
            live.buffers.clear()
            for slug in self.cast.names:
                panes.setdefault(slug, _PaneBatch()).reset = True
                panes[slug].stream = ""

    def _flush_panes(self, panes: dict[str, _PaneBatch]) -> None:
        for slug, batch in panes.items():
            pane = self.pane(slug)
            if pane is None:
                continue
            if batch.thoughts:
                pane.add_thoughts(batch.thoughts)
            elif batch.reset:
                pane.end_stream()
            if batch.stream:
                pane.stream(batch.stream)

    def follow(self) -> None:
        """Scroll the transcript and every thinking pane to their ends, and follow them again."""
        for log in self.query(WrappedLog):
            log.follow()

    def clear(self) -> None:
        """Empty every widget (replay rebuilds the stage when it seeks backwards)."""
        self.query_one(Transcript).clear()
        self.query_one(LiveSpeech).clear()
        for pane in self.query(ThinkingPane):
            pane.clear()
        self.progress = StageState()
