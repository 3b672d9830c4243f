"""Who must do what: a scene goal read as clauses, and whether a spoken line does a clause's act.

`Bob gives a sincere apology, Alice accepts, and they agree on accountability measures` reads as three
clauses: Bob / apologise; Alice / accept; everyone / agree (on `accountability measures`). A line does
an act when one of its sentences carries the act's marker words, not as a question and not negated
(`I'm not sorry` is no apology; `Sorry, I have to cut in` is an interjection, not one; `Sorry for all of it.` is one). This is word matching, not understanding: it is how the offline
judge decides a goal (docs/guide/offline-improviser.md), and how the improviser knows which acts its
scene is heading for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

from promptdesk.core.protocol.person_names import given_name, latin, spoken_name, title_role
from promptdesk.core.protocol.recipients import for_recipients

ACTS: dict[str, tuple[str, str]] = {
    "apologise": (r"apolog|\bsay(?:s)? sorry\b", r"\b(?:i'?m|i am|am|so|truly|really|deeply|very) sorry\b|^\W*sorry\W*$|^\W*sorry (?:for|about|that)\b"
                  r"|\bapologi[sz]e|\bmy apologies\b|\bowe (?:you|them|everyone) an apology\b|\bmy fault\b"
                  r"|\bi was wrong\b"),
    "accept": (r"\baccept|\bforgiv", r"\baccept|\bi forgive\b|\bforgiven\b"),
    "admit": (r"\badmit|\bconfess|\bown(?:s)? up\b|\breveal", r"\badmit|\bconfess|\bthe truth is\b|\bi should have told\b"),
    "thank": (r"\bthank", r"\bthank"),
    "promise": (r"\bpromis|\bcommit(?:s)? to\b|\bvow", r"\bpromise|\bi will\b|\bi'll\b|\bi commit\b"),
    "agree": (r"\bagree|\bsettle(?:s)? on\b|\bdecide(?:s)? on\b", r"\bagree|\bagreed\b|\bit'?s a deal\b|\bdeal\.|\bsettled\b"),
    "refuse": (r"\brefus|\bdecline|\bturn(?:s)? down\b", r"\bno\b|\brefuse|\bwon'?t\b|\bnot going to\b"),
}
"""act -> (how a goal names it, the marker words of a line that does it)."""
_PLURAL = re.compile(r"^(?:they|both|everyone|everybody|all|the two|the three|the pair|together|we|the (?:whole )?"
                     r"(?:crew|team|group|family|couple|class|committee|board|council|band|gang|cast|household|"
                     r"parents|siblings|friends|partners|neighbours|neighbors))\b", re.I)
"""A clause whose subject is the whole cast (`they agree`, `the crew agrees`)."""
_NOT_A_NAME = frozenset("the a an let no it this that there when if once after before everyone they both all we "
                        "someone each".split())
_NEGATION = re.compile(r"\b(?:not|never|no|nothing|cannot)\b|n[’']t\b", re.I)
"""A negation before a marker (`I'm not sorry`, `I can't accept that`, `I won’t apologise`)."""
_TALKED_ABOUT = re.compile(r"(?:\b(?:should|could|might|ought(?:\s+to)?|maybe|perhaps|someday|refus\w*(?:\s+to)?)|"
                           r"\b(?:hope|hoping|wish|wishing)\s+(?:\w+\s+){0,2}?(?:can|could|will|would|to|\w+'ll)|"
                           r"\b(?:want|wants|need|needs|expect|expects|ask|asks|asked|asking|make|made)\s+"
                           r"(?:you|him|her|them|me|us)(?:\s+to)?|\byou\s+(?:must|have\s+to|need\s+to|got\s+to))"
                           r"\s+(?:(?:\w+ly|just|all|both|also|then|now|finally)\s+)?$", re.I)
"""An act only talked about, not done, just before its marker (`We should agree`, `I hope we can agree`,
`You should apologise`, `I want you to admit it`, `I refuse to apologise`; not `I want you to know I'm sorry`)."""
_TAKEN_BACK = r"\b(?:take|takes|took|taking) (?:it|that|this|everything|all of (?:it|that)|my \w+) back\b|\bi (?:retract|withdraw)\b"
_UNDONE = {"apologise": _TAKEN_BACK + r"|\bnot (?:\w+ )?sorry\b|\bno apology\b"}
"""What takes an act back (`I take it back`, `I retract that`; `I'm not sorry at all`)."""
_CONDITION = re.compile(r"\b(?:if|unless)\s+(?:you|he|she|they|we)\b", re.I)
"""An act made to wait on someone else's, in its own clause or one before it (`If you apologise, I'll accept`;
`I'll accept it if you apologise`; not `I accept, and it is behind us if we do the work`)."""
_NEGATED = re.compile(r"^\s*(?:never|(?:(?:does|do|did|will|would|must|should|shall|can|could|may)\s+(?:not|never))|"
                      r"(?:doesn|don|didn|won|wouldn|mustn|shouldn|can|couldn)[’']t|cannot|no longer)\b"
                      r"(?!\s+(?:wait|help|stop|resist)\b)", re.I)
