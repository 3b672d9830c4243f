"""Whom a goal's act is for, and whether a line is said to someone else.

`Dame Judi thanks Dr Haddad` asks for thanks to Dr Amal Haddad: "Thank you, Sir Robert." does not do it,
"Thank you, Dr Haddad." and a plain "Thank you." (said to whoever it was said to) may. Word matching on
names, as the rest of the goal's reading (`promptdesk.core.protocol.goal_acts`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from promptdesk.core.protocol.person_names import given_name, spoken_name


def _names(member: str) -> set[str]:
    """The names a cast member may be called by in a line: whole, given, spoken (`Dr Haddad`), surname."""
    words = member.split()
    return {member, given_name(member), spoken_name(member), *(words[-1:] if len(words) > 1 else ())} - {""}


def mentions(text: str, member: str) -> bool:
    """Whether the text names the member, by any of their names, as a whole word."""
    return any(re.search(rf"(?<![\w'-]){re.escape(name)}(?![\w'-])", text, re.I) for name in _names(member))


def for_recipients(clause_text: str, doers: Iterable[str], lines: list[tuple[str, str]],
                   cast: Iterable[str]) -> list[tuple[str, str]]:
    """The lines that may be said to the people the clause names besides its `doers` (`thanks Dr
    Haddad`): a line that names another cast member and none of them is said to someone else. All the
    lines when the clause names no one else."""
    cast = list(cast)
    recipients = [m for m in cast if m not in doers and mentions(clause_text, m)]
    if not recipients:
        return lines
    others = [m for m in cast if m not in recipients]
    return [(who, text) for who, text in lines if any(mentions(text, m) for m in recipients)
            or not any(mentions(text, m) for m in others if m != who)]
