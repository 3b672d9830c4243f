"""What one actor's request gives the improviser to talk with: the scene's and the character's own words.

Everything here is read from the actor's own request (its briefing): the scene's noun phrases
(prompt and goal), the place and its objects (setting), the character's private noun phrases and
sentences (perspective, in the first person), the background facts and verbal habits of the
profile, and how to address each person present. Read once per briefing (`lru_cache`): a briefing
is re-sent with every request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from promptdesk.core.improv.roles import goal_roles
from promptdesk.core.improv.scene_words import place as place_of, split_sentences, topics
from promptdesk.core.improv.voice import base_verb, first_person
from promptdesk.core.protocol.goal_acts import ACTS, read_goal
from promptdesk.core.protocol.person_names import given_name, spoken_name, title_length

PROFILE_READ = 6000
"""The characters of a profile read for material (an agent file may hold tens of kilobytes)."""
TIME_WORDS = frozenset("morning afternoon evening night day today tonight noon midnight dawn dusk early late "
                       "monday tuesday wednesday thursday friday saturday sunday spring summer autumn winter".split())
_IRREGULAR_PAST = frozenset("knew told ran spent made took had saw lost left got came went kept said thought felt "
                            "wrote grew began became won built bought brought caught fought found gave heard held "
                            "led lent met paid put read sent set sold sat slept stood taught understood".split())
_HABIT_VERBS = ("says", "uses", "calls", "starts with", "ends with")


@dataclass(frozen=True)
class Material:
    """The words one actor has to work with, all of them from its own request."""

    topics: tuple[str, ...] = ()
    mine: tuple[str, ...] = ()
    props: tuple[str, ...] = ()
    place: str = "this room"
    owner: str = ""
    facts: tuple[str, ...] = ()
    background: tuple[str, ...] = ()
    tics: tuple[str, ...] = ()
    wants: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    """What the perspective says the character has kept to themselves (`What I have never said is
    that I sold the boat` -> `I sold the boat`), in the first person."""
    accounts: tuple[str, ...] = ()
    """What the character can tell of their own story when a goal deed is telling it (`explains the
    gap`): perspective sentences in the first person that state something (not whether to speak), where a
    third person is someone of theirs named before (`I cared for my father until he died`)."""
    confined: bool = False
    """The setting is a place nobody can leave (a ship at sea, a plane in flight, a lift that is stuck):
    a close ends the talk at one's post rather than walking out."""
    register: str = "meeting"
    """`meeting` when the goal asks someone to do something (apologise, agree...), `talk` when it asks
    for no outcome: the same moves, said as a visit rather than a meeting."""


@lru_cache(maxsize=512)
def read_material(name: str, others: tuple[str, ...], setting: str, prompt: str, goal: str, perspective: str,
                  profile: str) -> Material:
    """The material of one briefing (its fields as read by `briefing_reader`)."""
    names = (name, *others, *(given_name(n) for n in (name, *others) if n))
    mine_text = first_person(perspective) if perspective else ""
    acts = any(c.act for c in read_goal(goal))
    played = {_role(profile[:PROFILE_READ]), *(role.split()[-1] for role in goal_roles(goal)),
              *people_roles(prompt, goal, (name, *others))} - {""}
    scene_topics = tuple(t for t in topics(prompt, goal if acts else "", exclude=names)
                         if not played & set(t.lower().split()) and not _names_an_act(t))
    background = _IDENTITY.sub("", _section(profile[:PROFILE_READ], "background|history|about"))
    shared = {t.lower() for t in scene_topics}
    own = [p for p in topics(mine_text, exclude=names) if p.lower() not in shared and not played & set(p.lower().split())
           and not _names_an_act(p)]
    own += [p for p in topics(background, exclude=names) if len(p.split()) > 2 and p.lower() not in shared
            and p not in own]
    return Material(topics=scene_topics, mine=tuple(own[:12]), props=_props(setting, prompt, names),
                    place=place_of(setting), owner=_owner(setting, (name, *others)),
                    facts=tuple(_sentences(mine_text)), background=tuple(_background(profile[:PROFILE_READ])),
                    tics=tuple(_tics(profile[:PROFILE_READ])), wants=tuple(_wants(mine_text)),
                    secrets=tuple(_secrets(mine_text)), accounts=tuple(_accounts(mine_text)),
                    confined=bool(_CONFINED.search(split_sentences(setting)[0] if setting.strip() else "")),
                    register="meeting" if acts else "talk")


def _names_an_act(topic: str) -> bool:
    """Whether a topic is one of the goal's acts (`the sincere apology`, `the agreement`): the act is done or
    not, never talked about as a thing (`I owe you an apology for the sincere apology`)."""
    return any(re.search(named, topic, re.I) or re.search(marker, topic, re.I) for named, marker in ACTS.values())


