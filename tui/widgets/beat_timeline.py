"""The beat timeline: one row per actor, one cell per beat — spoke, interrupted, reacted, silent,
failed — for a finished run (Compare screen) or a live one (fed events as they arrive; when a long
scene's beats outrun the width, the live one shows the latest, after a `…`)."""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from promptdesk.core.record.events import BaseEvent, SpeakEvent
from promptdesk.core.experiments.metrics import FAILED, INTERRUPTED, REACTED, SILENT, SPOKE, timeline
from promptdesk.tui.lines import fit_name

GLYPHS = {SPOKE: ("█", "#3b82f6"), INTERRUPTED: ("▲", "#f59e0b"), REACTED: ("◆", "#10b981"),
          SILENT: ("·", "#9ca3af"), FAILED: ("✗", "#ef4444")}
"""Each state's cell: a distinct glyph (readable without colour) and a colour."""


def legend() -> Text:
    """The key to the cells."""
    text = Text(no_wrap=True)
    for state, (glyph, colour) in GLYPHS.items():
        text.append(f"{glyph} {state}  ", Style(color=colour))
    return text


NAME_WIDTH = 13
"""Cells of a name before its row (a longer one is cut with an ellipsis, as beside the talk-share bars),
so that the rows of beats start in one column and never run under the charts."""


class BeatTimeline(Widget):
    """Renders `promptdesk.core.experiments.metrics.timeline` of the events it holds; names are shown literally."""

    DEFAULT_CSS = """
    BeatTimeline { height: auto; padding: 0 1; }
    BeatTimeline.-hidden { display: none; }
    """

    def __init__(self, names: dict[str, str], events: list[BaseEvent] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.names = names
        self.events: list[BaseEvent] = list(events or [])
        self._last_beat = max((e.beat for e in self.events if e.beat is not None), default=-1)
        self.live = False
        """Fed as a scene plays (`extend`): when its beats outrun the width, the latest ones are shown."""

    def extend(self, events: list[BaseEvent]) -> None:
        """Add newly arrived events and redraw (the live stage calls this per batch). Hidden, it only
        keeps them: showing it lays it out and draws it anew, so no layout pass is asked for now.

        Only what `timeline` reads is kept (the start, turns, failures, and each event that raises
        the highest beat): a long scene's thoughts and deltas are not held twice."""
        self.live = True
        for event in events:
            beat = -1 if event.beat is None else event.beat
            if event.type in ("start", "system") or isinstance(event, SpeakEvent) or beat > self._last_beat:
                self.events.append(event)
                self._last_beat = max(self._last_beat, beat)
        if self.display:
            self.refresh(layout=True)

    def render(self) -> Text:
        rows = timeline(self.events) if self.events else {slug: [] for slug in self.names}
        width = min(NAME_WIDTH, max((cell_len(self.names.get(s, s)) for s in rows), default=0)) + 1
        room, beats = self.content_region.width - width, max(map(len, rows.values()), default=0)
        skip = beats - (room - 1) if self.live and room > 1 and beats > room else 0
        text = Text(no_wrap=True, overflow="crop")
        for slug, states in rows.items():
            name = self.names.get(slug, slug)
            name = fit_name(name, NAME_WIDTH, self.names.values())
            text.append(set_cell_size(name, width), Style(bold=True))
            if skip:
                text.append("…", Style(dim=True))
            for state in states[skip:]:
                glyph, colour = GLYPHS.get(state, (" ", "default"))
                text.append(glyph, Style(color=colour) if state else None)
            text.append("\n")
        text.append_text(legend())
        if skip:
            text.append(f" · beats {skip} to {beats - 1} (… the {skip} before)", Style(dim=True))
        return text

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(timeline(self.events) if self.events else self.names) + 1
