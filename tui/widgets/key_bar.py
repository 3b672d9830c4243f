"""The key bar at the bottom of every screen: the keys that can act now, on one line that fits.

Textual's `Footer` is a row of widgets, one per key, cut wherever the terminal ends (mid-word at 60
columns, the last keys gone) and composed again, widget by widget, whenever the keys change. This is
one line of text drawn from the screen's active bindings: it takes the first of these forms that fits
the width, so that a key is shown whole or not at all and the last keys (`t Theme`, `q Quit`) stay:

1. every description, two spaces apart, then `^p palette` at the right;
2. one space apart;
3. the short descriptions (`SHORT`: `e Event` for `e World event`);
4. without the palette key (`ctrl+p` still opens it; the help lists it);
5. the longest descriptions dropped, one at a time, until it fits (never the first key's, nor the
   last two's: quit and the theme).

A click on a key presses it, as on Textual's footer.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widget import Widget

SHORT = {"World event": "Event", "Inject suggestion": "Inject", "New scene": "New", "Keys": "Keys"}
"""Shorter descriptions for a narrow terminal (the others are short already)."""
PALETTE = "^p palette"


@dataclass(frozen=True)
class Entry:
    """One key (or one group of keys, `+-`) as the bar shows it."""

    keys: str
    description: str
    press: str
    """The key a click presses."""
    enabled: bool = True

    def text(self, short: bool, bare: bool = False) -> str:
        """`keys description` (or the keys alone)."""
        if bare or not self.description:
            return self.keys
        return f"{self.keys} {SHORT.get(self.description, self.description) if short else self.description}"


FORMS = ((False, "  ", True), (False, " ", True), (True, " ", True), (True, " ", False))
"""(short descriptions, separator, palette key shown), in the order tried before keys lose their words."""


def bare_where_needed(entries: list[Entry], width: int) -> list[str]:
    """The entries' texts with the longest descriptions dropped, one at a time, until the line fits: never
    the first key's or the last two's (quit and the theme, wherever they come)."""
    texts = [entry.text(True) for entry in entries]
    middle = sorted(range(1, max(1, len(entries) - 2)), key=lambda n: -len(texts[n]))
    for n in middle:
        if len(" " + " ".join(texts)) <= width:
            break
        texts[n] = entries[n].keys
    return texts


class KeyBar(Widget):
    """The screen's keys that can act now, on one line that fits (see the module)."""

    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description", "key-bar--palette"}
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: 1; width: 1fr; background: $footer-background; color: $footer-foreground; }
    KeyBar > .key-bar--key { color: $footer-key-foreground; background: $footer-key-background; text-style: bold; }
    KeyBar > .key-bar--description { color: $footer-description-foreground; }
    KeyBar > .key-bar--palette { color: $footer-description-foreground; }
    """
    ALLOW_SELECT = False

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._spans: list[tuple[int, int, str]] = []
        self._entries: tuple[list[Entry], bool] | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: object) -> None:
        """The screen's keys changed (a control became available, the focus moved): read them again."""
        self._entries = None
        self.refresh()

    def keys(self) -> tuple[list[Entry], bool]:
        """The entries, and whether the palette key is active: read from the screen's bindings once per
        change of them (reading them asks every binding whether it can act)."""
        if self._entries is None:
            active = self.screen.active_bindings
            palette = self.app.ENABLE_COMMAND_PALETTE and self.app.COMMAND_PALETTE_BINDING in active
            self._entries = (self.entries(active), palette)
        return self._entries

    def entries(self, active: dict) -> list[Entry]:
        """The keys to show, as Textual's footer lists them: one per action, a group's keys together."""
        shown: dict[str, tuple[Binding, bool]] = {}
        for _node, binding, enabled, _tooltip in active.values():
            if binding.show:
                shown.setdefault(binding.action, (binding, enabled))
        quits = lambda action: action.rpartition(".")[2] == "quit"  # noqa: E731 - `quit` or `app.quit`
        if not any(quits(action) for action in shown):  # `q` is typed where the focus is (a field, the scene
            # list): `ctrl+q` still quits, and the bar says so
            shown.update({b.action: (b, e) for _n, b, e, _t in active.values() if quits(b.action)})
        entries: list[Entry] = []
        for group, members in groupby(shown.values(), lambda item: item[0].group):
            members = list(members)
            if group is not None and len(members) > 1:
                keys = "".join(self.app.get_key_display(binding) for binding, _ in members)
                entries.append(Entry(keys, group.description, members[0][0].key, any(e for _, e in members)))
            else:
                entries += [Entry(self.app.get_key_display(binding), binding.description, binding.key, enabled)
                            for binding, enabled in members]
        return entries

    def render(self) -> Text:
        (entries, palette), width = self.keys(), self.content_size.width
        for short, gap, with_palette in FORMS:
            texts = [entry.text(short) for entry in entries]
            used = len(" " + gap.join(texts)) + ((len(PALETTE) + 3) if with_palette and palette else 0)
            if used <= width:
                return self._draw(entries, texts, gap, with_palette and palette, width)
        return self._draw(entries, bare_where_needed(entries, width), " ", False, width)

    def _draw(self, entries: list[Entry], texts: list[str], gap: str, palette: bool, width: int) -> Text:
        key, description = self.get_component_rich_style("key-bar--key"), \
            self.get_component_rich_style("key-bar--description")
        line, spans = Text(" ", no_wrap=True, overflow="crop"), []
        for n, (entry, text) in enumerate(zip(entries, texts)):
            if n:
                line.append(gap)
            start = len(line)
            dim = Style(dim=True) if not entry.enabled else Style()
            line.append(entry.keys, key + dim)
            line.append(text[len(entry.keys):], description + dim)
            spans.append((start, len(line), entry.press))
        if palette and len(line) + len(PALETTE) + 3 <= width:
            line.append(" " * (width - len(line) - len(PALETTE) - 2))
            start = len(line)
            line.append("▏", self.get_component_rich_style("key-bar--palette") + Style(dim=True))
            line.append(f"{PALETTE} ", self.get_component_rich_style("key-bar--palette"))
            spans.append((start, len(line), self.app.COMMAND_PALETTE_BINDING))
        self._spans = spans
        return line

    def on_click(self, event: events.Click) -> None:
        """Press the key clicked."""
        for start, end, key in self._spans:
            if start <= event.x < end:
                event.stop()
                self.app.simulate_key(key)
                return