_IDENTITY = re.compile(r"\b(?:as|be|been|was|were|became|become|is|am|worked as|works as)\s+(?:a|an)\s+[^,.;\n]+", re.I)
"""What a background says the character is or was (`six years as a chemistry teacher`, `used to be a
head teacher`): a role they played, no topic of theirs."""


def people_roles(prompt: str, goal: str, cast: tuple[str, ...]) -> set[str]:
    """The head nouns of the roles the scene gives people present (`Priya, the hiring manager` ->
    `manager`; `Harriet Osei, a volunteer mediator` -> `mediator`) and of the people a goal's act is
    done to (`the captain thanks the chief engineer` -> `engineer`): persons, not topics."""
    heads: set[str] = set()
    names = "|".join(re.escape(n) for n in sorted({w for member in cast if member for w in (
        member, given_name(member), spoken_name(member))} - {""}, key=len, reverse=True))
    for pattern in (rf"(?<!\w)(?:{names}),\s+(?:the|a|an|his|her|their)\s+((?:[a-z'-]+\s+){{0,2}}[a-z'-]+)",
                    rf"\b(?:the|a|an)\s+((?:[a-z'-]+\s+){{0,2}}[a-z'-]+),\s+(?:{names})(?!\w)",
                    rf"(?:^|[.!?;]\s+)(?:{names})\s+the\s+([a-z'-]+)(?=\s+(?:has|is|was|had|who|[a-z]+s)\b)") if names else ():
        for match in re.finditer(pattern, prompt):
            words = match.group(1).split()
            cut = next((i for i, w in enumerate(words) if w in _ROLE_ENDS), len(words))  # `the tenant above her`
            heads.add(words[cut - 1] if cut else "")
    for match in re.finditer(r"\b(?:thank|tell|ask|forgive|help|meet|pay|call|apologi[sz]e to|promise)s?\s+(?:the|a|an)\s+"
                             r"((?:[a-z'-]+\s+){0,2}?[a-z'-]+)(?=\s+(?:for|that|to|about|and|by|with)\b|[,.;]|$)", goal):
        heads.add(match.group(1).split()[-1])
    return heads


_ROLE_ENDS = frozenset("on of in at above below under over from for with who whose that and or to by near next his "
                       "her their its".split())


def _role(profile: str) -> str:
    """The head noun of the role a profile's title gives its character (`# Theo Vandermeer - Ministry
    Inspector` -> `inspector`): the character is that person, so `the inspector` is no topic of theirs
    (nor is a role the goal gives someone: `goal_roles`)."""
    title = re.search(r"^#\s+[^\n]*?\s[-\u2013\u2014:]\s+([^\n]+)$", profile, re.M)
    words = re.findall(r"[^\W\d_]+", title.group(1)) if title else []
    return words[-1].lower() if words else ""


def address(name: str, present: tuple[str, ...]) -> str:
    """How a character is called by name: the first name (with a title, the title and surname: `Dr
    Haddad`), unless another person present shares it (also behind a title: Eva Brandt is `Eva Brandt`
    beside Prof. Eva Brandt) or the rest of the name is what tells them apart (`Person 3`, `Guest 12`)."""
    words = name.split()
    if len(words) < 2:
        return name
    rest = " ".join(words[1:])
    short = spoken_name(name)
    shared = sum(1 for other in present if spoken_name(other) == short
                 or (not title_length(name) and given_name(other) == given_name(name))) > 1
    return name if shared or any(ch.isdigit() for ch in rest) or words[0].lower() in _GENERIC else short


_GENERIC = frozenset("person character guest member resident player participant agent speaker user".split())


