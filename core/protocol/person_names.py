"""The short ways a person's display name is said: `Dr Amal Haddad` is `Amal` to a goal and `Dr Haddad`
to their face; `Aunt May Parker` is `Aunt May`; `Maria Stern` is `Maria`.

A title (a courtesy, a profession, a rank, a family word) opens many names; it is no one's first
name, so a goal's `Amal admits` names Dr Amal Haddad, and no one is called `Dr` alone.
"""

from __future__ import annotations

import re

_COURTESY = frozenset(
    "dr doctor mr mrs ms mx miss prof professor judge justice detective det inspector officer constable sergeant "
    "sgt captain capt lieutenant lt colonel col general major commander admiral agent chief coach nurse sir dame "
    "lord lady rev reverend pastor rabbi imam father mother madam madame mme mlle monsieur herr frau señor señora "
    "senhor senhora signor signora don doña ensign cadet corporal sheriff marshal mayor senator governor president "
    "bishop".split())
"""Titles said with a surname (`Dr Haddad`, `Judge Okafor`)."""
_FAMILY = frozenset("aunt auntie uncle grandma grandpa granny grandad grandmother grandfather cousin sister "
                    "brother nana nan papa mama abuela abuelo nonna nonno oma opa tía tío tia tio babcia dziadek "
                    "babushka".split())
"""Titles said with a given name (`Aunt May`)."""
_WITH_GIVEN = _FAMILY | {"sir", "dame"}
"""A knight or a dame is said with the given name too: Sir Robert Hale is `Sir Robert`, never `Sir Hale`."""


_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґў",
                     "a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch - y - e yu ya i yi ye g u".split()))
_GREEK_PAIRS = (("ου", "ou"), ("αυ", "av"), ("ευ", "ev"), ("μπ", "b"), ("ντ", "d"), ("γκ", "g"))
_GREEK = dict(zip("αβγδεζηθικλμνξοπρσςτυφχψω", "a v g d e z i th i k l m n x o p r s s t y f ch ps o".split()))


def latin(name: str) -> str:
    """A Cyrillic or Greek name in Latin letters, as an English text writes it (`Олег Петров` -> `Oleg
    Petrov`, `Στέλιος` -> `Stelios`); "" for a name with no such letters, or one left with others."""
    import unicodedata
    plain = "".join(ch for ch in unicodedata.normalize("NFD", name) if unicodedata.category(ch) != "Mn")
    if not re.search(r"[\u0370-\u03ff\u0400-\u04ff]", plain):
        return ""
    out = []
    for word in plain.split():
        low = word.lower()
        for pair, said in _GREEK_PAIRS:
            low = low.replace(pair, said)
        low = "".join(_CYRILLIC.get(ch, _GREEK.get(ch, ch)).replace("-", "") for ch in low)
        out.append(low[:1].upper() + low[1:] if word[:1].isupper() else low)
    said = " ".join(out)
    return said if re.fullmatch(r"[A-Za-z' .-]+", said) else ""


def _title(word: str) -> str:
    """The word as a title key (`Dr.` -> `dr`), or "" when it is no title."""
    key = re.sub(r"\.$", "", word).casefold()
    return key if key in _COURTESY or key in _FAMILY else ""


_NOT_ROLES = frozenset("mr mrs ms mx miss sir dame lord lady madam madame mme mlle monsieur herr frau señor señora senhor "
                       "senhora signor signora don doña father mother".split())
_ROLE_OF = {"dr": "doctor", "prof": "professor", "capt": "captain", "lt": "lieutenant", "sgt": "sergeant",
            "det": "detective", "col": "colonel", "rev": "reverend"}


def title_role(name: str) -> str:
    """The role a name's title gives its person (`Captain Efua Osei` -> `captain`, `Dr Amal Haddad` ->
    `doctor`, `Judge Okafor` -> `judge`); "" for a courtesy or family title, or none."""
    n = title_length(name)
    key = _title(name.split()[n - 1]) if n else ""
    return "" if not key or key in _NOT_ROLES or key in _FAMILY else _ROLE_OF.get(key, key)


def title_length(name: str) -> int:
    """How many words of titles open the name (`Dr Amal Haddad` -> 1; `Amal` -> 0); a name that is
    nothing but titles (`The Judge`, `Doctor`) has none: those words are its name."""
    words = name.split()
    n = 0
    while n < len(words) and _title(words[n]):
        n += 1
    return n if n < len(words) else 0


def given_name(name: str) -> str:
    """The name's first word after any titles (`Dr. Amal Haddad` -> `Amal`; `Maria Stern` -> `Maria`)."""
    words = name.split()
    return words[title_length(name)] if words else ""


def spoken_name(name: str) -> str:
    """How the person is called to their face when the short form will do: the first name, or with a
    title the title and surname (`Dr Haddad`), a family title, `Sir` or `Dame` and the given name
    (`Aunt May`, `Sir Robert`)."""
    words = name.split()
    n = title_length(name)
    if n == 0:
        return words[0] if words else ""
    if len(words) - n == 1:
        return name
    if _title(words[n - 1]) in _WITH_GIVEN:
        return " ".join(words[:n + 1])
    return " ".join([*words[:n], words[-1]])
