"""The stage itself: transcript and live speech, the session panel, one thinking pane per actor.

`StageView.apply(events)` is the one place where core events become widget updates; the live
stage (through the bridge) and replay (from `events.jsonl`) both feed it, in batches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical
from textual.events import Resize

from core.events import BaseEvent, CloseEvent, DeltaEvent, SpeakEvent, ThinkEvent
from tui.render import Cast, transcript_line
from tui.stage_state import StageState
from tui.widgets.live_speech import LiveSpeech
from tui.widgets.state_panel import StatePanel
from tui.widgets.thinking_pane import ThinkingPane
from tui.widgets.transcript import Transcript

PANE_MIN_WIDTH = 26
"""The narrowest a thinking pane gets before panes wrap onto another row."""


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
    StageView > #thinking { height: 2fr; grid-gutter: 0 1; }
    """

    def __init__(self, cast: dict[str, str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.cast = Cast(dict(cast))
        self.goal_achieved: bool | None = None
        """Set when the close event says whether the scene's goal was achieved."""
        self._panes: dict[str, ThinkingPane] = {}

    def compose(self) -> ComposeResult:
        with Horizontal(id="upper"):
            with Vertical(id="speech"):
                yield Transcript(id="transcript")
                yield LiveSpeech(id="live")
            yield StatePanel(id="state")
        with Grid(id="thinking"):
            for slug, name in self.cast.names.items():
                yield ThinkingPane(slug, name, self.cast.role(slug))

    def on_mount(self) -> None:
        self.query_one("#speech").border_title = "Transcript"
        self.query_one(LiveSpeech).cast = self.cast
        self._layout_panes(self.size.width)

    def on_resize(self, event: Resize) -> None:
        self._layout_panes(event.size.width)

    def _layout_panes(self, width: int) -> None:
        count = max(1, len(self.cast.names))
        most = max(1, min(count, width // PANE_MIN_WIDTH)) if width else count
        rows = math.ceil(count / most)
        grid = self.query_one("#thinking", Grid)
        grid.styles.grid_size_columns = math.ceil(count / rows)
        grid.styles.grid_size_rows = rows

    def pane(self, slug: str) -> ThinkingPane | None:
        """The thinking pane of one actor, if it is in the cast."""
        if not self._panes:
            self._panes = {pane.slug: pane for pane in self.query(ThinkingPane)}
        return self._panes.get(slug)

    def show_state(self, state: StageState) -> None:
        """Redraw the session panel."""
        if state.goal_achieved is None:
            state.goal_achieved = self.goal_achieved
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
            line = transcript_line(event, self.cast)
            if line is not None:
                lines.append(line)
        self.query_one(Transcript).add(lines)
        self._flush_panes(panes)
        live.refresh_view()

    @staticmethod
    def _delta(event: DeltaEvent, batch: _PaneBatch | None, live: LiveSpeech) -> None:
        if event.channel == "speech":
            live.stream(event.from_, event.text)
        elif batch is not None:
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
            self.goal_achieved = event.goal_achieved
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

    def clear(self) -> None:
        """Empty every widget (replay rebuilds the stage when it seeks backwards)."""
        self.query_one(Transcript).clear()
        self.query_one(LiveSpeech).clear()
        for pane in self.query(ThinkingPane):
            pane.clear()
        self.goal_achieved = None
