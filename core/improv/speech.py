"""The inside of `<speech>` for each move, in spec 004 Appendix B form, in this character's manner.

Words come from the scene grammar (`scene_rules`) filled with this actor's own material
(`material`) and what just happened (`story`); a line this actor has already said in the scene is
drawn again. Tones come from the profile's own tone words when they fit the mood, gestures from the
profile's physical habits, and the business of a reaction points at what happened.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from promptdesk.core.improv import phrases
from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.material import Material, address
from promptdesk.core.improv.scene_rules import FAMILY_OF, GRAMMAR, RULES
from promptdesk.core.improv.temperament import Temperament
from promptdesk.core.protocol.goal_acts import ACTS, stances
from promptdesk.core.protocol.person_names import given_name

DRAWS = 8
"""How often a line is drawn again when this actor has already said it."""
CROWD = 5
"""A cast this large answers blind in too many voices for a share of a move to fall back on another's."""
OWN_ACTS = frozenset("goal_say goal_tell goal_done thank_goal thank_goal_for admit confess apologise accept ask mention".split())
"""Lines of one person's own act (a goal's, a director's note's), which no one else makes in the beat: never
given up for a crowd."""
PERSONAL = frozenset({"event", "aftermath", "close"})
"""Moves every actor makes at the same beat (a world event, its aftermath, the close): their topic is
the character's own, so that two actors answering blind do not say the same line."""


@dataclass
class Cue:
    """What this turn is: the move, whom it is for, what it is about."""

    move: str
    to: str = ""
    topic: str = ""
    echo: str = ""
    symbol: str = ""
    """The grammar symbol the words are drawn from (the move's own when empty)."""


def tone(t: Temperament, mood: str, rng: random.Random) -> str:
    """A tone for a mood, from the profile's own tone words half the time when it has fitting ones."""
    known = set().union(*phrases.VALENCE.values())
    fitting = [x for x in t.tones if x in phrases.VALENCE.get(mood, ()) or (mood == "neutral" and x not in known)]
    if t.forceful >= 1.0 and mood in ("neutral", "soft"):
        mood = "tense"
    return rng.choice(fitting) if fitting and rng.random() < 0.5 else rng.choice(phrases.TONES[mood])


def gesture(t: Temperament, mood: str, rng: random.Random) -> str:
    """A gesture: the profile's own physical habits first, else one that fits the mood."""
    return rng.choice(t.gestures) if t.gestures and rng.random() < 0.6 else phrases.theirs(rng.choice(phrases.GESTURES[mood]), t.pronoun)


