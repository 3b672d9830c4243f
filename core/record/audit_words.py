"""How the isolation audit cuts a text into words and grams, alike in every script.

A text's words are normalised (lower case, punctuation and combining marks dropped, compatibility
forms unfolded; in a script written without spaces, each character a word: `_scan`). A private text
of `SHINGLE` words or more is cut into every run of `SHINGLE` consecutive words; a shorter text is one
gram, the whole normalised phrase (down to a single word); a code word inside any text (a word that
mixes letters and digits, such as `ZEPHYR-7`) is a gram of its own; and the clauses of a long text
(`clauses`) are grams where the coordinator's own texts are checked.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

SHINGLE = 8
_WORD = re.compile(r"\w+")
_NO_SPACE = ("\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
             "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f")
"""Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana, CJK ideographs."""
_NO_SPACE_SPLIT = re.compile(f"[{_NO_SPACE}]|[^{_NO_SPACE}]+")
_JOINED = re.compile(f"(?<=[{_NO_SPACE}]) (?=[{_NO_SPACE}])")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_NO_SPACE_CHAR = re.compile(f"[{_NO_SPACE}]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_CLAUSE_END = re.compile(r"[.!?;:\u2026\u3002\uff01\uff1f\uff1b\uff1a\uff0e\uff61\u037e\u0387\u0589\u061b\u061f"
                         r"\u06d4\u0700-\u0702\u0964\u0965\u104a\u104b\u1362\u1364-\u1368\u17d4\u17d5\u203c"
                         r"\u2047-\u2049\ufe52\ufe54-\ufe57]+|\n[ \t]*(?:\n|[-*\u2022][ \t])")
"""Where a clause ends: a sentence's or a clause's punctuation in any script (the Latin marks; the
ideographic and full-width stop, question and exclamation marks; the Devanagari danda `।` and `॥`;
the Arabic question mark, semicolon and full stop `؟ ؛ ۔`; the Greek, Armenian, Syriac, Myanmar,
Ethiopic and Khmer stops), a blank line, a list item's start (a line break alone is the text's
wrapping)."""
CLAUSE = 5
"""Words of the shortest clause of a long private text matched whole (see `clauses`)."""
_COMPOUND = re.compile(r"\w+(?:-\w+)*")
_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt])')


def words(text: str) -> list[str]:
    """The words of a text, normalised (see `_scan`), punctuation dropped. An ASCII text's are its
    runs of word characters, lower-cased: found in one pass, with no position kept."""
    if text.isascii():
        return _WORD.findall(text.lower())
    return _scan(text)[0]


def json_words(fragment: str) -> tuple[list[str], list[int]]:
    """The words of a piece of canonical request JSON (escapes are word breaks), and where each ends."""
    return _scan(_ESCAPE.sub(lambda m: " " * len(m.group(0)), fragment))


def scanned(text: str) -> tuple[list[str], list[int]]:
    """The words of a plain text (`words`) and where each ends."""
    return _scan(text)


def written(fragment: str, ends: list[int], first: int, last: int) -> str:
    """Words `first` to `last` (not included) of a piece of request JSON, as `json_words` found them, as
    written: case, accents, vowel signs and kana voicing kept (the words themselves are compared without
    them: `店主は病気だ` is read `店主は病気た`), escapes and runs of blanks one space."""
    text = _ESCAPE.sub(lambda m: " " * len(m.group(0)), fragment[ends[first - 1] if first else 0:ends[last - 1]])
    begins = _WORD.search(text)
    return " ".join(text[begins.start():].split()) if begins else ""


def _scan(text: str) -> tuple[list[str], list[int]]:
    """The words of a text and where each ends, read alike in every script: lower case; accents and
    other combining marks ignored, and compatibility forms (full-width letters, ligatures) taken as
    their plain ones, so `Café`, `cafe` followed by U+0301 and `ＣＡＦＥ` are one word, and an Arabic or Hebrew word
    with or without its vowel marks; in a script written without spaces between words (Chinese,
    Japanese, Thai, Lao, Khmer, Myanmar) each character is a word, so a clause of such a text is as
    many words as it has characters, as an English clause is as many as it has words."""
    if text.isascii():
        found = list(_WORD.finditer(text.lower()))
        return [m.group(0) for m in found], [m.end() for m in found]
    found = list(_WORD.finditer(text))
    tokens = [m.group(0) for m in found]
    if "".join(tokens).isascii() and not any(unicodedata.category(c)[0] == "M" for c in _NON_ASCII.findall(text)):
        return [t.lower() for t in tokens], [m.end() for m in found]
    out: list[str] = []
    ends: list[int] = []
    for match in _pieces().finditer(text):
        piece = match.group(0)
        if piece.isascii():
            out.append(piece.lower())
            ends.append(match.end())
            continue
        for word in _plain(piece):
            out.append(word)
            ends.append(match.end())
    return out, ends


@lru_cache(maxsize=1)
def _pieces() -> re.Pattern[str]:
    """A character of a script without spaces (with the marks written on it), or a run of other word characters and combining marks
    (`\\w` leaves marks out, so a word with an accent or a vowel mark would be cut in two). Made when
    first needed: the marks are read from the Unicode database of this Python."""
    ranges: list[list[int]] = []
    for point in [*range(0x300, 0x20000), *range(0xE0100, 0xE01F0)]:
        if unicodedata.category(chr(point))[0] == "M":
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1][1] = point
            else:
                ranges.append([point, point])
    marks = "".join(re.escape(chr(lo)) + (f"-{re.escape(chr(hi))}" if hi > lo else "") for lo, hi in ranges)
    return re.compile(f"[{_NO_SPACE}][{marks}]*|(?:[^\\W{_NO_SPACE}]|[{marks}])+")  # a Thai letter keeps its vowel/tone marks


@lru_cache(maxsize=1)
def _spoken() -> re.Pattern[str]:
    """`_pieces`, apostrophes kept inside a word (`don't` is one), as a reader counts words."""
    return re.compile(_pieces().pattern.replace("(?:[^", "(?:'|[^", 1))


def spoken(text: str) -> list[str]:
    """The words of a text as a reader counts them in any script, lower-cased: runs of letters, digits
    and apostrophes, a word's combining marks kept in it (a Hindi or Arabic word with its vowel signs is
    one word), and each character of a script written without spaces a word of its own (Chinese and
    Japanese: see `_scan`)."""
    return _spoken().findall(text.lower())


@lru_cache(maxsize=65536)
def _plain(piece: str) -> tuple[str, ...]:
    """A piece's words in their plain form: compatibility forms unfolded, marks dropped, the Arabic
    tatweel that only stretches a word (`المـــال` is `المال`) dropped, lower case."""
    plain = unicodedata.normalize("NFKD", piece)
    plain = unicodedata.normalize("NFC", "".join(c for c in plain if unicodedata.category(c)[0] != "M" and c != "\u0640"))
    return tuple(_WORD.findall(plain.lower()))


def readable(gram: str) -> str:
    """A gram as a person reads it: the words of a script without spaces joined up again."""
    return _JOINED.sub("", gram)


def code_words(text: str) -> set[str]:
    """The code words of a text (normalised): words of four characters or more, hyphens joining
    their parts, that mix letters and digits (`ZEPHYR-7`, `X7Q9`, `B2B4`)."""
    found = set()
    for match in _COMPOUND.finditer(text):
        token = match.group(0)
        if len(token) >= 4 and any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
            found.add(" ".join(words(token)))
    return found


def grams(text: str) -> set[str]:
    """The grams of a private text (see the module docstring)."""
    tokens = words(text)
    if not tokens:
        return set()
    size = min(SHINGLE, len(tokens))
    return {" ".join(tokens[i:i + size]) for i in range(len(tokens) - size + 1)} | code_words(text)


def clauses(text: str) -> set[str]:
    """The clauses of a long private text (of `SHINGLE` words or more) that are shorter than a shingle
    but of `CLAUSE` words or more, each a gram: a sentence of the notes ("Dolores secretly controls
    four votes.") or a part of one between semicolons or colons, copied whole, is a leak as a whole
    short text is. Not in a script written without spaces, whose 8-character shingles are short enough."""
    return _clauses(text, CLAUSE, SHINGLE) if len(words(text)) >= SHINGLE else set()


NO_SPACE_SHORT = 4
"""Characters of the shortest clause `short_clauses` gives in a script written without spaces: a
clause of 4 to 7 characters (`爱丽丝怀孕了`, `店主は病気だ`) says what a short English clause
("Alice is pregnant.") says; a longer one holds a shingle."""


def short_clauses(text: str, shortest: int) -> set[str]:
    """The clauses of a text (as `clauses` cuts them) too short for `clauses` and for a shingle,
    whatever the text's length, each as its words joined by single spaces: in a script written with
    spaces, of `shortest` words up to `CLAUSE` (not included); in a script written without spaces, of
    `NO_SPACE_SHORT` characters up to `SHINGLE` (not included). Korean writes a word's particles and
    endings into it (`민준은 해고되었다` is "Minjun was fired"), so a clause in Hangul counts from 2 words."""
    korean = {clause for clause in _clauses(text, 2, shortest) if hangul(clause)} if shortest > 2 else set()
    return _clauses(text, shortest, CLAUSE) | _clauses(text, NO_SPACE_SHORT, SHINGLE, spaced=False) | korean


def hangul(text: str) -> bool:
    """Whether a text holds Hangul: Korean, whose words carry their particles and endings, so that it says
    in 2 words what English says in 3."""
    return _HANGUL.search(text) is not None


def no_space(gram: str) -> bool:
    """Whether a text holds a character of a script written without spaces."""
    return _NO_SPACE_CHAR.search(gram) is not None


def _clauses(text: str, fewest: int, under: int, spaced: bool = True) -> set[str]:
    """The clauses of `text` of `fewest` words up to `under` (not included), in a script written with
    spaces (`spaced`) or in one written without."""
    found = set()
    for part in _CLAUSE_END.split(text):
        tokens = words(part)
        if fewest <= len(tokens) < under and no_space(part) != spaced:
            found.add(" ".join(tokens))
    return found
