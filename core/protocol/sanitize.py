"""Untrusted text made safe for a terminal: no escape sequences, no control characters.

Everything an actor, a character file or a scene file says passes through `strip_controls`
before it reaches a terminal or a widget (ESC/CSI/OSC sequences such as `ESC[2J` or OSC 52,
C0 controls except newline and tab, and C1 controls); `html_text` does the same for a report's
page, and escapes what is left.
"""

from __future__ import annotations

import re
from html import escape

from promptdesk.core.protocol.lookalikes import without_bidi

_SEQUENCES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"   # OSC ... BEL / ST
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"       # DCS, PM, APC, SOS ... ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"            # CSI
    r"|\x9b[0-?]*[ -/]*[@-~]?"              # 8-bit CSI
    r"|\x9d[^\x07\x9c]*[\x07\x9c]?"         # 8-bit OSC
    r"|\x1b[ -/]*[0-~]?"                    # other ESC sequences
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """Remove terminal escape sequences and control characters; keep newlines and tabs."""
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


def file_text(text: str) -> str:
    """`strip_controls`, and without explicit direction controls (an override a model left open shows the
    rest of its line reversed in an editor or a Markdown view): what a run folder's transcripts, notes
    and journals hold, as the HTML report and the routed lines do."""
    return without_bidi(strip_controls(text))


LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A surrogate code point on its own: valid in a Python string, not encodable as UTF-8."""


def mend(text: str) -> str:
    """Replace lone surrogates (what a model's `\\ud800` escape decodes to) with U+FFFD, as a UTF-8
    decoder does with ill-formed input: such text cannot be encoded, so it could be neither sent
    back to a model nor shown, and one stray escape would poison every later request."""
    return LONE_SURROGATE.sub("\ufffd", text)


def html_text(text: object) -> str:
    """Text made inert for HTML (element content and attribute values alike): escaped, quotes
    included, without escape sequences, control characters (invalid in an HTML page) or explicit
    direction controls (one left open would show the rest of its paragraph reversed)."""
    return escape(without_bidi(strip_controls(str(text))), quote=True)
