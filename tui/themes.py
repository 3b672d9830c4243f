"""The console's themes: a `themes/<name>.tcss` stylesheet paired with a Textual colour theme.

Exactly one theme stylesheet is loaded at a time. Switching swaps that file in the app's
stylesheet and sets the paired Textual theme, which re-applies every style on every screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import App
from textual.css.stylesheet import Stylesheet

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
    css = theme_css(theme)
    if css is not None:
        sheet.add_source(css, read_from=(str(theme.path), ""))
    if app.theme != theme.textual_theme:
        app.theme = theme.textual_theme
    else:
        app.refresh_css(animate=False)


_CSS: dict[str, str | None] = {}


def theme_css(theme: ConsoleTheme) -> str | None:
    """A theme's stylesheet, read once (None when the file is missing)."""
    if theme.name not in _CSS:
        _CSS[theme.name] = theme.path.read_text(encoding="utf-8") if theme.path.is_file() else None
    return _CSS[theme.name]


class ParsedRules:
    """The stylesheet's rules as parsed for each set of sources and colour variables.

    Textual parses every stylesheet of the app again, from its text, whenever the theme changes (the
    colours are substituted as it parses). Switching back and forth between two themes parses the same
    texts with the same colours again and again: the rules parsed for a theme are kept here and put
    back as they were. A source added since (a widget shown for the first time) parses anew."""

    def __init__(self) -> None:
        self._parsed: dict[int, tuple[list, dict]] = {}

    @staticmethod
    def key(variables: dict[str, str], sources: dict) -> int:
        return hash((tuple(sorted(variables.items())), tuple((where, s.content) for where, s in sources.items())))

    def prepare(self, app: App, name: str) -> None:
        """Parse, ahead of the switch, the rules the app will need once theme `name` is applied (with the
        stylesheets loaded now): the first switch to it then parses nothing either."""
        theme, sheet = THEMES[name], app.stylesheet
        colours = app.get_theme(theme.textual_theme)
        css = theme_css(theme)
        if colours is None or css is None:
            return
        variables = {**app.get_theme_variable_defaults(), **colours.to_color_system().generate(), **colours.variables}
        sources = {where: source for where, source in sheet.source.items()
                   if where not in {(str(t.path), "") for t in THEMES.values()}}
        ahead = Stylesheet(variables=variables)
        for where, source in sources.items():
            ahead.add_source(source.content, read_from=where, is_default_css=source.is_defaults,
                             tie_breaker=source.tie_breaker, scope=source.scope)
        ahead.add_source(css, read_from=(str(theme.path), ""))
        key = self.key(variables, ahead.source)
        if key not in self._parsed:
            ahead.parse()
            self._parsed[key] = (ahead.rules, dict(ahead.source))

    def reparse(self, sheet: Stylesheet) -> None:
        """`sheet.reparse()`, or the rules it gave for the same sources and variables."""
        key = self.key(sheet._variables, sheet.source)
        kept = self._parsed.get(key)
        if kept is None:
            sheet.reparse()
            self._parsed[key] = (sheet.rules, dict(sheet.source))
            return
        sheet._rules, sheet.source = kept[0], dict(kept[1])
        sheet._rules_map = None
        sheet._require_parse = False