"""A clause's verb negated right after its subject (`Mara never admits`, `Lena does not confess`)."""
_CONTENT = re.compile(r"[a-z]{5,}")
_NO_SPACE = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
"""A letter of a script written without spaces between words (Thai, Myanmar, Khmer, kana, CJK)."""
_FILLER = frozenset("never doesn longer cannot wouldn mustn shouldn couldn gives makes offers shows takes sincere sincerely genuine genuinely explicit explicitly clearly finally really "
                    "properly something someone together other their about after before which there where".split())
STEM = 5
PERSON_WORD = re.compile(r"(?:er|or|ist|ian|ant|ent|ess|man|woman|eer|ee)$|^(?:captain|judge|doctor|nurse|witness|chief|"
                         r"king|queen|prince|boss|host|guest|child|kid|bride|groom|chef|cook|spy|thief|coach|mayor|priest|"
                         r"monk|pilot|clerk|maid|nanny|poet|guard|agent|stranger|medic|cop|vet|heir|twin|widow)$")
"""A word that names a person (`the captain`, `the tenant`, `the buyer`): a clause with no act of the table
names a role only with one (`The captain orders`, not `The storm passes`)."""
NOT_VERBS = "his|hers|its|this|thus|ours|yours|theirs|us|as|yes|plus|perhaps|always|sometimes|news|glasses|series"
"""Words ending in `s` that a goal clause may hold and that are no verb (`hands over his keys`)."""


@dataclass(frozen=True)
class GoalClause:
    """One thing the goal asks for: who (names; `('*',)` for all of them; `()` for anyone), which act
    (or None when no act is recognised), and its other content words (first five letters, after a
    final `s`: `rules` is `rule`, so `I rule` says it)."""

    text: str
    who: tuple[str, ...]
    act: str | None
    words: tuple[str, ...]
    negated: bool = False
    """The goal asks that its person never do it (`Mara never admits the affair`, `Lena does not confess`)."""

    @property
    def everyone(self) -> bool:
        return self.who == ("*",)


