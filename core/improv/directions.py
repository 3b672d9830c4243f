"""Reading a direction the way an actor would: what a world event changes, what a director's note asks.

A world event is read for its people, its object and its action (`A fire alarm goes off; everyone has
to leave the room` -> object `the fire alarm`, action `goes off`, kind `leave`), and sorted into the
kind of change it makes: `leave` (everyone has to go: the scene closes), `enter` (someone arrives: a
new presence to deal with), `dark` (the lights go), `call` (a phone, a message), `noise` (a crash),
`weather`, or `other`. A note is read for what it asks of the character: to `say` something (admit,
confess, tell, mention: its content turned into the character's own first person), to `apologise`,
to `accept`, to `ask`, to `leave`, or a `manner` (be more assertive, be warmer...), else `other`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from promptdesk.core.improv.voice import first_person

EVENT_KINDS = (
    ("leave", r"\b(?:leave|leaving|evacuat\w*|get out|every(?:one|body) out|clear the (?:room|building)|"
              r"fire(?!\s+(?:goes|went|has gone|is|was|dies|died|burns|burned|burnt|gutters|guttered|sinks|sank|fades|"
              r"faded|dwindles|crackles|smoulders|smolders)\b)|"
              r"closing time|has to go|have to go|must go|are asked to go|every(?:one|body) to go|kicked out)\b"),
    ("enter", r"\b(?:enters|walks in|comes in|came in|arrives|arrived|bursts in|joins|knocks|doorbell|steps in)\b"),
    ("dark", r"\b(?:lights? (?:go|goes|went|flicker\w*)|(?:fire|candles?|lamps?|lanterns?|torch(?:es)?|torchlight|"
             r"campfire|fireplace|embers)\s+(?:go|goes|went|has gone|gutters?|guttered|dies|died|is|are)\s+(?:out|dark)|power (?:cut|goes|went|fails|failed|failure|dies|died|"
             r"is out)|darkness)\b"),
    ("call", r"\b(?:phone|rings|ringing|call|buzz\w*|message|text)\b"),
    ("noise", r"\b(?:crash\w*|bang\w*|smash\w*|drops?|shatter\w*|slams?|spill\w*|breaks?)\b"),
    ("weather", r"\b(?:rain\w*|thunder\w*|storm\w*|snow\w*|wind|hail|lightning)\b"),
)
OTHER_LANGUAGES = (
    ("leave", r"évacu|evacu|evakuier|tout le monde (?:doit|dehors)|sortez|sortir|quitter|incendie|incendio|todos "
              r"(?:deben|tienen que) salir|salgan|feuer|verlassen|alle raus|避難|火事|火災|退出|疏散|火灾|إخلاء|حريق|"
              r"اخرجوا|пожар|эвакуац|все на выход"),
    ("enter", r"\b(?:entre|entrent|arrive|frappe|entra|llega|llaman? a la puerta|betritt|kommt herein|klopft)\b|"
              r"入ってくる|入って来る|到着|ノック|走进|敲门|يدخل|تدخل|يطرق|входит|стучит"),
    ("dark", r"coupure de courant|panne de courant|plonge .* dans le noir|se va la luz|apagón|stromausfall|"
             r"licht geht aus|停電|真っ暗|停电|انقطاع الكهرباء|انطفأت الأنوار|свет погас"),
    ("call", r"téléphone|teléfono|telefon|電話|电话|الهاتف|телефон"),
    ("noise", r"fracas|estruendo|krach|ガシャン|巨响|دوي|грохот"),
    ("weather", r"orage|tormenta|gewitter|雷|暴雨|عاصفة|гроза"),
)
"""The same kinds in a few other languages (French, Spanish, German, Japanese, Chinese, Arabic,
Russian): the improviser's lines stay English, but what an event changes is read."""
_ENGLISH = frozenset("the a an is are was were of to in on at and with into from out up down its his her their "
                     "everyone someone somebody something suddenly".split())
