"""Workarounds for defects of the Textual version the console pins, applied as the console starts.

Each one checks that the defect is there before it changes anything (a later Textual that fixed it
is left alone), and each has its test (`tests/tui/test_textual_fixes.py`).

- **Closed screens' rendered lines stayed in memory.** `StylesCache.get_inner_outer` is cached with
  `functools.lru_cache` as an instance method, so its cache keys hold every widget's styles cache,
  with the lines it rendered, until 1,024 newer ones push it out. Each screen opened and closed (a
  replay, a dialog, the wizard) left its widgets' caches behind: about 15,000 objects per replay of
  The Apology, which every full garbage collection then walked, so a key that happened to trigger
  one got slower the longer the console had been open (on the console benchmark's replay key, the
  collection grew from 21 ms to 54 ms over six replays). What it computes depends on its two colours
  only: the same function is cached on those alone.
- **An escape sequence inside a paste became key presses.** The terminal parser, in a bracketed
  paste, read an ESC as the start of a key's sequence and, not finding one, sent what followed it as
  key presses, before the paste: a coloured line copied from a terminal and pasted into the note
  field could send the note (`\r`), open the quit dialog (`q`) and answer it (`y`). Escape sequences
  are taken out of a paste before the parser reads it (`PasteFilter`); the rest stays pasted text.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterable

from textual._styles_cache import StylesCache
from textual._xterm_parser import XTermParser
from textual.color import Color
from textual.events import Key
from textual.style import Style

from promptdesk.core.protocol.sanitize import strip_controls

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
_LINE_BREAKS = re.compile(r"(\r\n|\r|\n)")


@functools.lru_cache(1024)
def inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    """The inner and outer background styles of a widget: what `get_inner_outer` computes."""
    return Style(background=base_background + background), Style(background=base_background)


def caches_instances(method: object) -> bool:
    """Whether a class attribute is an `lru_cache` over a plain function called as a method (its
    cache then keys on, and keeps, every instance it was called on)."""
    return callable(getattr(method, "cache_info", None)) and inspect.isfunction(getattr(method, "__wrapped__", None))


def without_escapes(pasted: str) -> str:
    """Pasted text without its escape sequences and control characters; its line breaks kept."""
    return "".join(part if _LINE_BREAKS.fullmatch(part) else strip_controls(part)
                   for part in _LINE_BREAKS.split(pasted))


class PasteFilter:
    """What the terminal sends, each bracketed paste's escape sequences taken out. A read that ends
    inside a paste keeps back what may begin its closing marker, until the next read."""

    def __init__(self) -> None:
        self.in_paste = False
        self.held = ""

    def __call__(self, data: str) -> str:
        text, self.held, out = self.held + data, "", []
        while text:
            if not self.in_paste:
                start = text.find(PASTE_START)
                if start < 0:
                    out.append(text)
                    break
                out.append(text[:start + len(PASTE_START)])
                text, self.in_paste = text[start + len(PASTE_START):], True
                continue
            end = text.find(PASTE_END)
            if end < 0:
                keep = next((n for n in range(min(len(text), len(PASTE_END) - 1), 0, -1)
                             if PASTE_END.startswith(text[-n:])), 0)
                body, self.held = text[:len(text) - keep], text[len(text) - keep:]
                out.append(without_escapes(body))
                break
            out.append(without_escapes(text[:end]) + PASTE_END)
            text, self.in_paste = text[end + len(PASTE_END):], False
        return "".join(out)


def paste_safe(feed: Callable[[XTermParser, str], Iterable]) -> Callable[[XTermParser, str], Iterable]:
    """The parser's `feed`, each parser with its own `PasteFilter` in front of it (a read left empty by
    the filter is not fed: empty, it would tell the parser that input has ended)."""
    @functools.wraps(feed)
    def safe_feed(self: XTermParser, data: str) -> Iterable:
        paste_filter = self.__dict__.setdefault("_paste_filter", PasteFilter())
        filtered = paste_filter(data)
        return feed(self, filtered) if filtered or not data else iter(())
    safe_feed.paste_safe = True  # type: ignore[attr-defined]
    return safe_feed


def escapes_in_a_paste_act_as_keys() -> bool:
    """Whether the parser sends what follows an ESC inside a bracketed paste as key presses."""
    return any(isinstance(event, Key) for event in XTermParser().feed(f"{PASTE_START}a\x1b[0mq{PASTE_END}"))


def apply() -> None:
    """Apply every workaround whose defect is present (idempotent)."""
    if caches_instances(StylesCache.__dict__.get("get_inner_outer")):
        StylesCache.get_inner_outer = staticmethod(inner_outer)  # type: ignore[assignment,method-assign]
    if not getattr(XTermParser.feed, "paste_safe", False) and escapes_in_a_paste_act_as_keys():
        XTermParser.feed = paste_safe(XTermParser.feed)  # type: ignore[method-assign]
