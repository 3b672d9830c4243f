"""Words taken from the scene itself: topics to talk about, the place, phrases worth echoing."""

from __future__ import annotations

import re

_STOP = frozenset(
    "of to and or with in on for at by from about as but is are was were who which that after before "
    "when while if then than so because into over under causing has have had be been being it its "
    "not no yet also just very he she they we i you him her them his hers their our my your me us "
    "would could should will shall may might must can did does do without more most less still someone "
    "something anyone nothing out up down off away every each some any all both died comes come came goes "
    "went gets got makes made says said whatever left lost knew told ran spent took saw kept thought felt "
    "wrote grew began became won built bought brought caught found gave heard held led met paid put read sent "
    "sold sat slept stood taught understood walked asked wanted needed what whom whose where why how whether "
    "whoever whichever nobody somebody anybody everybody everyone everything none".split())
_OBJECT_STARTS = frozenset("its his her their the a an my your our to him them me us".split())
_DETERMINERS = ("the", "a", "an", "my")
_STARTS = ("this", "that", "your", "our")
_ADJECTIVE_END = ("ly", "ive", "ful", "ous", "able", "ible", "less", "ish", "ed", "ing", "ical", "ional", "ual")
_ADJECTIVES = frozenset("intact sincere whole own same other new old good bad big small real true sure fine "
                        "important genuine late early open close safe right wrong clear free full single alone "
                        "enough able afraid quick slow fair first second third last next important urgent honest different decent "
                        "recent silent pleasant brilliant latest best worst two three four five six seven eight "
                        "nine ten one awake asleep alive dead aware afloat ajar".split())


_POINTS_BACK = frozenset("same former latter very aforementioned".split())
"""Adjectives that point at something else in their sentence (`the same flat she has lived in since 1983`):
a topic said on its own drops them."""


_ADVERBS = frozenset("together tonight today tomorrow yesterday now again here there soon later already ago "
                     "anyway instead too either neither ever forever once twice immediately only even really "
                     "almost nearly always never often this that these those until unless till since though although".split())
"""Adverbs that end a noun phrase (`paint the fence together`, `the rent tonight`): never part of one."""


_GOAL_VERB = (r"(?:agree|accept|apologi[sz]e|admit|confesse|reveal|thank|promise|decide|refuse|decline|settle|forgive|"
              r"open|find|choose|tell|ask|learn|realise|realize|discover|leave|give|take|want|need|win|lose|"
              r"sign|vote|pick|pay|return|face|hear|meet|keep|show|break)(?:s|es|ed|d)")
"""A verb of what a goal asks (`the crew agrees on the split`): it ends the noun phrase before it."""


def topics(*texts: str, exclude: tuple[str, ...] = ()) -> list[str]:
    """Noun phrases after an article (`the Henderson loss`, `the client`), first seen first."""
    found: list[str] = []
    banned = {name.lower() for name in exclude}
    for text in texts:
        for sentence in re.split(r"[.,;:!?\n()]", text):
            words = sentence.split()
            for i, word in enumerate(words):
                if word.lower() not in _DETERMINERS and word.lower() not in _STARTS:
                    continue
                phrase = []
                for j, nxt in enumerate(words[i + 1:i + 4], start=i + 1):
                    if nxt.lower() in _STOP or nxt.lower() in _DETERMINERS or nxt.lower() in _ADVERBS \
                            or re.fullmatch(_GOAL_VERB, nxt.lower()) \
                            or not re.fullmatch(r"[A-Za-z'-]+", nxt):
                        break
                    if phrase and j + 1 < len(words) and words[j + 1].lower() in _OBJECT_STARTS:
                        break
                    if phrase and nxt.lower() in ("last", "next", "every") and j + 1 < len(words) \
                            and words[j + 1].lower().strip(".,") in _TIMES:
                        break  # `the roof last night`: the roof
                    phrase.append(nxt)
                while phrase and phrase[0].lower() in _POINTS_BACK:
                    phrase.pop(0)  # `the same flat she has lived in since 1983`, out of its sentence: the flat
                while phrase and (_adjectival(phrase[-1]) or (len(phrase) > 1 and phrase[-1].lower() in _VERBS_ONLY)):
                    phrase.pop()  # `if the engines hold`, `the family eat together`: the verb is no part of it
                if phrase and (phrase[-1].lower() in _NOT_TOPICS or phrase[-1].endswith(("'s", "’s"))):
                    continue  # `the prosecution's` (its noun cut off): no topic
                if phrase and not banned & {re.sub(r"'s$", "", w.lower()) for w in phrase}:
                    candidate = ("my " if word.lower() in ("my", "your") else "our " if word.lower() == "our" else "the ") + " ".join(phrase)
                    if candidate.lower() not in (f.lower() for f in found):
                        found.append(candidate)
    return found