_DET = r"(?:a|an|the|some|someone's|his|her|their)"
NAME_MAX = 60
"""The longest name a person in an event is read as: a bound, so that a text of hyphen-joined words is
not read again to its end from every word's start."""
_PERSON = re.compile(r"\b(?:(?:a|an|the)\s+(?:\w+\s+)?(?:man|woman|stranger|janitor|cleaner|waiter|waitress|courier|"
                     r"neighbour|neighbor|boss|manager|guard|child|kid|doctor|nurse|officer|colleague|visitor|delivery \w+))\b(?!['’]s)"
                     r"|(?:\b(?:Dr|Mr|Mrs|Ms|Mx|Prof)\. )?(?<!\w)[^\W\d_][\w'-]{0," + str(NAME_MAX) + r"}(?: from [A-Z][a-z]+)?"
                     r"(?= (?:enters|walks|comes|arrives|bursts|knocks|joins|steps|calls))",
                     re.I)
MANNERS = {
    "forceful": r"assertive|firm|forceful|angr|direct|blunt|louder|tough|stronger|push|confront|demanding|bolder|"
                r"insist|stand (?:your|her|his|their) ground|fierce|harsh|aggressive|confident|take (?:charge|control|"
                r"the lead)|speak up|stand up for|speak (?:your|her|his|their) mind",
    "warm": r"warm|kind|gentle|soft|friendl|generous|forgiving|patient|tender|nice|sympathetic|compassion",
    "quiet": r"quiet|calm|reserved|brief|terse|fewer words|less talk|whisper|hush|lower (?:your|the) voice|mutter|relax",
    "anxious": r"nervous|anxious|worried|unsure|hesitant|afraid|scared|panic|shaky|timid|shy",
}
_COLD = r"cold|icy|distant|hostile|mean|rude|sarcastic|defensive|dismissive"
"""A manner whose opposite is warmth (`stop being so cold` asks for a warmer character)."""
_OPPOSITE = {"forceful": "quiet", "warm": "forceful", "quiet": "forceful", "anxious": "forceful"}
"""What a note asks when it turns a manner away (`be less aggressive`, `don't be so timid`)."""
_AWAY = re.compile(r"^(?:stop being|quit being|don'?t be|do not be|never be|no (?:more|longer)|be less|less|not so|"
                   r"be not)\s+(?:so\s+|as\s+|too\s+)?(.+)$")
_SAY_IT = re.compile(r"^(?:tell (?:them|him|her|everyone|us)|say (?:it|so)(?: now| out loud| aloud)?|admit it|"
                     r"confess|own up|let (?:them|him|her) know|spit it out)\W*$", re.I)
"""A note's second sentence that asks to say what its first sentence holds (`You want out. Tell them.`)."""


@dataclass(frozen=True)
class Event:
    """A world event as a character takes it in."""

    text: str
    """The event's first clause, as the character registers it."""
    kind: str
    thing: str
    action: str
    person: str


@dataclass(frozen=True)
class Note:
    """A director's note as the character takes it: what it asks, and its content in their own words."""

    text: str
    kind: str
    said: str = ""
    manner: str = ""

    @property
    def names_a_thing(self) -> bool:
        """The content is a noun phrase (`mention the brochure`), not a clause (`admit you knew`)."""
        return bool(re.match(r"^(?:the|a|an|my|our|this|that)\s", self.said, re.I)) and len(self.said.split()) <= 5


_VERBS = frozenset("go goes went ring rings rang start starts begin begins knock knocks walk walks come comes came "
                   "arrive arrives drop drops slide slides shatter shatters fall falls break breaks burst bursts "
                   "slam slams whistle whistles flicker flickers cut cuts stop stops open opens close closes enter "
                   "enters buzz buzzes sound sounds explode explodes spill spills bark barks cry cries scream screams "
                   "appear appears leave leaves shut shuts fail fails die dies hit hits crash crashes bang bangs "
                   "beep beeps blare blares pour pours is are was were has have ask asks order orders tell tells "
                   "announce announces shout shouts gutter gutters fade fades flare flares creak creaks groan groans "
                   "rattle rattles howl howls vent vents sweep sweeps swing swings lurch lurches shake shakes".split())
