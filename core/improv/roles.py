"""Who a goal means when it names a person by role (`The landlord agrees to fix the heating`).

Read from the actor's own request, like everything the improviser does. A role a goal clause opens
with is played by:

1. the one person the scene's prompt calls by it (`Alice, his manager`, `the landlord Mara`,
   `Mara (the landlord)`, `Mara is the landlord`);
2. else this character, when its profile's title (`# Mara Quint - Landlord`), its perspective or its
   profile says so (`You are the landlord`, `You're here as Bob's team lead`);
3. else, when only one other person is present, that person (a role that is not mine, in a scene of
   two, is the other's).

A role no rule settles names no one, as before. A role someone plays is a person, not a topic: the
improviser does not talk *about* `the landlord` to the landlord (`material`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from promptdesk.core.protocol.goal_acts import ACTS, NOT_VERBS, PERSON_WORD, read_goal
from promptdesk.core.protocol.person_names import given_name, spoken_name, title_role

_DETERMINER = r"(?:the|a|an|our|my|your|his|her|their|its|[\w-]+'s)"
_WORD = r"[^\W\d_][\w'-]*"
_NOT_ROLE = frozenset("is are was were be been being gets get has have had does do did will would can could must "
                      "should shall may might and or but then".split())
"""Words that end a clause's subject: a subject holding one (`the deal is agreed`) is no role."""
ROLE_WORDS = 3
"""The longest role read, in words (`the night shift manager`)."""


def goal_roles(goal: str) -> tuple[str, ...]:
    """The roles the goal's clauses with an act open with, lowercased (`The landlord finally agrees` ->
    `landlord`; `the new night manager admits` -> `new night manager`): a determiner, then at most three
    lowercase words up to the act's verb (adverbs in `-ly` dropped). A capitalised word is a name, not
    a role. A clause with no act of the table is read up to its verb (`The captain orders the slingshot`)."""
    found: list[str] = []
    for clause in read_goal(goal or ""):
        if clause.who:
            continue
        verb = re.search(ACTS[clause.act][0], clause.text, re.I) if clause.act else \
            re.search(rf"(?<![\w'])(?!(?:{NOT_VERBS})\b)[a-z]+s\b", clause.text)
        opening = re.match(rf"^{_DETERMINER}\s+(.+)$", clause.text[:verb.start() if verb else 0].strip(), re.I)
        if not opening:
            continue
        for subject in re.split(rf"\s+(?:and|&)\s+{_DETERMINER}\s+", opening.group(1)):  # `the buyer and the seller`
            words = [w for w in subject.split() if not w.lower().endswith("ly")]
            if not clause.act and not (words and PERSON_WORD.search(words[-1]) and verb.group(0) not in _NOT_ROLE):
                continue  # `The storm passes`, `The deal is signed`: a thing, no role
            if 0 < len(words) <= ROLE_WORDS and all(re.fullmatch(_WORD, w) and w == w.lower() and w not in _NOT_ROLE
                                                    for w in words):
                role = " ".join(words)
                if role not in found:
                    found.append(role)
    return tuple(found)


@lru_cache(maxsize=256)
def person_roles(name: str, others: tuple[str, ...], prompt: str, goal: str, perspective: str,
                 profile: str) -> tuple[tuple[str, str], ...]:
    """(role, cast member) for each of the goal's roles some rule settles (see the module)."""
    out: list[tuple[str, str]] = []
    for role in goal_roles(goal):
        titled = [member for member in (name, *others) if member and title_role(member) == role.split()[-1]]
        called = titled or [member for member in (name, *others) if member and _prompt_calls(prompt, member, role)]
        if len(called) == 1:
            out.append((role, called[0]))
        elif not called and plays(role, profile, perspective):
            out.append((role, name))
        elif not called and len(others) == 1:
            out.append((role, others[0]))
    return tuple(out)


def plays(role: str, profile: str, perspective: str) -> bool:
    """Whether this character's own words give it the role: its profile's title, or `you are the ...`
    in its perspective or profile."""
    head = re.escape(role.split()[-1])
    title = re.search(r"^#\s+[^\n#]+?\s+[-\u2013\u2014:]\s+([^\n]+)$", profile, re.M)
    if title and re.search(rf"\b{head}s?\b", title.group(1), re.I):
        return True
    said = rf"\b(?:you are|you're|i am|i'm)(?:\s+here)?(?:\s+as)?\s+{_DETERMINER}\s+(?:[\w'-]+\s+){{0,2}}?{head}\b"
    return any(re.search(said, text, re.I) for text in (perspective, profile[:2000]))


def _prompt_calls(prompt: str, member: str, role: str) -> bool:
    """Whether the prompt calls the member by the role: `Alice, his manager`, `the landlord, Mara`,
    `Mara (the landlord)`, `Mara is the landlord` (by display name, first name or spoken name)."""
    head = re.escape(role.split()[-1])
    names = "|".join(re.escape(n) for n in sorted({member, given_name(member), spoken_name(member)} - {""},
                                                  key=len, reverse=True))
    role_phrase = rf"{_DETERMINER}\s+(?:[\w'-]+\s+){{0,2}}?{head}"
    patterns = (rf"(?<!\w)(?:{names}),\s+{role_phrase}\b",
                rf"\b{role_phrase},?\s+(?:{names})(?!\w)",
                rf"(?<!\w)(?:{names})\s+\((?:{_DETERMINER}\s+)?(?:[\w'-]+\s+){{0,2}}?{head}\)",
                rf"(?<!\w)(?:{names}),?\s+(?:who\s+)?(?:is|was)\s+{role_phrase}\b")
    if any(re.search(p, prompt, re.I) for p in patterns):
        return True
    doing = _DOING.get(role.split()[-1]) or (rf"{re.escape(role.split()[-1][:-2])}\w*" if re.search(r"(?:er|or)$", role)
                                             and len(role.split()[-1]) > 5 else "")
    if doing and re.search(rf"(?<!\w)(?:{names})\s+(?:\w+ly\s+)?(?:{doing})\b", prompt, re.I):
        return True  # `Kofi rents the top flat`: the tenant; `Gus buys`: the buyer
    owning = _OWNING.get(role.split()[-1])
    return bool(owning and re.search(rf"\b(?:{owning})\b[^.;]*?\bfrom\s+(?:{names})(?!\w)", prompt, re.I))


_DOING = {"tenant": "rents|leases|lodges|lives", "lodger": "rents|lodges", "landlord": "owns|lets|rents out",
          "landlady": "owns|lets|rents out", "owner": "owns", "buyer": "buys|wants to buy|is buying|wants|haggles",
          "customer": "buys|wants to buy|wants|orders", "seller": "sells|is selling", "vendor": "sells|is selling",
          "stallholder": "sells|runs the stall", "shopkeeper": "sells|runs the shop", "witness": "saw|swore|testifies",
          "judge": "presides", "patient": "is waiting|has come for", "teacher": "teaches", "driver": "drives"}
"""Roles a prompt gives by a verb alone (`Kofi rents the top flat`): the role's doer; an agent noun in `-er`
or `-or` (`the buyer`, `the negotiator`) is also read from its own verb (`buys`, `negotiates`)."""
_OWNING = {"landlord": "rents|leases", "landlady": "rents|leases", "seller": "buys", "vendor": "buys"}
"""Roles a prompt gives the one something is had from (`Kofi rents the flat from Mara`: Mara is the landlord)."""
