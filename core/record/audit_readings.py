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
- **look-alike letters of another script**: Cyrillic, Greek, Armenian, Cherokee or Lisu letters that
  look Latin (`Воb`, `еxрlісitlу`, `yօս`), and Latin letters of the phonetic alphabet (`ı`, `ɑ`), read
  as the Latin letters they imitate.

- **encodings a reader undoes at sight**: percent-encoding (`Bob%20is%20defensive`) and
  quoted-printable (`Bob=20is=20defensive`, `=42=6F=62`, soft line breaks), each also applied twice
  (`%2520`, `=3D20`); byte escapes (`\\x42\\x6f`, `\\102`), CSS escapes (`\\42 `) and code points
  (`U+0042`); a run of base64, base32, hex digits (`426f62`) or 8-bit groups that decodes to text, and
  words each in base64 (`Qm9i a25ldw==`); Morse code; ROT13, every other Caesar shift and Atbash;
  digits and signs for letters (`B0b 1s d3f3ns1v3`); letters joined by hyphens or dots
  (`B-o-b k-n-e-w`); the words in reverse order, each word spelt backwards (`boB wenk`), the whole
  text backwards: a model decodes each of them unasked. Small capitals (`ʙᴏʙ`) and
  regional-indicator letters read as the letters they show.

Not read: word games that are no encoding (Pig Latin, a filler letter between letters, vowels left
out), a paraphrase, a summary, a translation (see the audit's guide, "What it cannot catch").

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


_SMALL_CAPS = str.maketrans("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz")
"""Small capital letters (IPA and phonetic extensions): NFKC leaves them as they are. (`x` and `s` have
none of their own; a model writes the plain letter.)"""
_REGIONAL = {0x1F1E6 + i: ord("a") + i for i in range(26)}
"""Regional-indicator symbols, drawn as boxed letters (or flags, two by two)."""
_BYTE_ESCAPES = re.compile(r"(?:\\x[0-9a-fA-F]{2}|\\[0-3][0-7]{2})+")
_CODE_POINT = re.compile(r"(?<![A-Za-z0-9])U\+([0-9A-Fa-f]{4,6})(?![0-9A-Za-z+])|U\+([0-9A-Fa-f]{4})")
"""A code point (`U+0042`, written apart or run together: `U+0042U+006F`)."""
_CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}) ?")
"""A CSS escape (`\\42 `): read apart from byte escapes, whose octal (`\\102`) it would misread."""
_QP = re.compile(r"(?:=[0-9A-Fa-f]{2})+")
_QP_SOFT = re.compile(r"=[ \t]*\r?\n")
_LETTERED = re.compile(r"(?<![\w·•*/|+~-])\w(?:[-.·•*/|+~]\w)+(?:[-.·•*/|+~](?!\w))?(?!\w)")
"""Letters of one word joined by a hyphen, a dot or a like sign (`k-n-e-w`, `k.n.e.w`): read joined."""
_SIGNS = re.compile(r"[-.·•*/|+~]")
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}[ :]?){6,}(?![0-9A-Za-z])")
_BITS = re.compile(r"(?<![01])(?:[01]{8}[ ]?){4,}(?![01])")
_CHEROKEE = dict(zip("ᎪᏴᏟᎠᎬᏀᎻᏆᎫᏦᏞᎷᏢᎡᏚᎢᏙᏤᎳᎩᏃ", "ABCDEGHIJKLMPRSTVVWYZ"))
_OTHER_SCRIPTS = {
    **_CHEROKEE,
    **{chr(ord(c) - 0x13A0 + 0xAB70): latin.lower() for c, latin in _CHEROKEE.items() if 0x13A0 <= ord(c) < 0x13F0},
    **dict(zip("ꓮꓐꓚꓓꓰꓝꓖꓧꓲꓙꓗꓡꓟꓠꓳꓑꓣꓢꓔꓴꓦꓪꓫꓬꓜ", "ABCDEFGHIJKLMNOPRSTUVWXYZ")),
    **dict(zip("օսոհցզաԼ", "ounhgqwL")),
    **dict(zip("ıȷɑɡɩʋɴʀʏ", "ijagivnry")),
}
"""Letters of other scripts, and Latin letters of the phonetic alphabet, that look like plain Latin ones:
Cherokee (capital and small), Lisu, Armenian (`yօս` for `you`), dotless `ı`, Latin alpha `ɑ`."""
_LOOKALIKES = {**LATIN_LOOKALIKES, **_SMALL_CAPS, **_REGIONAL, **str.maketrans(_OTHER_SCRIPTS)}
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_BASE64_WORD = re.compile(r"(?<![\w+/=])(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)"
                          r"|(?:[A-Za-z0-9+/]{4})+)(?![\w+/=])")
"""A word that is base64 whole (`Qm9i`, `YQ==`): each word of a text encoded on its own."""
_BASE32 = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{16,}=*(?![A-Za-z0-9])")
_MORSE = {code: letter for letter, code in zip(
    "abcdefghijklmnopqrstuvwxyz0123456789",
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. "
    "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----.".split())}
_MORSE_RUN = re.compile(r"[.-]{1,5}(?:(?: | ?/ ?|   )[.-]{1,5}){2,}")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_SHIFTS = [str.maketrans(_ALPHABET + _ALPHABET.upper(), _ALPHABET[n:] + _ALPHABET[:n] + (_ALPHABET[n:] + _ALPHABET[:n]).upper())
           for n in range(1, 26) if n != 13]
