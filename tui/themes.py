"""The console's themes: a `themes/<name>.tcss` stylesheet paired with a Textual colour theme.

Exactly one theme stylesheet is loaded at a time. Switching swaps that file in the app's
stylesheet and sets the paired Textual theme, which re-applies every style on every screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import App

from promptdesk import resources


@dataclass(frozen=True)
class ConsoleTheme:
    """One theme: its stylesheet and the Textual theme whose colour variables it builds on."""

    name: str
    textual_theme: str

    @property
    def path(self) -> Path:
        """The `.tcss` file that holds this theme's styles."""
        return resources.theme_file(self.name)


THEMES = {"dark": ConsoleTheme("dark", "textual-dark"), "light": ConsoleTheme("light", "textual-light")}
"""Every theme; `promptdesk.resources.CONSOLE_THEMES` names their stylesheets (checked before the console opens)."""
ORDER = tuple(THEMES)


def next_theme(name: str) -> str:
    """The theme after `name`, cycling."""
    return ORDER[(ORDER.index(name) + 1) % len(ORDER)] if name in ORDER else ORDER[0]


def apply_theme(app: App, name: str) -> None:
    """Make `name` the active theme: swap its stylesheet in and set its Textual colours."""
    theme = THEMES[name]
    sheet = app.stylesheet
    for other in THEMES.values():
        sheet.source.pop((str(other.path), ""), None)
    if theme.path.is_file():
        sheet.read(theme.path)
    if app.theme != theme.textual_theme:
        app.theme = theme.textual_theme
    else:
        app.refresh_css(animate=False)
