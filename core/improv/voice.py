"""Turning what the briefing says about a character into the character's own first-person voice.

`Your private perspective: You are under pressure` -> `I am under pressure`; a goal that names the
character (`Bob apologises`) -> `I apologise`; a profile bullet (`Raises voice when frustrated`)
-> `I raise my voice when frustrated`.
"""

from __future__ import annotations

import re

_SWAPS = ((r"\byou are\b", "I am"), (r"\byou're\b", "I'm"), (r"\byou've\b", "I've"),
          (r"\byou'll\b", "I'll"), (r"\byou'd\b", "I'd"), (r"\byours\b", "mine"),
          (r"\byourself\b", "myself"), (r"\byour\b", "my"))
_IRREGULAR = {"is": "am", "has": "have", "does": "do", "goes": "go", "was": "was"}
_ADJECTIVE_ENDINGS = ("ly", "ed", "ive", "ful", "ous", "al", "ent", "ant", "ic", "able", "ible", "ing", "less")
_ADJECTIVES = frozenset("calm kind direct quiet shy warm blunt loyal proud stubborn patient impatient "
                        "gentle honest curious sharp dry brave bold open private nervous".split())


def first_person(text: str) -> str:
    """A second-person perspective rewritten in the first person."""
    out = text.strip()
    for pattern, repl in _SWAPS:
        out = re.sub(pattern, repl, out, flags=re.IGNORECASE)
    out = re.sub(r"(^|[.;:!?]\s+|,\s+|\b(?:and|but)\s+)you\b", lambda m: m.group(1) + "I", out, flags=re.I)
    out = re.sub(r"\byou\b", "me", out, flags=re.IGNORECASE)
    return _cap(out)


def as_me(text: str, name: str) -> str:
    """Third-person mentions of the character (`Bob apologises`) turned into `I apologise`."""
    if not name:
        return text
    out = re.sub(rf"\b{re.escape(name)}\s+([a-z]+)\b", lambda m: "I " + base_verb(m.group(1)), text)
    out = re.sub(rf"\b{re.escape(name)}'s\b", "my", out)
    return re.sub(rf"\b{re.escape(name)}\b", "me", out)


def base_verb(word: str) -> str:
    """`apologises` -> `apologise`, `misses` -> `miss`, `tries` -> `try`, `is` -> `am`."""
    lower = word.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if re.search(r"(ss|sh|ch|x|z)es$", lower):
        return lower[:-2]
    if lower.endswith("s") and not lower.endswith(("ss", "us")):
        return lower[:-1]
    return lower


def self_trait(trait: str) -> str:
    """A profile bullet as the character would say it of themselves, ending with a full stop."""
    trait = re.sub(r"\b(his|her|their)\b", "my", trait.strip().rstrip("."))
    if match := re.match(r"^when ([^:]{2,30}):\s*(.+)$", trait, re.I):
        return f"When I'm {match.group(1).lower()}, {self_trait(match.group(2))[:-1].replace('I ', 'I ', 1)}."
    if match := re.match(r"^default(?: state)?:\s*(.+)$", trait, re.I):
        return f"Most of the time I'm {match.group(1).lower()}."
    words = trait.split()
    if not words:
        return ""
    head = words[0].lower()
    if head in _IRREGULAR or (head.endswith("s") and not head.endswith(("ss", "us", "ous")) and len(head) > 3):
        clauses = [c.strip() for c in re.split(r",\s*", trait)]
        verbs = [" ".join([base_verb(c.split()[0])] + c.split()[1:]) if c else c for c in clauses]
        return "I " + ", ".join(verbs) + "."
    if head in ("a", "an", "the") or head in _ADJECTIVES or head.endswith(_ADJECTIVE_ENDINGS):
        return f"I'm {trait[:1].lower() + trait[1:]}."
    return f"I know this about myself: {trait[:1].lower() + trait[1:]}."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