@lru_cache(maxsize=256)
def read_goal(goal: str, cast: tuple[str, ...] = (), roles: tuple[tuple[str, str], ...] = ()) -> tuple[GoalClause, ...]:
    """The goal's clauses, in order. With the `cast` (display names), a clause that opens with a cast
    member's name, or with a first name only one of them has, names that member, in any script and
    whatever punctuation the name holds (`Dr. Chen`, `山田花子`), and names listed before one act
    (`Ruth and Amal agree`, `Ann, Bo and Cy agree`) are one clause; without it, a capitalised first
    word is taken as a name. With `roles` ((role, cast member) pairs, as the improviser reads them:
    `promptdesk.core.improv.roles`), a clause opening with `the <role>` names the member who plays it."""
    titled = [(title_role(member), member) for member in cast if title_role(member)]
    roles = (*roles, *((role, member) for role, member in titled if [r for r, _ in titled].count(role) == 1
                       and role not in {r for r, _ in roles}))  # `the captain` is Captain Efua Osei
    names = sorted(cast, key=len, reverse=True)
    held = {f"\ue000{i}\ue001": name for i, name in enumerate(names)
            if re.search(r"[;,.\uff1b\u061b\u3002\uff01\uff1f\u0964\uff0c\u3001\u060c]|\band\b", name)}
    for mark, name in held.items():
        goal = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", mark, goal, flags=re.I)
    pieces = re.split(r"([;\uff1b\u061b\u3002\uff01\uff1f\u0964]|\.(?!\s*[a-z0-9])|\band then\b)"
                      r"|([,\uff0c\u3001\u060c]|\band\b(?=\s+(?:they|both|everyone|[A-Z])))", goal)
    joined: list[str] = []
    listing = False
    for piece, hard, soft in zip(pieces[::3], [*pieces[1::3], None], [*pieces[2::3], None]):
        for mark, name in held.items():
            piece = piece.replace(mark, name)
        piece = re.sub(r"^(?:and|then|but|so)\s+", "", piece.strip(" ."), flags=re.I)
        if piece and listing and joined and cast and _only_names(joined[-1], cast):
            piece = f"{joined.pop()} and {piece}"
        if piece:
            joined.append(piece)
        listing = bool(soft) and not hard
    clauses: list[GoalClause] = []
    for part in (split for part in joined for split in _acts_in_turn(part)):
        clause = _clause(part, cast, roles)
        if not clause.who and clauses and _ACT_VERB.match(part):  # `..., and thanks him`: the same person
            clause = replace(clause, who=clauses[-1].who)
        clauses.append(clause)
    return tuple(clauses)


_ACT_VERB = re.compile(r"(?:thank|apologi[sz]e|admit|accept|forgive|promise|agree|refuse|confess|vow|decline|commit|"
                       r"settle|decide|turn|say|own)s?\b")
"""The verb of an act of the table, as a clause with no subject of its own opens on it (`thanks him`,
`apologises to Alice`, `thank Rosa`); not a noun of one (`apology`, `acceptance`)."""


def _acts_in_turn(part: str) -> list[str]:
    """A clause that names an act, then `and` and another act's verb, as one clause per act, the later
    ones without their subject (`Alice forgives Bob and thanks him` -> `Alice forgives Bob`, `thanks him`):
    each act is asked of the clause's person. A noun after `and` is no second act (`an explanation and
    apology`)."""
    for joint in re.finditer(r",?\s+and\s+(?:also\s+|then\s+)?", part):
        first, rest = part[:joint.start()], part[joint.end():]
        if _ACT_VERB.match(rest) and _names_act(rest) and _names_act(first):
            return [first, *_acts_in_turn(rest)]
    return [part]


def _names_act(text: str) -> bool:
    """Whether the text names an act of the table."""
    return any(re.search(named, text, re.I) for named, _ in ACTS.values())


def person_of(name: str, cast: Iterable[str]) -> str | None:
    """The cast member a name in a goal denotes: the one whose display name it is (case ignored), else
    the only one whose first name it is; None when no one, or more than one, answers to it."""
    cast = list(cast)
    folded = name.casefold()
    exact = [member for member in cast if folded in (member.casefold(), latin(member).casefold())]
    if exact:
        return exact[0]
    first = [member for member in cast if folded in {short.casefold() for short in _short_names(member)}]
    return first[0] if len(first) == 1 else None


def _short_names(member: str) -> set[str]:
    """The shorter names a member answers to: the first word, the given name after any title
    (`Dr Amal Haddad` -> `Amal`), the title with the surname (`Dr Haddad`) and the surname (`Nietzsche` for
    Friedrich Nietzsche; only when no one else has it, as `person_of` reads them)."""
    words = member.split()
    shorts = {given_name(member), spoken_name(member)} | ({words[-1]} if len(words) > 1 and words[-1][:1].isupper() else set())
    shorts |= {latin(short) for short in (*shorts, member)}  # `Oleg` for Олег Петров
    return {short for short in shorts if short and short != member}


