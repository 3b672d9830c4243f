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
    "senhor senhora signor signora don doña".split())
"""Titles said with a surname (`Dr Haddad`, `Judge Okafor`)."""
_FAMILY = frozenset("aunt auntie uncle grandma grandpa granny grandad grandmother grandfather cousin sister "
                    "brother nana nan papa mama abuela abuelo nonna nonno oma opa tía tío tia tio babcia dziadek "
                    "babushka".split())
"""Titles said with a given name (`Aunt May`)."""


def _title(word: str) -> str:
    """The word as a title key (`Dr.` -> `dr`), or "" when it is no title."""
    key = re.sub(r"\.$", "", word).casefold()
    return key if key in _COURTESY or key in _FAMILY else ""


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
    title the title and surname (`Dr Haddad`), a family title and the given name (`Aunt May`)."""
    words = name.split()
    n = title_length(name)
    if n == 0:
        return words[0] if words else ""
    if len(words) - n == 1:
        return name
    if _title(words[n - 1]) in _FAMILY:
        return " ".join(words[:n + 1])
    return " ".join([*words[:n], words[-1]])
