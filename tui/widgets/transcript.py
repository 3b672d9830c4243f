"""The live transcript: role-tagged lines in a fast-wrapping `RichLog`, coloured by the theme."""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style

from tui.render import ROLES, Line
from tui.widgets.wrapped_log import WrappedLog
from tui.wrap import Run


class Transcript(WrappedLog):
    """Everything said aloud, in order: speech, world events, notes, system lines.

    Entries are `tui.render.Line`s; each piece's role is a component class (`transcript--tone`,
    ...) so the colours come from the theme, and a theme switch re-styles every kept line. Text
    is laid out as plain runs: nothing in it is ever read as markup.
    """

    COMPONENT_CLASSES = {f"transcript--{role}" for role in ROLES}

    DEFAULT_CSS = """
    Transcript { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._styles: dict[str, Style] | None = None

    def runs(self, entry: Line) -> Sequence[Run]:
        styles = self.styles_by_role()
        return [(text, styles.get(role)) for text, role in entry.pieces]

    def styles_by_role(self) -> dict[str, Style]:
        """The active theme's style for every role (cached until the styles change)."""
        if self._styles is None:
            self._styles = {role: self.get_component_rich_style(f"transcript--{role}", partial=True)
                            for role in ROLES}
        return self._styles

    def notify_style_update(self) -> None:
        """Re-style the kept lines when the theme changed a role's style (not on focus or hover)."""
        super().notify_style_update()
        old, self._styles = self._styles, None
        if old is not None and self.is_mounted and old != self.styles_by_role():
            self.rewrap()
