"""The console's workarounds for the pinned Textual's defects (`promptdesk.tui.textual_fixes`)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from textual._styles_cache import StylesCache
from textual.color import Color

from promptdesk.tui import textual_fixes
from promptdesk.tui.app import create_app

FIXTURE = Path(__file__).parent / "fixtures" / "replay-run"


def test_a_widgets_styles_cache_is_not_kept_by_the_background_colours_cache():
    """A widget's styles cache (with the lines it rendered) is freed with its widget, once the console's
    workarounds are applied: the colours' cache does not key on it. Unfixed, this fails: the cache
    keeps the instance."""
    create_app(replay=FIXTURE)  # the console applies its workarounds as it is made
    cache = StylesCache()
    cache.get_inner_outer(Color(1, 2, 3), Color(4, 5, 6))
    ref = weakref.ref(cache)
    del cache
    gc.collect()
    assert ref() is None


def test_the_backgrounds_are_those_textual_computes():
    base, background = Color(10, 20, 30), Color(200, 100, 50, 0.5)
    inner, outer = textual_fixes.inner_outer(base, background)
    assert inner.background == base + background and outer.background == base


def test_a_fixed_textual_is_left_alone():
    """Only an `lru_cache` over a plain function used as a method is replaced; applying twice, or to
    a class whose method is already static, changes nothing."""
    textual_fixes.apply()
    applied = StylesCache.__dict__["get_inner_outer"]
    textual_fixes.apply()
    assert StylesCache.__dict__["get_inner_outer"] is applied
    assert not textual_fixes.caches_instances(applied) and not textual_fixes.caches_instances(len)
    assert textual_fixes.caches_instances(__import__("functools").lru_cache(4)(lambda self, x: x))
