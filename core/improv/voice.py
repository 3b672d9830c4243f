"""Turning what the briefing says about a character into the character's own first-person voice.

`Your private perspective: You are under pressure` -> `I am under pressure`; a goal that names the
character (`Bob apologises`) -> `I apologise`; a profile bullet (`Raises voice when frustrated`)
-> `I raise my voice when frustrated`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from promptdesk.core.protocol.person_names import given_name, latin, spoken_name

_SWAPS = ((r"\byou\s+are\b", "I am"), (r"\byou're\b", "I'm"), (r"\byou've\b", "I've"),
          (r"\byou'll\b", "I'll"), (r"\byou'd\b", "I'd"), (r"\byours\b", "mine"),
          (r"\byourself\b", "myself"), (r"\byour\b", "my"))
_IRREGULAR = {"is": "am", "has": "have", "does": "do", "goes": "go", "was": "was"}
_COMMON_VERBS = frozenset(
    "speak nod smile laugh sigh look go get talk shout avoid change withdraw shut leave walk cry fidget "
    "pace promise retreat push snap joke deflect listen ask answer explain stare freeze raise lower "
    "become turn start stop make take give keep fall grow try let say mean care hide admit want need show work "
    "sleep worry hate love like wait stay rest sit stand move return breathe hesitate apologise agree disagree shrug "
    "frown blush pause insist interrupt argue whisper mutter mumble stammer wince flinch sulk relax settle grin "
    "blink sniff repeat reply know feel think hope forget remember notice".split())
_PAST = ("knew|told|ran|spent|made|took|saw|lost|left|got|came|went|kept|said|thought|felt|wrote|grew|began|became|"
         "won|built|bought|brought|caught|fought|found|gave|heard|held|led|lent|met|paid|sold|sent|sat|slept|stood|"
         "taught|broke|chose|drove|forgot|hid|stole|swore|threw|woke|wore|ate|drank|fell|flew|hit|hurt|let|meant|"
         "put|quit|read|rode|rang|sang|shot|shut|spoke|spent|struck|swam|tore|understood|won")
"""Past forms a `you` before is the subject of (`Nobody knows you wrote it` -> `Nobody knows I wrote it`)."""
_ADJECTIVE_ENDINGS = ("ly", "ed", "ive", "ful", "ous", "al", "ent", "ant", "ic", "ate", "able", "ible", "ing", "less")
_ADJECTIVES = frozenset("calm kind quiet prone shy warm blunt loyal proud stubborn patient impatient "
                        "gentle honest curious sharp dry brave bold open private nervous".split())


@lru_cache(maxsize=1024)
def first_person(text: str) -> str:
    """A second-person perspective rewritten in the first person."""
    out = text.strip()
    for pattern, repl in _SWAPS:  # `Your mother` opening a sentence is `My mother`
        out = re.sub(pattern, lambda m, r=repl: _cap(r) if m.group(0)[:1].isupper() else r, out, flags=re.IGNORECASE)
    out = re.sub(r"(^|[.;:!?]\s+|,\s+|\b(?:and|but|because|since|when|if|that|so|while|although|as)\s+)you\b",
                 lambda m: m.group(1) + "I", out, flags=re.I)
    out = re.sub(rf"\byou(?=\s+(?:\w+ed|can|could|will|would|should|must|may|might|want|need|know|think|feel|"
                 rf"have|had|were|weren't|wasn't|won't|can't|couldn't|wouldn't|haven't|hadn't|do|did|don't|didn't|value|love|hate|like|hope|wish|still|never|also|{_PAST})\b)", "I", out,
                 flags=re.I)
    out = re.sub(r"\byou\b", "me", out, flags=re.IGNORECASE)
    out = re.sub(r"(?<!\bif )(?<!\bIf )(?<!\bwish )(?<!\bthough )\bI (were)(n't)?\b",  # `because I were afraid` -> `I was`
                 lambda m: "I was" + (m.group(2) or ""), out)
    out = re.sub(r"(^|[.!?]\s+)?\b(I|me) and ((?:my |the |a |an |our )?[\w'-]+)(?=[\s,.;:!?]|$)",  # `I and Dev` -> `Dev and I`
                 lambda m: (m.group(1) or "") + (_cap(m.group(3)) if m.group(1) is not None else m.group(3))
                 + f" and {m.group(2)}", out)
    return _cap(out)


def as_me(text: str, name: str, pronoun: str = "") -> str:
    """Third-person mentions of the character (`Bob apologises`) turned into `I apologise`, with their
    own possessives in that clause (`Kwame explains the gap in his CV` -> `I explain the gap in my
    CV`; `her` only for a character the profile calls `she`: `Temperament.pronoun`); a titled name is
    also found by its short forms (`Amal admits` for Dr Amal Haddad, `Abuela Rosa gives` for Abuela
    Rosa Delgado)."""
    if not name:
        return text
    forms = {name, spoken_name(name), given_name(name)}
    forms |= {latin(form) for form in forms}  # a goal in English names Олег Петров `Oleg`
    name = next((n for n in sorted(forms - {""}, key=len, reverse=True)
                 if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text)), name)
    out = re.sub(rf"\b{re.escape(name)}\s+(must|should|shall|will|would|can|could|may|might|has to|needs to)\b([^.;:!?]*)",
                 lambda m: f"I {base_verb(m.group(1).split()[0])}{' to' if ' ' in m.group(1) else ''}"
                           + own_possessives(m.group(2), pronoun), text)
    out = re.sub(rf"\b{re.escape(name)}\s+([a-z]+(?:s|ed)|{'|'.join(_IRREGULAR)})\b([^.;:!?,]*)",
                 lambda m: "I " + base_verb(m.group(1)) + own_possessives(m.group(2), pronoun), out)
    out = re.sub(rf"\b{re.escape(name)}'s\b", "my", out)
    out = re.sub(rf"\b{re.escape(name)} and ([A-Z][\w'-]*)(?= [a-z])", r"\1 and I", out)
    out = re.sub(rf"(?<=\w and ){re.escape(name)}(?= [a-z])", "I", out)
    return re.sub(rf"\b{re.escape(name)}\b", "me", out)


def own_possessives(clause: str, pronoun: str = "") -> str:
    """The rest of a clause whose subject became `I`: the subject's possessives are `my` (`his`, `their`;
    `her` before a noun when the character is `she` or the profile does not say; `his` stays another's
    when the character is `she`, `her` when `he`)."""
    named = re.search(r"(?<!^)\b[A-Z][\w'-]+|\b(?:him|them)\b", clause.strip())
    mine = "her" if pronoun == "she" else "his" if pronoun == "he" else "his" if named else "his|her"
    subject = {"she": "she", "he": "he"}.get(pronoun, "they")
    clause = re.sub(rf"^(\s+(?:that\s+)?)(?:{subject})\s+(is|are|has|have|was|were|does|do|[a-z]+ed|[a-z]+)\b",
                    lambda m: f"{m.group(1)}I {_SUBJECT_VERBS.get(m.group(2), {'are': 'am', 'were': 'was'}.get(m.group(2), m.group(2)))}",
                    clause)  # `admits he missed it` -> `admit I missed it`
    clause = re.sub(r"\b(?:himself|herself|themselves)\b", "myself", clause)
    clause = re.sub(rf"\b(?:{mine}|their)\b(?=\s+([\w'-]+))", lambda m: m.group(0) if m.group(1).lower() in _NOT_A_NOUN
                    or m.group(1).lower() in _OBJECT_OPENS else "my", clause)
    return clause


def mid_sentence(text: str, names: tuple[str, ...] = ()) -> str:
    """A sentence made fit to follow a colon: its first letter lowered unless it starts with a name."""
    first = text.split(" ", 1)[0].strip(",.;:")
    keep = first in ("I", "I'm") or any(first and first in (n.split()[0], given_name(n)) for n in names if n) \
        or first.isupper() or _named_subject(text)
    return text if keep or not text else text[:1].lower() + text[1:]


def _named_subject(text: str) -> bool:
    """Whether a sentence opens on a name as its subject (`Oleg admits ...`, `Oleg and Anya agree`): a
    capitalised word no sentence opens on otherwise, before a verb in `-s` or another name."""
    words = text.split()
    return len(words) > 1 and words[0][:1].isupper() and words[0].lower() not in _OPENERS and bool(
        re.fullmatch(r"[a-z]+s|and|&", words[1]))


_OPENERS = frozenset("the a an let no it this that there when if once after before everyone everybody they both all "
                     "we someone each nobody one".split())


def base_verb(word: str) -> str:
    """`apologises` -> `apologise`, `misses` -> `miss`, `tries` -> `try`, `is` -> `am`."""
    lower = word.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if re.search(r"(?:i[sz]|y[sz])es$", lower):
        return lower[:-1]
    if re.search(r"(ss|sh|ch|x|z)es$", lower):
        return lower[:-2]
    if lower.endswith("s") and not lower.endswith(("ss", "us")):
        return lower[:-1]
    return lower


def self_trait(trait: str, pronoun: str = "") -> str:
    """A profile bullet as the character would say it of themselves, ending with a full stop. With the
    profile's `pronoun` for its character (`he`, `she`), only that pronoun's words are the character
    (`when he wants to interject` -> `when I want to interject`; `mentored him` -> `mentored me`), and
    another's stay another's (`letting her down`); without it, every possessive is theirs."""
    trait = _as_mine(trait.strip().rstrip("."), pronoun)
    if (adverb := re.match(r"^((?:[A-Za-z]+ly|never|always|often|sometimes|seldom|still|also|just|even|"
                           r"already|almost)\s+)(\S.*)$", trait, re.I)) and _kind(adverb.group(2)) == "verb":
        said = self_trait(adverb.group(2), pronoun)  # `Rarely raises my voice` -> `I rarely raise my voice`
        return re.sub(r"^I ", lambda _: "I " + adverb.group(1).lower(), said, count=1)
    if match := re.match(r"^when ([^:]{2,30}):\s*(.+)$", trait, re.I):
        return f"When I'm {match.group(1).lower()}, {self_trait(match.group(2), pronoun)}"
    if match := re.match(r"^default(?: state)?:\s*(.+)$", trait, re.I):
        return f"Most of the time I'm {match.group(1).lower()}."
    trait, colon, listed = trait.partition(": ")  # `Uses numbers when scared: rent, fees, covers` lists nouns
    clauses = _phrases([c.strip() for c in re.split(r",\s*(?![^()]*\))", trait) if c.strip()])  # not inside brackets
    if not clauses:
        return ""
    if colon:
        return self_trait(trait, pronoun).rstrip(".") + f": {listed}."
    kinds = [_kind(c) for c in clauses]
    if kinds[0] == "other":
        return f"I know this about myself: {_low(trait)}."
    spoken = [_clause(clauses[0], kinds[0], lead=True)]
    spoken += [_clause(c, k, lead=kinds[0] != k) for c, k in zip(clauses[1:], kinds[1:])]
    sentence = ", ".join(spoken)
    if kinds[0] in ("verb", "past"):
        sentence = re.sub(r"\b(and|then|or|but)\s+([a-z-]+)\b(?=\s+([\w-]+))?", _connected_verb, sentence)
    return sentence + "."


_ADVERBS = "already|always|never|often|still|just|sometimes|usually|rarely|seldom|even|also|only|almost"
"""Adverbs that may stand between a subject and its verb (`when she already knows`)."""
_SUBJECT_VERBS = {"is": "am", "was": "was", "has": "have", "does": "do", "isn't": "am not", "wasn't": "wasn't",
                  "hasn't": "haven't", "doesn't": "don't"}
_NOT_A_NOUN = frozenset("down up out off over back away in on at to for with from and or but when if as than "
                        "because about into onto again too".split())


def _phrases(clauses: list[str]) -> list[str]:
    """Comma-split clauses with a noun phrase split by a comma between its adjectives put back together
    (`Uses the calm, explaining voice` is one clause, not `I use the calm, I'm explaining voice`)."""
    out: list[str] = []
    for clause in clauses:
        words = out[-1].split() if out else []
        head = clause.split()
        qualifies = len(head) > 1 and re.fullmatch(r"[a-z]+ly|even|only|also|mostly", head[0].lower()) \
            and head[1].lower() in _QUALIFIED  # `Dislikes being managed, especially by people ...`
        if out and qualifies or len(words) > 1 and words[-2].lower() in _DETERMINERS \
                and _kind(clause) == "adjective" and clause.split()[0].lower() not in ("a", "an", "the"):
            out[-1] = f"{out[-1]}, {clause}"
        else:
            out.append(clause)
    return out


_DETERMINERS = frozenset("a an the my his her their our this that its".split())
_QUALIFIED = frozenset("by with when if at in on around among for to about after before under".split())
"""What follows an adverb that qualifies the clause before it rather than opening one of its own."""


def _as_mine(trait: str, pronoun: str) -> str:
    """The character's own pronouns in a bullet said as `I`, `me`, `my`, `myself` (see `self_trait`)."""
    if pronoun not in ("he", "she"):
        return re.sub(r"\b(his|her|their)\b", "my", trait)
    subject, possessive, reflexive = (("he", "his", "himself") if pronoun == "he" else ("she", "her", "herself"))
    trait = re.sub(rf"\b{subject}\s+((?:(?:{_ADVERBS}|\w+ly)\s+)?)([\w'-]+)", lambda m: "I " + m.group(1) + _SUBJECT_VERBS.get(
        m.group(2).lower(), base_verb(m.group(2)) if m.group(2).lower().endswith("s") else m.group(2)), trait, flags=re.I)
    trait = re.sub(rf"\b{reflexive}\b", "myself", trait, flags=re.I)
    if pronoun == "he":
        return re.sub(r"\bhim\b", "me", re.sub(r"\bhis\b", "my", trait, flags=re.I), flags=re.I)
    return re.sub(r"\bher\b(\s+([\w'-]+))?", lambda m: ("me" if not m.group(2) or m.group(2).lower() in _NOT_A_NOUN
                                                        else "my") + (m.group(1) or ""), trait, flags=re.I)


