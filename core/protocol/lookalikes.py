"""Characters that make text read as something it is not: invisible ones, direction changes, and
the compatibility forms of the letters and colon of the engine's own markers.

`INVISIBLE` is refused in display names outright (`promptdesk.core.characters.name_gate`); in model
text `without_bidi` drops the direction controls (an override left open shows the rest of its line
reversed), and `marker_pattern` spells a marker so that a fullwidth, mathematical, zero-width-split
or lookalike spelling of it (`ＤＩＲＥＣＴＯＲ NOTE：`, `DIRECTOR\u200bNOTE:`, `DIRЕCTOR` with a
Cyrillic `Е`: `LATIN_LOOKALIKES`) matches as the plain one does.
Every pattern is one pass of character classes: linear in the text.
"""

from __future__ import annotations

import re
import unicodedata

INVISIBLE = frozenset(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0]
    + list(range(0x200B, 0x2010))      # zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
    + list(range(0x202A, 0x202F))      # bidi embeddings and overrides, pop directional formatting
    + list(range(0x2060, 0x2065))      # word joiner, invisible operators
    + list(range(0x2066, 0x206A))      # bidi isolates
    + list(range(0x206A, 0x2070)))     # deprecated format characters
"""Code points that are invisible, or change the direction text is shown in."""

BIDI_CONTROLS = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
"""Explicit direction marks, embeddings, overrides and isolates (right-to-left text needs none of them)."""

_BIDI_RE = re.compile("[" + "".join(map(chr, sorted(BIDI_CONTROLS))) + "]")
_INVISIBLE_CLASS = "".join(re.escape(chr(cp)) for cp in sorted(INVISIBLE))
_COMPATIBLE_BLOCKS = [(0x00A0, 0x0100), (0x2000, 0x2100), (0x2100, 0x2150), (0x2460, 0x2500), (0x3000, 0x3001),
                      (0xFE10, 0xFE20), (0xFE30, 0xFE70), (0xFF00, 0xFFF0), (0x1D400, 0x1D800), (0x1F100, 0x1F200)]
"""Where the compatibility forms of Latin letters and of the colon live (fullwidth, mathematical,
enclosed, letterlike, small and vertical forms)."""


def _forms() -> dict[str, str]:
    """Every character of `_COMPATIBLE_BLOCKS` whose NFKC form, case folded, is one ASCII letter or a
    colon, by that letter: the extra members of each letter's character class."""
    forms: dict[str, list[str]] = {}
    for start, end in _COMPATIBLE_BLOCKS:
        for cp in range(start, end):
            plain = unicodedata.normalize("NFKC", chr(cp)).casefold()
            if len(plain) == 1 and (plain.isascii() and plain.isalpha() or plain == ":"):
                forms.setdefault(plain, []).append(chr(cp))
    return {plain: "".join(re.escape(ch) for ch in chars) for plain, chars in forms.items()}


LATIN_LOOKALIKES = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеѕіјорсхуԁԛԝһӏӀ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαιοκνρτυχ",
    "ABESIJKMHOPCTXYaesijopcxydqwhll" "ABEZHIKMNOPTYXaiokvptux")
"""Cyrillic and Greek letters that look Latin (`DIRЕCTOR` with a Cyrillic `Е`), as the Latin letters
they imitate: NFKC leaves them as they are."""


def _with_lookalikes(forms: dict[str, str]) -> dict[str, str]:
    """`forms` with each Latin letter's Cyrillic and Greek lookalikes added to its class."""
    extra: dict[str, str] = {}
    for cp, latin in LATIN_LOOKALIKES.items():
        extra[chr(latin).lower()] = extra.get(chr(latin).lower(), "") + re.escape(chr(cp))
    return {key: forms.get(key, "") + extra.get(key, "") for key in {*forms, *extra}}


_FORMS = _with_lookalikes(_forms())
GAP = rf"[\s{_INVISIBLE_CLASS}]"
"""One character that may stand between a marker's words (any space, or an invisible character)."""
COLON = rf"[:{_FORMS[':']}]"
"""A colon in any of its compatibility forms (fullwidth `：`, small `﹕`, vertical `︓`)."""


def letters(word: str) -> str:
    """A pattern for `word` (ASCII letters and spaces) that also matches its compatibility forms, with
    invisible characters allowed between letters and any run of spaces or invisibles for each space.
    Use it with `re.IGNORECASE`."""
    parts: list[str] = []
    for ch in word:
        if ch == " ":
            parts.append(f"{GAP}+")
        else:
            if parts and not parts[-1].endswith("+"):
                parts.append(f"[{_INVISIBLE_CLASS}]*")  # only between two letters: no two adjacent runs overlap
            parts.append(f"[{re.escape(ch)}{_FORMS.get(ch.lower(), '')}]")
    return "".join(parts)


def without_bidi(text: str) -> str:
    """Text without explicit direction controls (`BIDI_CONTROLS`)."""
    return _BIDI_RE.sub("", text)


def plain(text: str) -> str:
    """Text as a marker is written back: NFKC, without invisible characters."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ord(ch) not in INVISIBLE)