def _cast_opening(text: str, cast: tuple[str, ...]) -> tuple[tuple[str, ...], str] | None:
    """The cast members a clause opens with (`Ann Lee and Grace agree`), and the rest of it: each by
    their display name, or by a first name only they have."""
    calls = [(member, member) for member in cast]
    calls += [(short, member) for member in cast for short in sorted(_short_names(member))
              if person_of(short, cast) == member]
    calls.sort(key=lambda call: len(call[0]), reverse=True)
    who: list[str] = []
    rest = text
    while hit := next(((call, member) for call, member in calls if _opens(rest, call)), None):
        who.append(hit[1])
        rest = rest[len(hit[0]):]
        joint = re.match(r"^\s*(?:and|&|,)\s*", rest)
        if not joint or not any(_opens(rest[joint.end():], call) for call, _ in calls):
            break
        rest = rest[joint.end():]
    return (tuple(who), rest) if who else None


def _only_names(text: str, cast: tuple[str, ...]) -> bool:
    """Whether the text is nothing but cast members' names (`Ruth`, `Ann and Bo`)."""
    opening = _cast_opening(text, cast)
    return opening is not None and not opening[1].strip(" ,&")


def _opens(text: str, name: str) -> bool:
    """Whether `text` opens with `name` (case ignored) as a whole word: not followed by a letter or a
    digit, unless a script written without spaces joins them (`山田花子が`)."""
    if text[:len(name)].casefold() != name.casefold():
        return False
    after = text[len(name):len(name) + 1]
    return not after.isalnum() or bool(_NO_SPACE.match(after) or _NO_SPACE.match(name[-1:]))


def _clause(text: str, cast: tuple[str, ...] = (), roles: tuple[tuple[str, str], ...] = ()) -> GoalClause:
    words = text.split()
    who: tuple[str, ...] = ()
    rest = text
    opening = _cast_opening(text, cast) if cast else None
    played = _role_opening(text, roles) if roles else None
    if opening:
        who, rest = opening
    elif _PLURAL.match(text):
        who, rest = ("*",), text
    elif played:
        who, rest = played
    elif words and words[0][:1].isupper() and words[0].lower() not in _NOT_A_NAME:
        names = re.match(r"^((?:[A-Z][\w'-]*)(?:\s+(?:and|&)\s+[A-Z][\w'-]*)*)\b(.*)$", text)
        if names:
            who = tuple(person_of(n.strip(), cast) or n.strip() for n in re.split(r"\s+(?:and|&)\s+", names.group(1)))
            rest = names.group(2)
    named_at = [(found.start(), name) for name, (named, _) in ACTS.items() if (found := re.search(named, rest, re.I))]
    act = min(named_at)[1] if named_at else None  # the first act named: `Alice accepts Bob's apology` is an acceptance
    if not who and re.match(r"(?:the|a|an)\s", rest, re.I):  # a role no one was found to play: its deed, not its name
        verb = re.search(ACTS[act][0], rest, re.I) if act else re.search(rf"(?<![\w'])(?!(?:{NOT_VERBS})\b)[a-z]+s\b", rest)
        subject = rest[:verb.start()].split() if verb else []
        rest = rest[verb.start():] if subject and PERSON_WORD.search(subject[-1].lower()) else rest
    content = sorted({re.sub(r"(?<=\w{4})e?s$", "", w)[:STEM] for w in _CONTENT.findall(rest.lower()) if w not in _FILLER
                      and not (act and re.search(ACTS[act][0], w, re.I))})
    return GoalClause(text=text, who=who, act=act, words=tuple(content), negated=bool(_NEGATED.match(rest)))


