"""The readings of a coordinator-written text: as written, and with its disguises taken off.

A judge that has read private material (role A's, the coordinator notes) writes free text that may
reach every actor; the leak check (`promptdesk.core.record.audit_coordinator`) must see the private
words in it however they are dressed. The audit's words already ignore case, spacing, line breaks,
punctuation between words, accents and full-width forms (`promptdesk.core.record.audit_words.words`);
what they would still miss, and a reader (a person, or a model) would not:

- **invisible characters inside a word** (zero-width space and joiners, the word joiner, a soft
  hyphen, bidi controls, variation selectors, tag characters): `apolo\\u200bgises` reads `apologises`.
  Such a character may also stand for a space (`Bob\\u200bexplicitly`), so both readings are checked;
- **markup**: an inline tag inside a word (`ex<i>plicit</i>ly`) is read away, any other tag
  (`<p>`, `<br/>`) as a space, and no tag leaves its name among the words (`<b>Bob</b>`);
- **escapes**: HTML character references (`&#97;`, `&amp;`) and `\\uXXXX` escapes read as the
  characters they stand for;
- **word joiners a model writes for spaces**: `you_knew_a_month`, a word broken by a hyphen at a
  line's end (`apolo-\\ngises`);
- **letters dressed up**: circled, parenthesised or mathematical letters (`ⓐ`, `𝐚`) read as their
  plain forms; words run together in camel case (`YouKnewAMonth`) or spelt out letter by letter
  (`B o b  k n e w`) read apart and together;
- **look-alike letters of another script**: Cyrillic or Greek letters that look Latin (`Воb`,
  `еxрlісitlу`) read as the Latin letters they imitate.

- **encodings a reader undoes at sight**: percent-encoding (`Bob%20is%20defensive`), a run of
  base64 that decodes to text, ROT13, digits and signs for letters (`B0b 1s d3f3ns1v3`), and the
  words in reverse order: a model decodes each of them unasked.

Each reading is a text of its own; a match in any of them is a match. The readings are checked only
on the coordinator's short texts (a suggested world event is at most 300 characters), never on the
requests, whose text the engine wrote.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from urllib.parse import unquote

from promptdesk.core.protocol.lookalikes import LATIN_LOOKALIKES

_INVISIBLE = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
              "\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
"""Unicode's default-ignorable characters: drawn as nothing."""
_INVISIBLE_RUN = re.compile(f"[{_INVISIBLE}]+")
_INLINE = ("a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "del", "dfn", "em", "font", "i", "ins", "kbd",
           "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var", "wbr")
_TAG = re.compile(r"</?([A-Za-z][\w:.-]{0,40})(?:\s[^<>]{0,400})?/?>")
_UESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_BROKEN = re.compile(r"(?<=\w)-[ \t]*\r?\n[ \t]*(?=\w)")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPACED = re.compile(r"(?<=\b\w) (?=\w\b)")
"""A space between two one-letter words: `B o b  k n e w` reads `Bob  knew`."""
_LOOKALIKES = LATIN_LOOKALIKES


_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_LEET = str.maketrans("0134579@$", "oieastgas")
"""Digits and signs written for letters (`d3f3ns1v3`)."""


def _unbase64(match: re.Match[str]) -> str:
    """A run of base64 as the text it encodes, when it encodes printable text; else as written."""
    run = match.group(0)
    try:
        raw = base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return run
    return f" {decoded} " if decoded.isprintable() and any(c.isalpha() for c in decoded) else run


def _decoded(text: str) -> list[str]:
    """The readings that undo an encoding: percent-encoding, base64 runs, ROT13, digits for letters,
    the words reversed."""
    return [unquote(text), _BASE64.sub(_unbase64, text), codecs.encode(text, "rot13"), text.translate(_LEET),
            " ".join(reversed(text.split()))]


def readings(text: str) -> list[str]:
    """`text` as written, then each different reading of it with its disguises taken off."""
    plain = _BROKEN.sub("", _UESCAPE.sub(lambda m: chr(int(m.group(1), 16)), html.unescape(text)))
    plain = _TAG.sub(lambda m: "" if m.group(1).lower() in _INLINE else " ", plain).replace("_", " ")
    joined = unicodedata.normalize("NFKC", _INVISIBLE_RUN.sub("", plain))
    found = [text]
    for reading in (joined, unicodedata.normalize("NFKC", _INVISIBLE_RUN.sub(" ", plain)),
                    _CAMEL.sub(" ", joined), _SPACED.sub("", joined)):
        for candidate in (reading, reading.translate(_LOOKALIKES)):
            if candidate not in found:
                found.append(candidate)
    for candidate in _decoded(joined):
        if candidate not in found:
            found.append(candidate)
    return found
