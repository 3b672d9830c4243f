"""One scrolling widget for any number of lines of plain styled text, laid out lazily.

The same Line API as Textual's `RichLog`, with two differences that keep it flat at tens of
thousands of lines: entries are wrapped by `promptdesk.tui.wrap` (plain runs, no Rich layout, no markup),
and only the rows on screen are ever built. Each entry costs one row count and one list slot;
a resize or a theme change just recounts.

Selection: a mouse drag selects text (Textual's selection, by row and column of the wrapped
rows), shown in the selection colour over the text's own colours while dragging and after;
`ctrl+c` copies it (`copy_to_clipboard`, through the terminal; the screen says how much).

Scroll lock: scrolled up from the end, the view holds where it is while entries arrive, and its
last row says how many arrived ("▼ 3 new lines · end to follow", in fewer whole words where that does
not fit: "▼ 3 new · end"); `end`, or scrolling back to the bottom, follows the end again.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.events import Resize
from textual.geometry import Size
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

from promptdesk.tui.wrap import Run, count_text_rows, wrap_runs


ROW_CACHE = 64
"""Entries whose rows are kept built: more than a screenful, few enough to keep the heap flat."""
MARKER = Style(reverse=True, bold=True)


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
        self.unseen = 0
        """Entries added since the view stopped following the end (shown on its last row)."""

    def runs(self, entry: Any) -> Sequence[Run]:
        """How one entry reads: (text, style) runs. By default an entry is its own runs."""
        return entry

    def texts(self, entry: Any) -> Sequence[str]:
        """The texts of an entry's runs (all that its row count depends on)."""
        return [text for text, _ in self.runs(entry)]

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
        if self.auto_scroll and self._leaving_end():
            self.auto_scroll = False
        if not self.auto_scroll:
            self.unseen += len(entries)
        self._resized()

    def _leaving_end(self) -> bool:
        """A scroll up is being animated (a `PageUp` on its way): the view no longer follows the end."""
        return self._scroll_animating() and self.scroll_target_y < self.scroll_y

    def _scroll_animating(self) -> bool:
        return self.is_mounted and self.app.animator.is_being_animated(self, "scroll_y")

    def _count(self, entries: Sequence[Any]) -> None:
        total, width = self.row_count, self._width
        texts, ends = self.texts, self._ends
        for entry in entries:
            total += count_text_rows(texts(entry), width)
            ends.append(total)

    def _resized(self) -> None:
        """Take the new row count into account: one repaint of this widget, no layout of the screen.

        The log's own size never depends on its entries (its height is set by its container, unless
        it is `auto`), so the new virtual size is set without the screen-wide layout pass that
        Textual's `virtual_size` reactive asks for, and the scrollbar is updated in place. Following
        the end, the view scrolls there at once, so the next frame draws the new end and no frame is
        spent on the old one (while a scroll down is being animated, after the next frame). A scroll
        up being animated has already stopped the following (`add`), so it is never undone.
        """
        size = Size(self._width, self.row_count)
        if size != self.virtual_size:
            height = self.styles.height
            if height is not None and height.is_auto:
                self.virtual_size = size
            else:
                self.set_reactive(WrappedLog.virtual_size, size)
                self._scroll_update(size)
        if self.auto_scroll:
            self.scroll_end(animate=False, immediate=not self._scroll_animating(), x_axis=False)
        self.refresh()

    def relayout(self) -> None:
        """Count every entry again at the current width and styles (after a resize or a theme). Scrolled
        up, the view keeps the entry at its top there (rows wrapped anew would show other entries)."""
        top = bisect_right(self._ends, int(self.scroll_y)) if not self.auto_scroll and self._ends else None
        self._width = self.scrollable_content_region.width
        self._ends = []
        self._rows.clear()
        if self._width:
            self._count(self.entries)
        self._resized()
        if top is not None and self._width and top < len(self._ends):
            self.scroll_to(y=self._ends[top - 1] if top else 0, animate=False, immediate=True)

    def clear(self) -> None:
        """Forget every entry (and follow the end again)."""
        self.entries, self._ends = [], []
        self._rows.clear()
        self.follow()

    def follow(self) -> None:
        """Follow the end again: jump there and forget the count of unseen lines."""
        self.auto_scroll, self.unseen = True, 0
        self._resized()

    def action_scroll_end(self) -> None:
        """`end` on the log itself: follow the end again."""
        self.follow()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolling up stops following the end; reaching the bottom follows it again."""
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y:
            if not self.auto_scroll or self.unseen:
                self.auto_scroll, self.unseen = True, 0
                self.refresh()
        elif new_value < old_value:
            self.auto_scroll = False

    def plain_lines(self) -> list[str]:
        """Each entry as plain text (what a person reads, without styles)."""
        return ["".join(text for text, _ in self.runs(entry)) for entry in self.entries]

    def marker(self, width: int) -> Strip:
        """The last row while scrolled up: how many lines arrived below."""
        lines = "line" if self.unseen == 1 else "lines"
        texts = (f" ▼ {self.unseen} new {lines} · end to follow ", f" ▼ {self.unseen} new · end to follow ",
                 f" ▼ {self.unseen} new · end ", f" ▼ {self.unseen} new ", f" ▼ {self.unseen} ")
        text = next((t for t in texts if len(t) <= width), texts[-1])  # whole words, never `end to f`
        return Strip([Segment(text[:width].ljust(width), self._base_style + MARKER if self._base_style else MARKER)])

    def on_resize(self, event: Resize) -> None:
        self.call_after_refresh(self._check_width)

    def _check_width(self) -> None:
        """Count the rows again for a new width; following the end, keep the end in view (a lower pane,
        or one moved to a shorter row of panes, would otherwise hide its last rows until the next entry)."""
        if self.scrollable_content_region.width != self._width:
            self.relayout()
        elif self.auto_scroll and self.scroll_y < self.max_scroll_y:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None
        self._rows.clear()

    def render_line(self, y: int) -> Strip:
        if self._base_style is None:
            self._base_style = self.rich_style
        scroll_x, scroll_y = self.scroll_offset
        width, row = self.scrollable_content_region.width, scroll_y + y
        if self.unseen and y == self.scrollable_content_region.height - 1:
            return self.marker(width)
        if row >= self.row_count:
            return Strip.blank(width, self._base_style)
        index = bisect_right(self._ends, row)
        strips = self._rows.get(index)
        if strips is None:
            strips = wrap_runs(self.runs(self.entries[index]), self._width)
            self._rows[index] = strips
        first = self._ends[index - 1] if index else 0
        strip = strips[row - first] if row - first < len(strips) else Strip.blank(width)
        strip = strip.crop_extend(scroll_x, scroll_x + width, self._base_style).apply_style(self._base_style)
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(row)) is not None:
            strip = self._highlight(strip, *span)
        return strip.apply_offsets(scroll_x, row)

    def _highlight(self, strip: Strip, start: int, end: int) -> Strip:
        """The strip with columns `start` to `end` (-1: the end) in the selection style."""
        end = strip.cell_length if end == -1 else min(end, strip.cell_length)
        if end <= start:
            return strip
        chosen = self.screen.get_component_rich_style("screen--selection")
        marked = Style(bgcolor=chosen.bgcolor) if chosen.bgcolor is not None else Style(reverse=True)
        selected = Strip(Segment.apply_style(strip.crop(start, end), post_style=marked))
        return Strip.join([strip.crop(0, start), selected, strip.crop(end)])

    def rows_text(self) -> str:
        """Every wrapped row as plain text, one per line (what a selection's rows and columns index)."""
        width = self._width or self.scrollable_content_region.width or 80
        rows = (strip.text.rstrip() for entry in self.entries for strip in wrap_runs(self.runs(entry), width))
        return "\n".join(rows)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text (by wrapped row and column), for `ctrl+c`."""
        text = self.rows_text()
        return (selection.extract(text), "\n") if text else None

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
