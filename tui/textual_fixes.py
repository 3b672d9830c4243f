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
"""

from __future__ import annotations

import functools
import inspect

from textual._styles_cache import StylesCache
from textual.color import Color
from textual.style import Style


@functools.lru_cache(1024)
def inner_outer(base_background: Color, background: Color) -> tuple[Style, Style]:
    """The inner and outer background styles of a widget: what `get_inner_outer` computes."""
    return Style(background=base_background + background), Style(background=base_background)


def caches_instances(method: object) -> bool:
    """Whether a class attribute is an `lru_cache` over a plain function called as a method (its
    cache then keys on, and keeps, every instance it was called on)."""
    return callable(getattr(method, "cache_info", None)) and inspect.isfunction(getattr(method, "__wrapped__", None))


def apply() -> None:
    """Apply every workaround whose defect is present (idempotent)."""
    if caches_instances(StylesCache.__dict__.get("get_inner_outer")):
        StylesCache.get_inner_outer = staticmethod(inner_outer)  # type: ignore[assignment,method-assign]