def _role_opening(text: str, roles: tuple[tuple[str, str], ...]) -> tuple[tuple[str, ...], str] | None:
    """The members a clause's opening roles name (`The landlord agrees ...` -> Mara; `The buyer and the
    stallholder agree` -> Gus and Fatima), and the rest of it."""
    who: list[str] = []
    rest = after = text
    while hit := next(((member, opening) for role, member in sorted(roles, key=lambda pair: -len(pair[0]))
                       if (opening := re.match(rf"^(?:the|a|an|our|my|your|his|her|their)\s+{re.escape(role)}(?=\s|$)",
                                               rest, re.I))), None):
        who.append(hit[0])
        after = rest[hit[1].end():]
        joint = re.match(r"^\s*(?:and|&)\s+", after)
        if not joint:
            break
        rest = after[joint.end():]
    return ((*who,), after) if who else None


def does_act(words: str, act: str) -> bool:
    """Whether some sentence of `words` does `act`: its marker, not in a question, not negated."""
    return any(stance is True for stance in stances(words, act))


def stances(words: str, act: str) -> list[bool]:
    """Each sentence of `words` that states the act, in order: True where it does it, False where it says,
    negated, that it is not done (`I'm not sorry`, `I don't agree`); questions and acts only talked
    about state nothing."""
    marker, said = ACTS[act][1], []
    for sentence in re.findall(r"[^.!?]+[.!?]*", words or ""):
        if sentence.strip().endswith("?"):
            continue
        stance = None
        for found in re.finditer(marker, sentence, re.I):
            before = re.split(r"[,;:—–]", sentence[:found.start()])[-1]
            waits = _CONDITION.search(f"{sentence[:found.start()]} {re.split(r'[,;:—–]', sentence[found.end():])[0]}")
            if waits or _TALKED_ABOUT.search(before):
                continue
            done = not (act != "refuse" and _NEGATION.search(before[-24:]))
            stance = done or bool(stance)
            if done:
                break
        undone = re.search(_UNDONE.get(act, _TAKEN_BACK), sentence, re.I)
        if stance is None and undone and not _NEGATION.search(sentence[:undone.start()][-24:]):
            stance = False
        if stance is not None:
            said.append(stance)
    return said


def _doers(lines: list[tuple[str, str]], act: str, taken_back: bool = True) -> set[str]:
    """Who did the act; with `taken_back`, not one whose latest word on it undoes it (`I'm sorry.`, then
    later `I take it back. I'm not sorry.`)."""
    last: dict[str, bool] = {}
    for who, text in lines:
        for stance in stances(text, act):
            last[who] = stance if taken_back else (last.get(who, False) or stance)
    return {who for who, done in last.items() if done}


def clause_met(clause: GoalClause, lines: Iterable[tuple[str, str]], cast: tuple[str, ...] = (),
               kept: bool = False) -> tuple[bool | None, str]:
    """Whether `(speaker, words)` lines do what the clause asks, by whom it asks (names read against
    the `cast`), with a short reason. An act its doer later takes back (their latest word on it negates
    it) is undone, except where `kept` asks whether it was ever done (a clause asking it never be). None:
    the clause holds nothing it can read."""
    lines = [(who, text) for who, text in lines if text]
    if clause.negated:  # met while its person has not done it (`Mara never admits the affair`)
        done, why = clause_met(replace(clause, negated=False), lines, cast, kept=True)
        if done is None:
            return None, why
        return not done, f"'{clause.text}': " + ("broken" if done else "kept") + f" ({why})"
    if clause.act and clause.words and clause.act in ("agree", "promise", "refuse"):
        spoken = " ".join(text.lower() for _, text in lines)
        missing = [w for w in clause.words if w not in spoken]
        if len(missing) > len(clause.words) / 2:
            return False, f"'{clause.text}': never spoken of ({', '.join(missing)})"
    if clause.act:
        lines = for_recipients(clause.text, clause.who, lines, cast) if clause.act == "thank" else lines
        doers = _doers(lines, clause.act, taken_back=not kept)
        if clause.everyone:
            speakers = set(cast) or {who for who, _ in lines}   # the cast: one who spoke first is not "they" alone
            ok = len(doers) >= min(2, len(speakers)) and bool(doers)
            return ok, f"{clause.act}: {', '.join(sorted(doers)) or 'no one'}"
        if clause.who:
            named = [n for n in clause.who if not any(same_person(n, d, cast) for d in doers)]
            wrong = sorted(d for d in doers if not any(same_person(n, d, cast) for n in clause.who))
            ever = _doers(lines, clause.act, taken_back=False)
            back = not kept and any(same_person(n, d, cast) for n in named for d in ever)
            why = f"{clause.act} by {' and '.join(clause.who)}: " + ("yes" if not named else "taken back" if back else "never")
            return not named, why + (f" (only by {', '.join(wrong)}, which does not count)" if named and wrong else "")
        return bool(doers), f"{clause.act}: {'yes' if doers else 'never'}"
    asking = bool(re.search(r"\bask", clause.text, re.I))  # a deed of asking is done by a question
    if not clause.words:  # a deed in short words only (`Harold asks how long he has`): its words of 3 letters or more
        clause = replace(clause, words=_short_words(clause))
        if not clause.words:  # nothing it can read (`山田花子が謝る`, `Олег извиняется`): it cannot tell
            return None, f"'{clause.text}': cannot tell (the offline judge reads English)"
    if clause.who:
        heard = said_together(clause, [text for who, text in lines if any(same_person(n, who, cast) for n in clause.who)],
                              questions=asking)
    else:
        spoken = " ".join(text.lower() for _, text in lines)
        heard = [w for w in clause.words if w in spoken]
    return len(heard) >= 0.6 * len(clause.words), f"'{clause.text}': {len(heard)} of {len(clause.words)} key words" + \
        (f" in one statement by {' and '.join(clause.who)}" if clause.who else "")