_TIMES = frozenset("night week month year time summer winter spring autumn morning evening weekend term season "
                    "monday tuesday wednesday thursday friday saturday sunday".split())
_VERBS_ONLY = frozenset("eat eats hold holds slip slips fail fails sink sinks die dies go goes come comes arrive "
                        "arrives happen happens seem seems stay stays sleep sleeps know knows think thinks agree "
                        "agrees wait waits leave leaves live lives sit sits stand stands begin begins break breaks "
                        "grow grows win wins lose loses cry cries laugh laughs sing sings swim swims drown drowns "
                        "survive survives collapse collapses".split())
"""Words that are a verb after a subject, never the head of a noun phrase: a phrase that ends on one
(`the routing migration slips`) is the subject without it."""
_NOT_TOPICS = frozenset("time times moment moments day days week weeks month months year years minute minutes hour "
                        "hours while manager lead boss nephew niece aunt uncle mother father husband wife son "
                        "daughter friend colleague person people someone one share part half fault".split())
"""Head nouns that make no topic to talk about: a stretch of time, a person's role, or a part of something
left unnamed (`own my share`: *We all want my share to work out*)."""


def _adjectival(word: str) -> bool:
    """A word that cannot end a noun phrase (`intact`, `sincere`, `quickly`): a slot never takes one."""
    lower = word.lower()
    return lower in _ADJECTIVES or lower in _STOP or (lower.endswith(_ADJECTIVE_END) and not lower.endswith(
        ("ment", "ness", "ing", "ily", "ally", "ably")) and len(lower) > 4 and not word[:1].isupper()
        and lower not in _NOUNS_LIKE)


_NOUNS_LIKE = frozenset("client deadline account estimate migration agent parent student patient event "
                        "moment comment content talent payment apartment document bed shed need seed speed "
                        "feed weed evening morning meeting building ceiling feeling thing ring king wedding "
                        "pudding offering ending setting planning training table cable stable vegetable timetable "
                        "detective executive relative motive archive olive representative dish fish wish "
                        "assembly rally ally belly jelly bully supply reply handful anomaly monopoly butterfly "
                        "firefly dragonfly lily homily professional individual ritual manual musical".split())


def place(setting: str) -> str:
    """`Office conference room, afternoon` -> `this office conference room`."""
    first = re.split(r"[,.;\u3001\uff0c\u3002]", setting.strip())[0].strip() if setting.strip() else ""
    first = re.sub(r"^(the|a|an)\s+", "", first, flags=re.IGNORECASE)
    if not first:
        return "this room"
    words = first.split()
    if words[0].endswith("'s"):  # `Maria's kitchen`; a thing's (`the bakery's back room`) keeps its article
        return first if words[0][:1].isupper() else "the " + first
    proper = any(w[:1].isupper() for w in words[1:])
    return "this " + (first if proper else first[0].lower() + first[1:])


def sentences(text: str, limit: int = 2) -> str:
    """The first few sentences of a text, on one line."""
    return " ".join(split_sentences(text)[:limit]).strip()


_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMt\.)"
                           r"(?<!\bProf\.)(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?![a-z0-9])")


def split_sentences(text: str) -> list[str]:
    """A text's sentences, on one line each; a full stop followed by a lower-case word or a digit (`the
    2 a.m. observations`, `the boat etc. and`) or closing a title (`Dr. Chen`) ends none."""
    return [s for s in _SENTENCE_END.split(" ".join(text.split())) if s]


_QUOTED = re.compile(r"(?<!\w)'[^']*'(?!\w)")


def quotes_someone(words: str) -> bool:
    """Whether a line itself echoes someone (`You said 'x'`): echoing it again sounds like a parrot."""
    return bool(_QUOTED.search(words))


DANGLING = frozenset("""a an the my your his her our their its this that these those and or but nor so to of in on at
for with about from by into than as if because before after while when what who whom whose which where why how
we they he she i is are was were be been am do does did have has had can could should would will shall
may might must just really very not""".split())
"""Words a quoted phrase cut short does not end on (`what we should`, `the tea house just`)."""


def short_phrase(words: str, limit: int) -> str:
    """The opening clause of a line, at most `limit` words, without quotes or end punctuation."""
    plain = _QUOTED.sub("", words.replace('"', "")).strip()
    clauses = [c.strip() for c in re.split(r"[.,;:!?]|\s-\s|\u2014", plain) if len(c.split()) >= 2]
    tokens = (clauses[0] if clauses else plain).split()[:max(1, limit)]
    while len(tokens) > 2 and tokens[-1].lower().strip(",.;:!?-'") in DANGLING:
        tokens.pop()
    return " ".join(tokens).rstrip(",.;:!?- ")
