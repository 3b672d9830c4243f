"""The live transcript: role-tagged lines in a fast-wrapping `RichLog`, coloured by the theme."""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style

from promptdesk.tui.lines import ROLES, Line
from promptdesk.tui.widgets.wrapped_log import WrappedLog
from promptdesk.tui.wrap import Run


class Transcript(WrappedLog):
    """Everything said aloud, in order: speech, world events, notes, system lines.

    Entries are `promptdesk.tui.render.Line`s; each piece's role is a component class (`transcript--tone`,
) so the colours come from the theme, and a theme switch re-styles every kept line. Text
    is laid out as plain runs: nothing in it is ever read as markup.
    """

    COMPONENT_CLASSES = {f"transcript--{role}" for role in ROLES}

    DEFAULT_CSS = """
    Transcript { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._styles: dict[str, Style] | None = None

    def add(self, entries: Sequence[Line]) -> None:
        """Append lines (kept as plain tuples of strings, which the garbage collector skips)."""
        super().add([tuple(line) for line in entries])

    def runs(self, entry: tuple[tuple[str, ...], tuple[str, ...]]) -> Sequence[Run]:
        styles = self.styles_by_role()
        texts, roles = entry
        return [(text, styles.get(role)) for text, role in zip(texts, roles)]

    def texts(self, entry: tuple[tuple[str, ...], tuple[str, ...]]) -> Sequence[str]:
        return entry[0]

    def styles_by_role(self) -> dict[str, Style]:
        """The active theme's style for every role (cached until the styles change)."""
        if self._styles is None:
            self._styles = {role: self.get_component_rich_style(f"transcript--{role}", partial=True)
                            for role in ROLES}
        return self._styles

    def notify_style_update(self) -> None:
        """The theme may have changed: look the role styles up again when the lines are redrawn."""
        super().notify_style_update()
        self._styles = None