def _connected_verb(match: re.Match[str]) -> str:
    """`and speaks` -> `and speak` after a first-person verb (one not in the common list when an object
    follows it: `and misses the sea`)."""
    word, base = match.group(2), base_verb(match.group(2))
    verb = word != base and (word.lower() in _IRREGULAR or base.split("-")[-1] in _COMMON_VERBS or base.endswith(("ise", "ize"))
                             or (match.group(3) or "").lower() in _OBJECT_OPENS)
    return f"{match.group(1)} {base if verb else word}"


_OBJECT_OPENS = frozenset("a an the his her their my our its this that these those up out off down back over two three "
                          "four five six seven eight nine ten dozens hundreds".split())


def _kind(clause: str) -> str:
    words = clause.lower().split()
    head = words[0]
    object_next = len(words) > 1 and (words[1] in _OBJECT_OPENS or words[1].isdigit())
    if head in _PAST.split("|") or (head.endswith("ed") and object_next):
        return "past"
    if head in _IRREGULAR or (head.endswith("s") and not head.endswith(("ss", "us", "ous")) and len(head) > 3):
        return "verb"
    if head in ("a", "an", "the") or head in _ADJECTIVES or head.endswith(_ADJECTIVE_ENDINGS):
        return "adjective"
    return "other"


def _clause(clause: str, kind: str, lead: bool) -> str:
    words = clause.split()
    if kind == "verb":
        said = " ".join([base_verb(words[0])] + words[1:])
        return f"I {said}" if lead else said
    if kind == "past":
        return f"I {_low(clause)}" if lead else _low(clause)
    if kind == "adjective":
        return f"I'm {_low(clause)}" if lead else _low(clause)
    return _low(clause)


def _low(text: str) -> str:
    lower = text[1:2].islower() or text.split(" ", 1)[0] in ("A", "An", "The")
    return text[:1].lower() + text[1:] if lower else text


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