_SHORT_STOP = frozenset("the and but for with his her him has have had are was were will the its our your you she they "
                        "them their that this then than not yet also just very each any all one".split())


def _short_words(clause: GoalClause) -> tuple[str, ...]:
    """A clause's words of three letters or more, its names and its verb aside (`Harold asks how long he has`
    -> how, long); the verb alone when nothing else is left (`Pip sits` -> sit)."""
    text = clause.text
    for name in clause.who:
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", text, flags=re.I)
    words = [w for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in _SHORT_STOP and w not in _NOT_A_NAME]
    return tuple(words[1:]) if len(words) > 1 else tuple(re.sub(r"(?<=\w{2})s$", "", w) for w in words)


def said_together(clause: GoalClause, texts: Iterable[str], questions: bool = False) -> list[str]:
    """The clause's key words that its person said in one statement, the one that holds the most (a
    deed such as `Theo tells Oksana his plan` is done in a sentence, not by naming its words in
    questions or over several lines); with `questions`, a question counts (a deed of asking)."""
    best: list[str] = []
    for text in texts:
        for sentence in re.findall(r"[^.!?]+[.!?]*", text.lower()):
            if questions or not sentence.strip().endswith("?"):
                heard = [w for w in clause.words if w in sentence]
                best = heard if len(heard) > len(best) else best
    return best


def same_person(name: str, speaker: str, cast: Iterable[str] = ()) -> bool:
    """Whether a name in the goal names the speaker: the cast member it denotes (`person_of`), else
    `Bob` names the speaker `Bob` or `Bob Smith` (a name of several words only itself)."""
    if not speaker:
        return False
    member = person_of(name, cast)
    if member is not None:
        return speaker.casefold() == member.casefold()
    return speaker == name or (len(name.split()) == 1 and speaker.split()[:1] == [name])


def marker_owners(goal: str, marker: str, cast: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Who the goal names for the clause that holds `marker` (`Bob gives a sincere apology`, `apolog`
    -> `('Bob',)`), else for the clause whose act the marker is a word of (`Bob apologises`, `sorry`); ()
    when no clause naming someone holds it."""
    clauses = [clause for clause in read_goal(goal or "", cast) if clause.who and not clause.everyone]
    for clause in clauses:
        if marker.lower() in clause.text.lower():
            return clause.who
    for clause in clauses:  # a marker word of the clause's act (`sorry` for `Bob apologises`)
        if clause.act and not clause.negated and any(re.search(p, marker, re.I) for p in ACTS[clause.act]):
            return clause.who
    return ()
