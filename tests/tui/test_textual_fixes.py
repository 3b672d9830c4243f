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


def pasted(*chunks: str) -> list:
    """What the terminal parser makes of `chunks` read one after the other (the fixes applied)."""
    from textual._xterm_parser import XTermParser

    textual_fixes.apply()
    parser = XTermParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


def test_an_escape_sequence_inside_a_paste_is_pasted_text_not_key_presses():
    """A bracketed paste holding an escape sequence (a coloured line copied from a terminal) had what
    followed the ESC turned into key presses, before the paste itself: pasted into the note field,
    `\\r q y` sent the note, opened the quit dialog and said yes. The sequence is taken out of the paste
    and the rest stays pasted text, in order."""
    from textual.events import Key, Paste

    events = pasted("\x1b[200~Lights \x1b[31mred\x1b[0m out\r\x1b]52;c;cm0=\x07qy\x1b[201~")
    assert not [e for e in events if isinstance(e, Key)], events
    assert [e.text for e in events if isinstance(e, Paste)] == ["Lights red out\rqy"]
    split = pasted("\x1b[200~one \x1b[1mtwo\x1b[2", "01~", "q")
    assert [e.text for e in split if isinstance(e, Paste)] == ["one two"]
    assert [e.key for e in split if isinstance(e, Key)] == ["q"], "keys after the paste are keys"
    only_escapes = pasted("\x1b[200~a", "\x1b[31m", "b\x1b[2", "01~", "z")
    assert [e.text for e in only_escapes if isinstance(e, Paste)] == ["ab"], "a read left empty is not the end"
    assert [e.key for e in only_escapes if isinstance(e, Key)] == ["z"]
    assert [e.key for e in pasted("\x1b[A", "x")] == ["up", "x"], "outside a paste nothing changes"
