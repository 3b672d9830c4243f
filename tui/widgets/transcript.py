"""The live transcript: a `RichLog` (markup off) that lays out role-tagged lines in batches."""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text
from textual.widgets import RichLog

from tui.render import ROLES, Line


class Transcript(RichLog):
    """Everything said aloud, in order: speech, world events, notes, system lines.

    Lines are `tui.render.Line`s; each piece's role is a component class (`transcript--tone`, ...)
    so the colours come from the theme. Lines are kept so that a theme switch can restyle them.
    Text is always written as `rich.text.Text`, so nothing in it is ever read as markup.
    """

    COMPONENT_CLASSES = {f"transcript--{role}" for role in ROLES}

    DEFAULT_CSS = """
    Transcript { height: 1fr; scrollbar-size-vertical: 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, min_width=10, **kwargs)
        self.entries: list[Line] = []
        """Every line written so far, unstyled (what a theme switch re-renders)."""
        self._styles: dict[str, Style] | None = None

    def add(self, lines: Iterable[Line]) -> None:
        """Append lines, scrolling to the end once per batch (not once per line)."""
        styles = self.styles_by_role()
        wrote = False
        for line in lines:
            self.entries.append(line)
            self.write(self._text(line, styles), scroll_end=False)
            wrote = True
        if wrote and self.auto_scroll:
            self.scroll_end(animate=False, immediate=False, x_axis=False)

    def plain_lines(self) -> list[str]:
        """The transcript as plain text, one string per line written."""
        return [line.plain for line in self.entries]

    def styles_by_role(self) -> dict[str, Style]:
        """The active theme's style for every role (cached until the styles change)."""
        if self._styles is None:
            self._styles = {role: self.get_component_rich_style(f"transcript--{role}", partial=True)
                            for role in ROLES}
        return self._styles

    def notify_style_update(self) -> None:
        """Re-render the kept lines when the theme changed a role's style (not on focus or hover)."""
        super().notify_style_update()
        old, self._styles = self._styles, None
        if old is not None and self.is_mounted and old != self.styles_by_role():
            entries, self.entries = self.entries, []
            self.clear()
            self.add(entries)

    @staticmethod
    def _text(line: Line, styles: dict[str, Style]) -> Text:
        text = Text(no_wrap=False)
        for piece, role in line.pieces:
            text.append(piece, styles.get(role))
        return text
