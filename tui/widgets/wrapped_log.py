"""A `RichLog` for plain styled text that lays lines out itself, fast, and re-wraps on resize."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.style import Style
from textual.events import Resize
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import RichLog

from tui.wrap import Run, wrap_many


class WrappedLog(RichLog):
    """Keeps its entries and wraps them with `tui.wrap` (about 30 µs a line instead of Rich's 100+).

    Entries are appended in batches with `add`; `runs(entry)` says how one entry reads as styled
    runs (subclasses map their own entry types). Nothing is ever parsed as markup. A width change
    or `rewrap()` lays every kept entry out again, so lines always fit the pane.
    """

    DEFAULT_CSS = """
    WrappedLog { scrollbar-size-vertical: 1; overflow-x: hidden; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, min_width=1, **kwargs)
        self.entries: list[Any] = []
        """Every entry added, in order (what a re-wrap lays out again)."""
        self._wrapped_at = 0
        self._base_style: Style | None = None

    def runs(self, entry: Any) -> Sequence[Run]:
        """How one entry reads: a sequence of (text, style) runs. Entries are runs by default."""
        return entry

    def add(self, entries: Sequence[Any]) -> None:
        """Append entries: wrapped at the current width, scrolled to the end once per batch."""
        if not entries:
            return
        self.entries.extend(entries)
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        if width != self._wrapped_at:
            self.rewrap()
            return
        self._append(wrap_many([self.runs(e) for e in entries], width))

    def rewrap(self) -> None:
        """Lay every entry out again at the current width (after a resize or a style change)."""
        self._wrapped_at = self.scrollable_content_region.width
        self.lines = []
        self._line_cache.clear()
        self._start_line = 0
        self._widest_line_width = 0
        if self._wrapped_at > 0:
            self._append(wrap_many([self.runs(e) for e in self.entries], self._wrapped_at))
        self.virtual_size = Size(self._widest_line_width, len(self.lines))
        self.refresh()

    def _append(self, strips: list[Strip]) -> None:
        if not strips:
            return
        self.lines.extend(strips)
        self._widest_line_width = max(self._widest_line_width, max(s.cell_length for s in strips))
        self.virtual_size = Size(self._widest_line_width, len(self.lines))
        if self.auto_scroll:
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None

    def render_line(self, y: int) -> Strip:
        """As `RichLog.render_line`, with the widget's own style looked up once, not once a line."""
        if self._base_style is None:
            self._base_style = self.rich_style
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        index = scroll_y + y
        if index >= len(self.lines):
            return Strip.blank(width, self._base_style)
        key = (index + self._start_line, scroll_x, width, self._widest_line_width)
        line = self._line_cache.get(key)
        if line is None:
            line = self.lines[index].crop_extend(scroll_x, scroll_x + width, self._base_style)
            self._line_cache[key] = line
        return line.apply_style(self._base_style)

    def on_resize(self, event: Resize) -> None:
        super().on_resize(event)
        self.call_after_refresh(self._check_width)

    def _check_width(self) -> None:
        if self.scrollable_content_region.width != self._wrapped_at:
            self.rewrap()

    def clear(self) -> WrappedLog:
        """Forget every entry and line."""
        self.entries = []
        super().clear()
        return self

    def plain_lines(self) -> list[str]:
        """Each entry as plain text (what a person reads, without styles)."""
        return ["".join(text for text, _ in self.runs(entry)) for entry in self.entries]