def _props(setting: str, prompt: str, names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The setting's objects (`Kettle on, window open` -> `the kettle`, `the window`; `under the old oak
    tree` -> `the old oak tree`). A stretch of time (`a wet Tuesday morning`, `2 a.m.`) is no object,
    nor a chunk that opens on a capital after a comma (a name or a word of another language,
    `Freitagnachmittag`, which `the` would make wrong), nor one that opens on a cast member's name."""
    named = {w.casefold() for n in names for w in n.split()}
    found: list[str] = []
    chunks = [(c, i == 0 and at > 0) for at, sentence in enumerate(re.split(r"[.;]\s+|[.;]$", setting))
              for i, c in enumerate(re.split(r",", sentence)) if not (at == 0 and i == 0)]
    chunks += [(s, True) for s in re.split(r"[.;]", prompt) if len(s.split()) <= 4]
    for chunk, opens_sentence in chunks:
        words = [w.strip("!?\"()") for w in chunk.split()]
        if not words or not all(re.fullmatch(r"[A-Za-z'-]+", w) for w in words) or words[0].lower() in _WHEN \
                or any(w.lower() in TIME_WORDS for w in words) or (words[0][:1].isupper() and not opens_sentence) \
                or words[0].casefold() in named:
            continue
        while words and words[0].lower() in _LEADING:
            words = words[1:]
        phrase: list[str] = []
        for word in words[:4]:
            lower = word.lower()
            if lower in _ENDS_OBJECT or (phrase and lower.endswith(("ed", "ing")) and lower not in _NOUNS_ING):
                break
            phrase.append(lower)
        while phrase and (phrase[-1] in _ENDS_OBJECT or phrase[-1].endswith("ly")):
            phrase.pop()
        if phrase and len(phrase[-1]) > 2 and f"the {' '.join(phrase)}" not in found:
            found.append(f"the {' '.join(phrase)}")
    return tuple(found[:4])


_WHEN = frozenset("before after during until till since while once".split())
"""Words that open a stretch of time, not an object (`before opening`)."""
_LEADING = frozenset("the a an there is are under in on at by near beside behind above below inside outside "
                     "around with some".split())
_ENDS_OBJECT = frozenset("on off open closed shut is are was were of in at and or with by to from up down out "
                         "half empty full still there here".split())
_NOUNS_ING = frozenset("ceiling building ring thing railing painting clothing".split())


_CONFINED = re.compile(
    r"\b(?:aboard|on board|at sea|(?:the|a|an)\s+(?:[\w'-]+\s+){0,2}(?:ship|boat|vessel|yacht|ferry|trawler|tanker|"
    r"freighter|submarine|spacecraft|spaceship|starship|warship|space shuttle|space station|airliner|aircraft|plane|helicopter|lifeboat|life raft)|"
    r"cockpit|in orbit|in flight|mid-?flight|(?:lift|elevator|cable car)\s+(?:is\s+)?stuck|stuck in|trapped|snowed in|"
    r"cut off by|locked in|under siege|oil rig|lighthouse in a gale)\b(?!'s)", re.I)
"""A setting nobody can walk out of, read in its first sentence (the place): a ship, a plane, a space station,
a stuck lift, a place cut off (not `a ship's bell over the door`)."""


def _owner(setting: str, names: tuple[str, ...]) -> str:
    """Whose place it is, when the setting says so (`Maria's small kitchen` -> `Maria`) and they are present."""
    match = re.match(r"^\s*([A-Z][a-z]+)'s\b", setting)
    if not match:
        return ""
    return next((n for n in names if n.split()[0] == match.group(1)), "")


def _sentences(text: str) -> list[str]:
    """Short first-person sentences of a perspective that can be said aloud (none that speaks of a third
    person: said to their face, `she` would be wrong)."""
    out = []
    for sentence in split_sentences(text):
        sentence = sentence.strip()
        if 4 <= len(sentence.split()) <= 22 and re.match(r"^(I|My|It|That|Still)\b", sentence) and '"' not in sentence \
                and not re.search(r"\b(?:he|she|him|his|her|they|them)\b", sentence, re.I) and not _ON_SPEAKING.search(sentence):
            out.append(sentence if sentence[-1] in ".!?" else sentence + ".")
    return out


_ON_SPEAKING = re.compile(r"\b(?:not|never|n't)\s+(?:say|tell|mention|admit|bring)\b|\b(?:say|tell|mention|admit)\b[^.]*"
                          r"\b(?:unless|until)\b", re.I)
"""A sentence about keeping something unsaid (`I will not say so unless cornered`): no line to say aloud."""


_SECRET = re.compile(r"\b(?:(?:not|never|n't) (?:yet )?(?:told|said|admitted|mentioned)|secret(?:ly)?|hid(?:e|den|ing)?|"
                     r"no one knows|nobody knows|without telling|behind \w+ back)\b", re.I)
_SECRET_CLAUSE = re.compile(r"\bis that (.+)$|^I (?:(?:have |had )?(?:not|never)|haven't|hadn't|did not|didn't) (?:yet )?"
                            r"(?:told|said to) (?:anyone|anybody|(?:the |my |our )?\w+)(?: yet)?,? (?:that |about )?(.+)$",
                            re.I)


_ABOUT_SAYING = re.compile(r"\b(?:whether|not sure|wonder|want|wish|hope|afraid|say|saying|said|tell|telling|told|"
                           r"ask|asking|will|would|if|might|should)\b", re.I)
"""A perspective sentence about whether or how to speak (`I am not sure whether saying so will help`)."""


def _accounts(text: str) -> list[str]:
    """The perspective's first-person statements a character can tell (`Material.accounts`)."""
    out = []
    for sentence in split_sentences(text):
        sentence = sentence.strip().rstrip(".!?")
        third = re.search(r"\b(?:he|she|him|his|her|they|them)\b", sentence, re.I)
        if 4 <= len(sentence.split()) <= 30 and re.match(r"^(I|My)\b", sentence) and '"' not in sentence \
                and not _ABOUT_SAYING.search(sentence) and (not third or re.search(r"\bmy \w+", sentence[:third.start()])):
            out.append(sentence + ".")
    return out


def _secrets(text: str) -> list[str]:
    """The perspective's sentences that say something is kept hidden, as what is hidden: the clause
    after `is that` or `never told anyone`, else the whole sentence (none that speaks of a third person)."""
    out = []
    for sentence in split_sentences(text):
        if not _SECRET.search(sentence) or re.search(r"\b(?:he|she|him|his|her|they|them)\b", sentence, re.I):
            continue
        clause = _SECRET_CLAUSE.search(sentence.rstrip(".!?"))
        said = next((g for g in clause.groups() if g), "") if clause else sentence.rstrip(".!?")
        if 3 <= len(said.split()) <= 25:
            out.append(said[:1].upper() + said[1:] + ".")
    return out


def _wants(text: str) -> list[str]:
    """What the character wants, as noun phrases or clauses (`I want resolution` -> `resolution`)."""
    return [m.group(1).strip() for m in re.finditer(r"\bI want (?:to )?([^.;]{3,60}?)(?:[.;,]|$)", text)]


def _section(profile: str, titles: str) -> str:
    """The body of the profile's first `#` section whose title starts with one of `titles`; with no
    such section, the profile's text outside its headings (an agent file's prose)."""
    found = re.search(rf"^#+\s*(?:{titles})[^\n]*\n(.*?)(?=^#|\Z)", profile, re.I | re.M | re.S)
    if found:
        return found.group(1)
    return "" if re.search(r"^#+\s*(?:personality|communication)", profile, re.I | re.M) else \
        re.sub(r"^---.*?---", "", profile, flags=re.S)


def _background(profile: str) -> list[str]:
    """The profile's background bullets that read as the character's own sentence (`Missed the deadline
    by nine days` -> `I missed the deadline by nine days.`; `His daughter is ill` -> `My daughter is
    ill.`); one that opens otherwise (an adverb, a plural subject) is left unsaid."""
    out = []
    for bullet in re.findall(r"^\s*[-*+]\s+(.+)$", _section(profile, "background|history|about"), re.M):
        words = bullet.strip().rstrip(".").split()
        if len(words) < 3 or len(words) > 20 or re.search(r"\b(he|she|him|they|them|her)\b", bullet, re.I) \
                or words[1].lower() in ("to", "by", "as", "for", "in", "at", "of"):
            continue
        if words[0].lower() in ("his", "their"):
            out.append("My " + re.sub(r"\b(his|their)\b", "my", " ".join(words[1:])) + ".")
            continue
        head = words[0].lower()
        after = words[1].lower()
        if head in _NOT_VERBS or after in _IRREGULAR_PAST or (after.endswith("ed") and head not in ("has", "was", "is")):
            continue
        if head.endswith("ed") and (words[1].endswith((",", ";")) or len(words) > 2 and words[2].lower() == "of"):
            continue  # `Retired carpenter, jokes ...`: a description, not `I retired carpenter`
        if head in ("has", "is", "was") or head in _IRREGULAR_PAST or head.endswith("ed") or \
                (head.endswith("s") and not head.endswith(("ss", "us", "ous"))):
            verb = head if head in _IRREGULAR_PAST or head.endswith("ed") or head == "was" else base_verb(head)
            rest = re.sub(r"\b(his|her|their)\b", "my", " ".join(words[1:]))
            out.append(f"I {verb} {rest}.")
    return out


_NOT_VERBS = frozenset("its this thus plus yes perhaps sometimes always nowadays afterwards besides towards "
                       "whereas unless series news".split())
"""Words ending in `s` that open a bullet and are no verb (`Its roof leaks`, `Always carries a key`):
such a bullet is left unsaid rather than said wrong."""


def _tics(profile: str) -> list[str]:
    """Words the profile says the character habitually uses (`Says "honestly" before...` -> `honestly`)."""
    found = []
    for match in re.finditer(r"\b(?:" + "|".join(_HABIT_VERBS) + r")\s+[\"\u201c]([^\"\u201d]{4,24})[\"\u201d]",
                             profile, re.I):
        word = match.group(1).strip().strip(",.")
        if len(word.split()) <= 3 and word.lower() not in ("you", "we", "they"):
            found.append(word)
    return found
