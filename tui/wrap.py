"""Word wrap for styled runs of plain text, straight to Textual strips (or just a row count).

Rich's general layout engine costs about 0.1 ms a line; the console lays out thousands of lines
that are only ever plain text in a few styles, so it wraps them itself: greedy, by words, by
terminal cells (wide characters count double), hard breaks on newlines, over-long words split.
Text whose every character is one cell wide and printable (ASCII, and the Latin, Greek, Cyrillic,
punctuation, arrows and box drawing the stage's own lines use) takes a fast path that finds break
points once per row, not once per word; it lays out exactly as the general path does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rich.cells import cell_len, chop_cells, get_character_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

Run = tuple[str, Style | None]
"""A run of plain text (already stripped of control sequences) and its style."""

_TOKENS = re.compile(r"\n|[^\S\n]+|[^\s]+")
_NARROW_RANGES = ((0x20, 0x7E), (0xA0, 0x52F), (0x2010, 0x205E), (0x2190, 0x23FF), (0x2500, 0x27BF))
NARROW = frozenset(char for first, last in _NARROW_RANGES for char in map(chr, range(first, last + 1))
                   if char == " " or (char.isprintable() and not char.isspace() and get_character_cell_size(char) == 1))
"""Characters laid out by the fast path: one cell wide, printable, and no space but " " (the only break)."""


def narrow(text: str) -> bool:
    """True when every character of `text` is in `NARROW` (the fast path lays it out)."""
    return (text.isascii() and text.isprintable()) or NARROW.issuperset(text)


class _Rows:
    """Counts the rows a text wraps to (the layout rules, without building anything)."""

    def __init__(self, width: int) -> None:
        self.width = max(1, width)
        self.rows = 0
        self.used = 0

    def push(self, text: str, style: Style | None, width: int) -> None:
        self.used += width

    def break_line(self) -> None:
        self.rows += 1
        self.used = 0

    def add_narrow(self, text: str, style: Style | None) -> None:
        """Text of `NARROW` characters only: one cell per character, one `rfind` per row."""
        pos, end = 0, len(text)
        while pos < end:
            if self.used == 0:
                while pos < end and text[pos] == " ":
                    pos += 1
                if pos == end:
                    return
            room = self.width - self.used
            if end - pos <= room:
                self.push(text[pos:], style, end - pos)
                return
            cut = text.rfind(" ", pos, pos + room + 1)
            if cut > pos:
                self.push(text[pos:cut], style, cut - pos)
                self.break_line()
                pos = cut + 1
            elif cut == pos or self.used:
                self.break_line()
                pos += cut == pos
            else:
                self.push(text[pos:pos + room], style, room)
                self.break_line()
                pos += room

    def add_space(self, text: str, style: Style | None) -> None:
        if self.used == 0:
            return
        width = cell_len(text)
        if self.used + width <= self.width:
            self.push(text, style, width)
        else:
            self.break_line()

    def add_word(self, text: str, style: Style | None) -> None:
        width = cell_len(text)
        if self.used + width > self.width and self.used:
            self.break_line()
        if width <= self.width:
            self.push(text, style, width)
            return
        chunks = chop_cells(text, self.width)
        for chunk in chunks[:-1]:
            self.push(chunk, style, cell_len(chunk))
            self.break_line()
        self.push(chunks[-1], style, cell_len(chunks[-1]))

    def feed(self, runs: Iterable[Run], fast: bool = True) -> None:
        """Lay the runs out (`fast=False` takes the general path for every run)."""
        for text, style in runs:
            if fast and narrow(text):
                self.add_narrow(text, style)
                continue
            for token in _TOKENS.findall(text.expandtabs(4) if "\t" in text else text):
                if token == "\n":
                    self.break_line()
                elif token[0].isspace():
                    self.add_space(token, style)
                else:
                    self.add_word(token, style)
        self.break_line()


class _Strips(_Rows):
    """The same layout, building one strip per row."""

    def __init__(self, width: int) -> None:
        super().__init__(width)
        self.done: list[Strip] = []
        self.segments: list[Segment] = []

    def push(self, text: str, style: Style | None, width: int) -> None:
        self.segments.append(Segment(text, style))
        self.used += width

    def break_line(self) -> None:
        """End the row without its trailing spaces (as many cells as they took)."""
        segments = self.segments
        while segments and not segments[-1].text.strip():
            self.used -= cell_len(segments.pop().text)
        if segments and segments[-1].text.endswith(" "):
            last = segments[-1]
            kept = last.text.rstrip(" ")
            self.used -= len(last.text) - len(kept)
            segments[-1] = Segment(kept, last.style)
        self.done.append(Strip(segments, self.used))
        self.segments, self.used = [], 0


def wrap_runs(runs: Iterable[Run], width: int, fast: bool = True) -> list[Strip]:
    """Lay styled runs out as strips at most `width` cells wide (at least one strip); `fast=False`
    never takes the fast path (what it must agree with)."""
    layout = _Strips(width)
    layout.feed(runs, fast)
    return layout.done


def count_rows(runs: Iterable[Run], width: int) -> int:
    """How many rows `wrap_runs` would make, without making them."""
    return count_text_rows([text for text, _ in runs], width)


def count_text_rows(texts: Sequence[str], width: int) -> int:
    """`count_rows` of runs with these texts (styles never change the layout)."""
    if all(map(narrow, texts)):
        return _count_narrow(texts, max(1, width))
    layout = _Rows(width)
    layout.feed((text, None) for text in texts)
    return layout.rows


def _count_narrow(texts: Sequence[str], width: int) -> int:
    """`_Rows.add_narrow` over every text, then the last row's end, in one loop of local variables
    (the console counts every line it is given, so this is the hot path)."""
    rows = used = 0
    for text in texts:
        pos, end = 0, len(text)
        while pos < end:
            if used == 0:
                while pos < end and text[pos] == " ":
                    pos += 1
                if pos == end:
                    break
            room = width - used
            if end - pos <= room:
                used += end - pos
                break
            cut = text.rfind(" ", pos, pos + room + 1)
            if cut > pos:
                pos = cut + 1
            elif cut == pos or used:
                pos += cut == pos
            else:
                pos += room
            rows, used = rows + 1, 0
    return rows + 1
