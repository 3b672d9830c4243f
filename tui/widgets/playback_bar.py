"""Replay's position bar: play state, speed, time and event counters, and a clickable scrub bar."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class PlaybackBar(Widget):
    """Shows where a replay is; a click on the bar scrubs to that point."""

    DEFAULT_CSS = """
    PlaybackBar { height: 2; padding: 0 1; }
    """

    status: reactive[str] = reactive("")
    """The first line: play state, speed, time and event counters."""
    fraction: reactive[float] = reactive(0.0)
    """How far through the run the playhead is, 0 to 1."""

    class Scrubbed(Message):
        """The operator clicked the bar: seek to `fraction` (0 to 1) of the run (a click on the
        last cell reaches the end)."""

        def __init__(self, fraction: float) -> None:
            super().__init__()
            self.fraction = fraction
            """Where to seek, as a fraction of the run."""

    def render(self) -> Text:
        width = max(10, self.content_size.width)
        filled = round(self.fraction * width)
        text = Text(self.status + "\n", no_wrap=True, overflow="ellipsis")
        text.append("█" * filled, Style(bold=True))
        text.append("░" * (width - filled), Style(dim=True))
        return text

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and offset.y == 1 and self.content_size.width:
            self.post_message(self.Scrubbed(max(0.0, min(1.0, (offset.x + 1) / self.content_size.width))))
