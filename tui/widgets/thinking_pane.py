"""One actor's private thinking: finished thoughts in a log, the thought being streamed below it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Resize
from textual.content import Content
from textual.widgets import Static

from promptdesk.tui.lines import fit_name, safe
from promptdesk.tui.widgets.wrapped_log import WrappedLog
from promptdesk.tui.wrap import Run

THOUGHT = Style(italic=True)
BORDER_TEXT = 6
"""Cells of a pane's width that a border title cannot use: the corners and `─ ` ` ─` around it."""
STREAM_TAIL = 200
"""How much of a thought being streamed is shown (its most recent characters)."""


class ThoughtLog(WrappedLog):
    """Finished thoughts, as `(kind, text)` entries: `beat` headings (in the theme's colour for them)
    and `thought`s."""

    COMPONENT_CLASSES = {"thought-log--beat"}
    DEFAULT_CSS = """
    ThoughtLog > .thought-log--beat { color: $text-muted; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._beat_style: Style | None = None

    def runs(self, entry: tuple[str, str]) -> Sequence[Run]:
        kind, text = entry
        if kind != "beat":
            return ((text, THOUGHT),)
        if self._beat_style is None:
            self._beat_style = self.get_component_rich_style("thought-log--beat", partial=True)
        return ((text, self._beat_style),)

    def texts(self, entry: tuple[str, str]) -> Sequence[str]:
        return (entry[1],)

    def notify_style_update(self) -> None:
        """The theme may have changed: look the heading's style up again."""
        super().notify_style_update()
        self._beat_style = None


class ThinkingPane(Vertical):
    """The `<thinking>` of one actor, plainly marked PRIVATE: it is shown here and routed nowhere."""

    DEFAULT_CSS = """
    ThinkingPane { border: round $secondary; height: 1fr; min-height: 4; }
    ThinkingPane > ThoughtLog { height: 1fr; background: transparent; }
    ThinkingPane > .stream { height: 2; color: $text-muted; text-style: italic; display: none; }
    ThinkingPane > .stream.-active { display: block; }
    """

    def __init__(self, slug: str, name: str, speaker_role: str = "speaker-0", longest: int = 0,
                 cast: Sequence[str] = ()) -> None:
        super().__init__(id=f"thinking-{slug}", classes=speaker_role)
        self.slug = slug
        self.actor_name = safe(name)
        self.longest = max(longest, cell_len(self.actor_name))
        """The longest name in the cast: every pane of the stage picks the same form of title by it."""
        self.cast = tuple(safe(other) for other in cast)
        """The cast's names: a title cut short never reads as another's (`promptdesk.tui.lines.fit_name`)."""
        self._room = 0
        self.thoughts: list[str] = []
        """Every finished thought shown so far (plain text)."""
        self._beat: int | None = None
        self._stream = ""

    def compose(self) -> ComposeResult:
        yield ThoughtLog()
        yield Static(classes="stream", markup=False)

    def on_resize(self, event: Resize) -> None:
        """`PRIVATE · name` on top when the cast's longest name fits so (every pane of the stage reads the
        same way); in narrower panes the name on top (cut with `…` when even it does not fit), PRIVATE below."""
        self._room = event.size.width - BORDER_TEXT
        if self.wide:
            self.border_title = Content(f"PRIVATE · {self.actor_name}")
            self.border_subtitle = Content(self.fitted_subtitle)
        else:
            name = fit_name(self.actor_name, self._room, self.cast)
            self.border_title, self.border_subtitle = Content(name), Content(self.fitted_subtitle)

    @property
    def wide(self) -> bool:
        """True when the title says `PRIVATE · name` (the cast's longest name fits so)."""
        return len("PRIVATE · ") + self.longest <= self._room

    @property
    def fitted_subtitle(self) -> str:
        """What the pane says below, whole. Wide: its subtitle when it fits ('' when it does not: the title
        says PRIVATE). Narrow: PRIVATE, and `no turn yet` after it while its actor has not thought, when
        that fits."""
        if self.wide:
            return self.subtitle if len(self.subtitle) <= self._room else ""
        waiting = f"PRIVATE · {self.subtitle}"
        return waiting if not (self.thoughts or self._stream) and len(waiting) <= self._room else "PRIVATE"

    @property
    def subtitle(self) -> str:
        """What the wide pane says below: that no actor sees it, or that its actor has not thought yet."""
        return "only you see this" if self.thoughts or self._stream else "no turn yet"

    def add_thoughts(self, thoughts: Iterable[tuple[int | None, str]]) -> None:
        """Append finished thoughts (beat, text) and clear the stream line."""
        entries: list[tuple[str, str]] = []
        for beat, thought in thoughts:
            if beat is not None and beat != self._beat:
                self._beat = beat
                entries.append(("beat", f"· beat {beat} ·"))
            clean = safe(thought)
            self.thoughts.append(clean)
            entries.append(("thought", clean))
        self.query_one(ThoughtLog).add(entries)
        self.end_stream()
        self._retitle()

    def stream(self, fragment: str) -> None:
        """Show more of the thought the actor is writing right now."""
        self._stream += safe(fragment)
        tail = " ".join(self._stream[-STREAM_TAIL:].split())
        line = self.query_one(".stream", Static)
        line.set_class(True, "-active")
        line.update(Content("… " + tail), layout=False)
        self._retitle()

    def end_stream(self) -> None:
        """Forget the thought being streamed (it was finished, corrected or abandoned)."""
        if self._stream:
            self._stream = ""
            line = self.query_one(".stream", Static)
            line.set_class(False, "-active")
            line.update(Content(""), layout=False)

    def _retitle(self) -> None:
        """Say below the pane whether its actor has thought yet (a repaint only when that changes)."""
        shown = str(self.border_subtitle) if self.border_subtitle else ""
        if self._room and shown != self.fitted_subtitle:
            self.border_subtitle = Content(self.fitted_subtitle)

    def clear(self) -> None:
        """Empty the pane (replay seeks rebuild it from the start)."""
        self.query_one(ThoughtLog).clear()
        self.thoughts.clear()
        self._beat = None
        self.end_stream()
        self._retitle()