_PRONOUNS = frozenset("it there someone somebody something everyone everybody they we".split())
_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Mx|Mme|Mlle|St|Prof|Jr|Sr)\.", re.I)
"""A title's full stop, which ends no clause (`Dr. Chen arrives`)."""


@lru_cache(maxsize=1024)
def read_event(text: str) -> Event:
    """The event's kind, its object (a noun phrase), its action (a verb phrase) and any person in it;
    when what makes the change is in a later clause (`An owl hoots and the last light goes out`), its
    object and action are that clause's."""
    clean = text.strip().rstrip(".!")
    head, *tail = re.split(r"(?<!\d):|:(?!\d)", clean, maxsplit=1)
    if tail and tail[0].strip() and head.strip() and not read_event(head).thing:  # `Breaking news: the bridge ...`
        return read_event(tail[0].strip())
    kinds = [(name, re.search(pattern, clean, re.I)) for name, pattern in EVENT_KINDS]
    kind, keyword = next(((name, m.group(0)) for name, m in kinds if m), ("other", ""))
    abroad = next((name for name, pattern in OTHER_LANGUAGES if re.search(pattern, clean, re.I)), "")
    person = _PERSON.search(clean)
    if person and person.group(0)[:1].islower() and " " not in person.group(0):
        person = None  # `slow knocks come`: a word before the verb, no name
    first = re.split(r"(?<!\d):|:(?!\d)|[;,.!?\[\](){}<>\n\r\u2028\x85*\"\u3001\u3002\uff01\uff1f\uff1b\uff0c\uff1a\u2014\u2013]|"
                     r" - | and (?=everyone|we|they)",
                     _ABBREVIATION.sub(lambda m: m.group(0)[:-1] + "\u2024", clean))[0].strip().replace("\u2024", ".")
    clauses = re.split(r"\s+and\s+(?=(?:the|a|an|his|her|their|its|all|every)\s)", first, flags=re.I)
    changed = next((c for c in clauses[1:] if keyword and keyword.lower() in c.lower()
                    and keyword.lower() not in clauses[0].lower()), "")
    if changed:
        inner = read_event(changed)
        return Event(text=first, kind=kind, thing=inner.thing, action=inner.action, person=inner.person)
    words = first.split()
    if not keyword and not any(w.lower().strip("'") in _ENGLISH | _VERBS for w in words):
        return Event(text=first, kind=abroad or "other", thing="", action="", person="")  # not English: not parsed
    at = next((i for i, w in enumerate(words) if i >= 1 and not re.fullmatch(_DET, words[i - 1], re.I)
               and not _counted(words, i)
               and (w.lower() in _VERBS or _verb_before(words, i))), None)  # `The crash bell`: a noun after `the`
    if at is None:
        at = next((i for i, w in enumerate(words) if i >= 1 and w.endswith("s") and words[i - 1].lower()
                   not in ("a", "an", "the")), len(words))
    thing = " ".join(words[:at])
    action = " ".join(words[at:])
    thing = re.sub(rf"^{_DET}\s+", "", thing, flags=re.I)
    who = person.group(0).strip() if person else ""
    if not thing or thing.lower() in _PRONOUNS or thing.lower().split()[0] in _PRONOUNS:
        thing = _object_of(action) or (keyword.lower() if kind not in ("leave", "other") else "")
    elif not (who and (who.endswith(thing) or thing.endswith(who))):
        thing = thing[:1].lower() + thing[1:]
    if thing and not thing[:1].isupper() and not thing.startswith(("the ", "a ")) and thing != who:
        thing = f"the {thing}"
    return Event(text=first, kind=kind, thing=thing, action=action, person=who if who in first else "")


_AFTER_VERB = frozenset("and the a an his her their its on in at into onto from out off up down over through across "
                        "past away loudly softly suddenly outside overhead nearby again twice".split())


_COUNTS = frozenset("two three four five six seven eight nine ten several few many some more".split())


def _counted(words: list[str], i: int) -> bool:
    """Whether `words[i]` is a noun counted just before it (`Three slow knocks come ...`, `two shots`):
    no verb, though a verb is spelt so."""
    return words[i].lower().endswith("s") and any(w.lower() in _COUNTS or w.isdigit() for w in words[max(0, i - 2):i])