"""Every other shift of the alphabet (ROT13 is read apart): a Caesar cipher a model undoes by trying them."""
CIPHER_MAX = 2000
"""Characters of the longest text whose every Caesar shift is read (24 readings): a suggested world event
is at most 300; a longer coordinator text (only a forged record holds one) is read with ROT13 alone."""
_ATBASH = str.maketrans(_ALPHABET + _ALPHABET.upper(), _ALPHABET[::-1] + _ALPHABET[::-1].upper())
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


def _text_of(raw: bytes, fallback: str, latin: bool = True) -> str:
    """Bytes decoded as UTF-8 (or, with `latin`, Latin-1), spaced from their neighbours, when they are
    printable text holding a letter; else `fallback`."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        if not latin:
            return fallback
        decoded = raw.decode("latin-1")
    return f" {decoded} " if decoded.isprintable() and any(c.isalpha() for c in decoded) else fallback


def _unbytes(match: re.Match[str]) -> str:
    """A run of byte escapes (`\\x42\\x6f`, `\\102`) as the text its bytes encode."""
    run = match.group(0)
    raw = bytes(int(code[1:], 16) if code[0] == "x" else int(code, 8) for code in run.split("\\")[1:])
    return _text_of(raw, run).strip(" ")


def _unbase64_word(match: re.Match[str]) -> str:
    """A word that is base64 whole as the text it encodes, when that is text; else as written."""
    run = match.group(0)
    try:
        return _text_of(base64.b64decode(run, validate=True), run, latin=False)
    except (binascii.Error, ValueError):
        return run


def _unbase32(match: re.Match[str]) -> str:
    run = match.group(0)
    try:
        return _text_of(base64.b32decode(run + "=" * (-len(run) % 8)), run)
    except (binascii.Error, ValueError):
        return run


def _unmorse(match: re.Match[str]) -> str:
    """A run of Morse code as its letters: a slash or three spaces between words, one between letters."""
    words = re.split(r" ?/ ?|   ", match.group(0))
    return " ".join("".join(_MORSE.get(code, "?") for code in word.split()) for word in words)


def _css(match: re.Match[str]) -> str:
    point = int(match.group(1), 16)
    return chr(point) if 0 < point <= 0x10FFFF and (chr(point).isprintable() or chr(point).isspace()) else match.group(0)


def _unhex(match: re.Match[str]) -> str:
    """A run of hex digit pairs as the text its bytes encode, when it is text; else as written."""
    run = match.group(0)
    return _text_of(bytes.fromhex(run.replace(" ", "").replace(":", "")), run)


def _unbits(match: re.Match[str]) -> str:
    """A run of 8-bit groups as the text its bytes encode, when it is text; else as written."""
    run = match.group(0)
    bits = run.replace(" ", "")
    return _text_of(bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8)), run)


def _unqp(text: str) -> str:
    """Quoted-printable taken off: soft line breaks joined, each run of `=XX` as the bytes it encodes."""
    joined = _QP_SOFT.sub("", text)
    return _QP.sub(lambda m: bytes.fromhex(m.group(0).replace("=", "")).decode("utf-8", "replace"), joined)


def _undone(undo, text: str) -> str:
    """`text` with an encoding taken off, and again while that changes it (an encoding applied twice:
    `%2520`, `=3D20`), at most three times."""
    for _ in range(3):
        done = undo(text)
        if done == text:
            break
        text = done
    return text


def _decoded(text: str) -> list[str]:
    """The readings that undo an encoding: percent-encoding, quoted-printable, runs of base64, base32,
    hex or bits, words of base64, Morse code, CSS escapes, ROT13 and every other shift of the alphabet
    (up to `CIPHER_MAX` characters), Atbash,
    digits for letters, letters joined by signs, the words reversed, each word spelt backwards, the
    text backwards."""
    binary = _BITS.sub(_unbits, _HEX.sub(_unhex, _BASE32.sub(_unbase32, _BASE64.sub(_unbase64, text))))
    return [_undone(unquote, text), _undone(_unqp, text), binary, _BASE64_WORD.sub(_unbase64_word, text),
            _MORSE_RUN.sub(_unmorse, text), _CSS_ESCAPE.sub(_css, text), codecs.encode(text, "rot13"), text.translate(_ATBASH),
            *(text.translate(shift) for shift in (_SHIFTS if len(text) <= CIPHER_MAX else ())), text.translate(_LEET),
            _LETTERED.sub(lambda m: _SIGNS.sub("", m.group(0)), text),
            " ".join(reversed(text.split())), " ".join(word[::-1] for word in text.split()), text[::-1]]


def _code_point(match: re.Match[str]) -> str:
    """`U+0042` as the character it names (any space as a space; a control or no character: as written)."""
    point = int(match.group(1) or match.group(2), 16)
    if point > 0x10FFFF:
        return match.group(0)
    return " " if chr(point).isspace() else chr(point) if chr(point).isprintable() else match.group(0)


def readings(text: str) -> list[str]:
    """`text` as written, then each different reading of it with its disguises taken off."""
    plain = _UESCAPE.sub(lambda m: chr(int(m.group(1), 16)), html.unescape(text))
    plain = _BROKEN.sub("", _CODE_POINT.sub(_code_point, _BYTE_ESCAPES.sub(_unbytes, plain)))
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
