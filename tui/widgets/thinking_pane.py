"""One actor's private thinking: finished thoughts in a log, the thought being streamed below it."""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import RichLog, Static

from tui.render import safe

STREAM_TAIL = 240
"""How much of a thought being streamed is shown (its most recent characters)."""


class ThinkingPane(Vertical):
    """The `<thinking>` of one actor, plainly marked PRIVATE: it is shown here and routed nowhere."""

    DEFAULT_CSS = """
    ThinkingPane { border: round $secondary; height: 1fr; min-height: 4; }
    ThinkingPane > RichLog { height: 1fr; background: transparent; scrollbar-size-vertical: 1; }
    ThinkingPane > .stream { height: auto; max-height: 3; color: $text-muted; text-style: italic; }
    """

    def __init__(self, slug: str, name: str, speaker_role: str = "speaker-0") -> None:
        super().__init__(id=f"thinking-{slug}", classes=speaker_role)
        self.slug = slug
        self.actor_name = safe(name)
        self.thoughts: list[str] = []
        """Every finished thought shown so far (plain text)."""
        self._beat: int | None = None
        self._stream = ""

    def compose(self) -> ComposeResult:
        yield RichLog(wrap=True, markup=False, highlight=False, min_width=10)
        yield Static(classes="stream", markup=False)

    def on_mount(self) -> None:
        self.border_title = Content(f"PRIVATE · {self.actor_name}")
        self.border_subtitle = Content("thinking, never routed")

    def add_thoughts(self, thoughts: Iterable[tuple[int | None, str]]) -> None:
        """Append finished thoughts (beat, text) and clear the stream line."""
        log = self.query_one(RichLog)
        wrote = False
        for beat, text in thoughts:
            if beat is not None and beat != self._beat:
                self._beat = beat
                log.write(Text(f"· beat {beat} ·", style=Style(dim=True)), scroll_end=False)
            clean = safe(text)
            self.thoughts.append(clean)
            log.write(Text(clean, style=Style(italic=True)), scroll_end=False)
            wrote = True
        if wrote:
            log.scroll_end(animate=False, immediate=False, x_axis=False)
        self.end_stream()

    def stream(self, fragment: str) -> None:
        """Show more of the thought the actor is writing right now."""
        self._stream += safe(fragment)
        tail = self._stream[-STREAM_TAIL:]
        self.query_one(".stream", Static).update(Content("… " + tail.lstrip()))

    def end_stream(self) -> None:
        """Forget the thought being streamed (it was finished, corrected or abandoned)."""
        if self._stream:
            self._stream = ""
            self.query_one(".stream", Static).update(Content(""))

    def clear(self) -> None:
        """Empty the pane (replay seeks rebuild it from the start)."""
        self.query_one(RichLog).clear()
        self.thoughts.clear()
        self._beat = None
        self.end_stream()
