"""One scrolling widget for any number of lines of plain styled text, laid out lazily.

The same Line API as Textual's `RichLog`, with two differences that keep it flat at tens of
thousands of lines: entries are wrapped by `tui.wrap` (plain runs, no Rich layout, no markup),
and only the rows on screen are ever built. Each entry costs one row count and one list slot;
a resize or a theme change just recounts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from rich.style import Style
from textual.cache import LRUCache
from textual.events import Resize
from textual.geometry import Size
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.wrap import Run, count_rows, wrap_runs


ROW_CACHE = 64
"""Entries whose rows are kept built: more than a screenful, few enough to keep the heap flat."""


class WrappedLog(ScrollView, can_focus=True):
    """A log of entries (append-only, in batches); `runs(entry)` says how an entry reads."""

    DEFAULT_CSS = """
    WrappedLog {
        background: $surface; color: $foreground; overflow-y: scroll; overflow-x: hidden;
        scrollbar-size-vertical: 1;
        &:focus { background-tint: $foreground 5%; }
    }
    """

    auto_scroll: var[bool] = var(True)
    """Follow the end of the log as entries arrive."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entries: list[Any] = []
        """Every entry added, in order."""
        self._ends: list[int] = []
        self._width = 0
        self._rows: LRUCache[int, list[Strip]] = LRUCache(ROW_CACHE)
        self._base_style: Style | None = None

    def runs(self, entry: Any) -> Sequence[Run]:
        """How one entry reads: (text, style) runs. By default an entry is its own runs."""
        return entry

    @property
    def row_count(self) -> int:
        """Rows the entries take at the current width."""
        return self._ends[-1] if self._ends else 0

    def add(self, entries: Sequence[Any]) -> None:
        """Append entries, then scroll to the end once (if following)."""
        if not entries:
            return
        self.entries.extend(entries)
        if self._width:
            self._count(entries)
        self._resized()

    def _count(self, entries: Sequence[Any]) -> None:
        total, width = self.row_count, self._width
        for entry in entries:
            total += count_rows(self.runs(entry), width)
            self._ends.append(total)

    def _resized(self) -> None:
        self.virtual_size = Size(self._width, self.row_count)
        if self.auto_scroll:
            self.scroll_end(animate=False, immediate=False, x_axis=False)
        self.refresh()

    def relayout(self) -> None:
        """Count every entry again at the current width and styles (after a resize or a theme)."""
        self._width = self.scrollable_content_region.width
        self._ends = []
        self._rows.clear()
        if self._width:
            self._count(self.entries)
        self._resized()

    def clear(self) -> None:
        """Forget every entry."""
        self.entries, self._ends = [], []
        self._rows.clear()
        self._resized()

    def plain_lines(self) -> list[str]:
        """Each entry as plain text (what a person reads, without styles)."""
        return ["".join(text for text, _ in self.runs(entry)) for entry in self.entries]

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._check_width)

    def _check_width(self) -> None:
        if self.scrollable_content_region.width != self._width:
            self.relayout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None
        self._rows.clear()

    def render_line(self, y: int) -> Strip:
        if self._base_style is None:
            self._base_style = self.rich_style
        scroll_x, scroll_y = self.scroll_offset
        width, row = self.scrollable_content_region.width, scroll_y + y
        if row >= self.row_count:
            return Strip.blank(width, self._base_style)
        index = bisect_right(self._ends, row)
        strips = self._rows.get(index)
        if strips is None:
            strips = wrap_runs(self.runs(self.entries[index]), self._width)
            self._rows[index] = strips
        first = self._ends[index - 1] if index else 0
        strip = strips[row - first] if row - first < len(strips) else Strip.blank(width)
        return strip.crop_extend(scroll_x, scroll_x + width, self._base_style).apply_style(self._base_style)