def bindings(brief: Briefing, m: Material, cue: Cue, extra: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """The grammar's slots for this turn, every one filled from this actor's own request."""
    present = (brief.name, *brief.others)
    first = brief.name.split()[0] if brief.name else ""
    own_place = bool(m.owner) and m.owner == brief.name
    personal = cue.move in PERSONAL and m.mine
    found = {
        "to": [address(cue.to, present)] if cue.to else [],
        "topic": list(m.mine) if personal else [cue.topic] if cue.topic else list(m.topics or m.mine),
        "mine": [p for p in m.mine if p != cue.topic] or list(m.mine), "prop": list(m.props),
        "place": [m.place.replace(f"{first}'s ", "my ", 1) if own_place else m.place],
        "echo": [cue.echo] if cue.echo else [], "fact": unsaid_facts(brief, m), "bg": list(m.background),
        "host": [address(m.owner, present)] if m.owner and not own_place else [],
        "guest": [address(o, present) for o in brief.others][:1] if own_place and len(brief.others) == 1 else [],
    }
    return {**found, **(extra or {})}


LEADS = {"forceful": ("look", "listen", "no", "right"), "anxious": ("I mean", "sorry", "well", "okay"),
         "warm": ("okay", "all right", "you know", "well"), "quiet": ("well", "hm", "so")}
"""How a line may begin, by the character's leaning (a verbal habit from the profile comes first)."""


def core(text: str, leads: frozenset[str] = frozenset()) -> str:
    """A line without its lead-in (`Look, ...`, `Honestly, ...`): two lines that differ only there are
    the same line."""
    head, sep, rest = text.partition(", ")
    return rest if sep and len(head.split()) <= 2 and head.lower() in LEAD_WORDS | leads else text


NO_LEAD = frozenset("and is are do does did can could should would will so okay well look listen fair all honestly".split())
"""First words a lead-in would garble (`Honestly, and...`, `You know, is it...`, `You know, all right.`)."""


LEAD_WORDS = frozenset(w for words in LEADS.values() for w in words) | {"honestly"}


def _lead(t: Temperament, rng: random.Random) -> str:
    leaning = max(LEADS, key=lambda k: getattr(t, k))
    return rng.choice(LEADS[leaning]) if getattr(t, leaning) > 0 else ""


def words(brief: Briefing, m: Material, cue: Cue, rng: random.Random, extra: dict[str, list[str]] | None = None,
          t: Temperament | None = None, lead_in: bool = True) -> str:
    """A line for the cue, drawn again while it is one this actor already said (or just heard); ""
    when every draw is one (the scene gives the grammar too little to say anything new)."""
    slots = bindings(brief, m, cue, extra)
    symbol = cue.symbol or cue.move
    if m.register == "talk" and f"{symbol}_talk" in RULES and rng.random() < 0.7:
        symbol = f"{symbol}_talk"
    if not GRAMMAR.can_say(symbol, slots):
        symbol = "question" if GRAMMAR.can_say("question", slots) else "place_line"
        if symbol == "place_line" and "begin" not in brief.cues:
            return ""  # the one line it could say is an opener: everyone else who has nothing to say is silent
    leads = frozenset(tic.lower() for tic in m.tics)
    said = {core(line.text, leads) for line in brief.own} | {core(line.text, leads) for line in brief.heard}
    t = t or brief.temperament
    mine = beat_share(brief)
    lines = sum(len(RULES.get(s, ())) for s in FAMILY_OF.get(symbol, (symbol,)))
    crowd = bool(mine) and (cue.move in PERSONAL and mine[1] > lines or mine[1] >= CROWD and symbol not in OWN_ACTS)
    if crowd and mine[0] >= lines:  # a crowd answering blind, the move's lines all taken by others
        if cue.move in PERSONAL or not GRAMMAR.can_say("question", slots) or mine[0] >= len(RULES["question"]) + len(RULES["press"]):
            return ""  # a line of mine would be one of theirs
        symbol = "question"  # a question of my own share instead
    for draw in range(DRAWS):
        if crowd and draw == DRAWS // 2 and cue.move not in PERSONAL and GRAMMAR.can_say("question", slots):
            symbol = "question"  # my share of the move said: a question of my share, never another's line
        share = mine if draw < DRAWS // 2 or crowd else None
        text = GRAMMAR.expand(symbol, rng, slots, share, FAMILY_OF.get(symbol, ()), crowd) if symbol != "place_line" else \
            f"So. Here we are in {m.place}."
        if not text:
            continue
        lead = "" if not lead_in else rng.choice(m.tics) if m.tics and rng.random() < 0.3 else \
            _lead(t, rng) if rng.random() < 0.3 else ""
        if lead and not text.startswith("'") and text.split(" ", 1)[0].lower().strip(",") not in NO_LEAD \
                and _leads_into(lead, text):
            text = f"{lead[:1].upper()}{lead[1:]}, {_lower_first(text, brief)}"
        text = _to_their_face(text, cue.to)
        if core(text, leads) not in said:  # as it is said (`your team lead`), never as it was drawn (`Bob's team lead`)
            return text
    return ""


ASSENT = ("thank", "accept", "agree", "promise")
"""Acts a `No,` before them turns into a refusal (`No, thank you`) or a contradiction (`No, I accept`)."""


def _leads_into(lead: str, text: str) -> bool:
    """Whether the lead-in may open the line without changing what it does: `No,` never opens thanks, an
    acceptance, an agreement or a promise, and no lead-in turns a line's act."""
    led = f"{lead}, {text}"
    if lead.lower() == "no" and any(True in stances(text, act) for act in ASSENT):
        return False
    if re.search(rf"\b{re.escape(lead)}\b", " ".join(text.split()[:3]), re.I):
        return False  # `Sorry, I'm sorry, Alice.`
    return all(stances(led, act) == stances(text, act) for act in ACTS)


def unsaid_facts(brief: Briefing, m: Material) -> list[str]:
    """The facts of the character's perspective not yet said in one of its own lines (as said to anyone's
    face: `your team lead` for `Bob's team lead`): a confidence is made once."""
    said = [line.text.lower() for line in brief.own if line.text]
    return [fact for fact in m.facts if not any(form in line for line in said for form in
                                                {_to_their_face(fact, to).lower().rstrip(".!?") for to in ("", *brief.others)})]


def _to_their_face(text: str, to: str) -> str:
    """A line said to someone calls what is theirs `your` (`I borrowed against the restaurant to pay your
    second year`, not `Alex's second year` to Alex's face)."""
    names = {n for n in (to, given_name(to)) if n} if to else set()
    if not names:
        return text
    pattern = rf"(?<![\w'])(?:{'|'.join(re.escape(n) for n in sorted(names, key=len, reverse=True))})'s\b"
    return re.sub(pattern, lambda m: "Your" if not text[:m.start()].strip() or text[:m.start()].rstrip()[-1] in ".!?"
                  else "your", text)


def beat_share(brief: Briefing) -> tuple[int, int] | None:
    """This actor's share of a grammar rule's alternatives in this beat: (its place in the cast, as
    every actor reads it, turned by the beat; the cast's size). Actors in one parallel beat do not
    hear each other, so two of them making the same move would otherwise draw the same line as often
    as the rule has few alternatives; their shares differ in every beat, and over a scene each actor
    draws from every share."""
    cast = sorted({brief.name, *brief.others})
    if len(cast) < 2:
        return None
    return (cast.index(brief.name) + brief.beat) % len(cast), len(cast)


def _lower_first(text: str, brief: Briefing) -> str:
    """The line's first letter lowered to follow a lead-in, unless it starts a name or `I`."""
    first = text.split(" ", 1)[0].strip(",.;:!?'")
    names = {n.split()[0] for n in (brief.name, *brief.others) if n}
    return text if first in names or first in ("I", "I'm", "I'll", "I've", "I'd") else text[:1].lower() + text[1:]


QUIET_DEED = re.compile(r"(?:falls? asleep|sleeps|dozes|drifts off|nods off|faints|passes out|dies|cries|weeps|sobs|"
                        r"hugs|kisses|embraces|holds)\b")
"""A goal deed done without a word (`falls asleep`)."""


def _speak(brief: Briefing, m: Material, cue: Cue, rng: random.Random, t: Temperament, extra: dict) -> str:
    mood = phrases.MOOD_OF.get(cue.move, "neutral")
    parts = ([f"TO: {cue.to}"] if cue.to else []) + [f"TONE: {tone(t, mood, rng)}"]
    if extra.get("deed"):  # a goal deed that is done, not said: the business does it
        deed = extra["deed"][0]
        said = "" if QUIET_DEED.match(deed) else words(brief, m, cue, rng, extra, t)
        return f'[{", ".join(parts)}, *{deed}*] "{said}"' if said else f"[REACT, {parts[-1]}, *{deed}*]"
    if rng.random() < 0.35 + 0.2 * t.anxious:
        parts.append(f"*{gesture(t, mood, rng)}*")
    said = words(brief, m, cue, rng, extra, t)
    return f'[{", ".join(parts)}] "{said}"' if said else _silent(brief, m, cue, rng, t, extra)


def _interrupt(brief: Briefing, m: Material, cue: Cue, rng: random.Random, t: Temperament, extra: dict) -> str:
    said = words(brief, m, cue, rng, extra, t)
    if not said:
        return _silent(brief, m, cue, rng, t, extra)
    return f'[INTERRUPT after "{cue.echo}", TONE: {tone(t, "tense", rng)}] "{said}"'


def _silent(brief: Briefing, m: Material, cue: Cue, rng: random.Random, t: Temperament, extra: dict) -> str:
    if rng.random() < 0.4:
        return "[SILENT]"
    habits = [g for g in t.gestures if "voice" not in g]
    action = rng.choice(habits) if habits and rng.random() < 0.4 else phrases.theirs(rng.choice(phrases.SILENT_GESTURES), t.pronoun)
    return f"[SILENT, *{action}*]"


def business(extra: dict[str, list[str]], rng: random.Random) -> str:
    """A gesture that points at what just happened (`looks toward the fire alarm`)."""
    if extra.get("who"):
        who = extra["who"][0]
        return f"turns toward {who[:1].lower() + who[1:] if who.split()[0] in ('A', 'An', 'The') else who}"
    if extra.get("ev"):
        return f"{rng.choice(('looks toward', 'glances at', 'stares at'))} {extra['ev'][0]}"
    return rng.choice(phrases.GESTURES["startled"])


def _react(brief: Briefing, m: Material, cue: Cue, rng: random.Random, t: Temperament, extra: dict) -> str:
    return f"[REACT, TONE: {tone(t, 'startled', rng)}, *{business(extra, rng)}*]"


def _event(brief: Briefing, m: Material, cue: Cue, rng: random.Random, t: Temperament, extra: dict) -> str:
    head = f"TONE: {tone(t, 'startled', rng)}, *{business(extra, rng)}*"
    said = words(brief, m, cue, rng, extra, t)
    return f'[{f"TO: {cue.to}, " if cue.to else ""}{head}] "{said}"' if said else f"[REACT, {head}]"


SPEAKERS = {"interrupt": _interrupt, "silent": _silent, "react": _react, "event": _event}


def speech_for(brief: Briefing, m: Material, cue: Cue, rng: random.Random, t: Temperament,
               extra: dict[str, list[str]] | None = None) -> str:
    """The speech block for any move but the close."""
    return SPEAKERS.get(cue.move, _speak)(brief, m, cue, rng, t, extra or {})