def _verb_before(words: list[str], i: int) -> bool:
    """Whether `words[i]` reads as the event's verb though no list knows it: it ends as a verb does
    (`hoots`, `smashed`), follows no article, and is followed by what follows a verb (`and the ...`,
    `on the floor`, `loudly`), which a noun of the subject never is."""
    word = words[i].lower()
    return (word.endswith(("s", "ed")) and not word.endswith(("ss", "us", "'s")) and i + 1 < len(words)
            and words[i - 1].lower() not in ("a", "an", "the") and words[i + 1].lower() in _AFTER_VERB)


def _object_of(action: str) -> str:
    """The first noun phrase after a determiner in an event's action (`knocks on the glass door`)."""
    match = re.search(r"\b(?:the|a|an)\s+((?:[a-z'-]+\s+){0,2}?[a-z'-]+)(?=\s+(?:on|in|at|of|and|with|nearby|now|again|too)\b|$)",
                      action, re.I)
    return f"the {match.group(1).lower()}" if match else ""


@lru_cache(maxsize=1024)
def read_note(text: str) -> Note:
    """What a director's note asks of the character who receives it (its first sentence: that is what
    the character takes from it, unless the next asks to say it: `You want out. Tell them.`). A manner
    turned away (`stop being so cold`, `be less aggressive`) asks for its opposite."""
    clean = re.split(r"(?<=[.!?])\s|[\[\]{}<>\n\r\u2028\x85*\"]", text.strip())[0]
    clean = " ".join(clean.split()).strip().rstrip(".!")
    lower = clean.lower()
    lower = re.sub(r"^(?:please|now|next|try to|you should|you must|make sure you|i want you to)\s+", "", lower)
    body = clean[len(clean) - len(lower):] if len(lower) <= len(clean) else clean
    if match := re.match(r"^(?:admit|confess|reveal|own up to|tell (?:them|him|her|everyone|\w+)|say|mention|"
                         r"bring up|let (?:them|him|her) know)\s+(?:that\s+)?(.+)$", lower):
        return Note(clean, "say", said=first_person(_keep_case(match.group(1), body)))
    if re.match(r"^(?:apologi[sz]e|say sorry|say you'?re sorry)", lower):
        return Note(clean, "apologise")
    if re.match(r"^(?:accept|forgive|agree)", lower):
        return Note(clean, "accept")
    if match := re.match(r"^ask (?:\w+ )?(?:about |whether |why |what |how |if )?(.+)$", lower):
        return Note(clean, "ask", said=first_person(_keep_case(match.group(1), body)))
    if re.match(r"^(?:leave|go|exit|walk out|wrap (?:it )?up|end the scene|say goodbye|head out)\b", lower):
        return Note(clean, "leave")
    if away := _AWAY.match(lower):
        turned = away.group(1)
        if re.search(rf"\b(?:{_COLD})", turned):
            return Note(clean, "manner", manner="warm")
        manner = next((m for m, pattern in MANNERS.items() if re.search(rf"\b(?:{pattern})", turned)), "")
        if manner:
            return Note(clean, "manner", manner=_OPPOSITE[manner])
    sentences = [" ".join(x.split()) for x in re.split(r"(?<=[.!?])\s+", text.strip()) if x.strip()]
    if len(sentences) > 1 and _SAY_IT.match(sentences[1]) and re.match(r"^(?:you|your)\b", lower):
        return Note(clean, "say", said=first_person(body))
    for manner, pattern in MANNERS.items():
        if re.search(rf"\b(?:be|sound|get|act|play it|more|less)\b.*\b(?:{pattern})", lower) or re.match(pattern, lower) \
                or re.search(rf"\b(?:and|then)\s+(?:{pattern})", lower):
            return Note(clean, "manner", manner=manner)
    return Note(clean, "other", said=first_person(body[:1].lower() + body[1:]))


def _keep_case(tail: str, original: str) -> str:
    """`tail` (lowercased) as it was written in `original` (names keep their capitals)."""
    at = original.lower().rfind(tail)
    return original[at:at + len(tail)] if at >= 0 else tail
