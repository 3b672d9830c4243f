"""One turn of a scene: choose a move the way this character would, then say it in Appendix B form.

Moves: open, press, explain, question, echo, concede, mediate, propose, agree, wind_down, confide
(spoken, directed or general, sometimes with a gesture), the goal's acts (apologise, accept,
agree_goal), a director's note acted on (admit, mention, ask, or a manner), interrupt, silent, react
and event (to a world event), aftermath (the turn after one), and close. The arc follows the beat:
tense early, conceding in the middle, agreeing late; a world event is taken up at once and the turn
after, one that sends everyone out closes the scene, and a note is acted on in the next turn.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from dataclasses import replace

from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.dice import rng_for
from promptdesk.core.improv.phrases import theirs
from promptdesk.core.improv.lines import Line
from promptdesk.core.improv.closing import EXITS, close_due, close_speech, close_threshold, closes, just_due
from promptdesk.core.improv.material import Material, read_material
from promptdesk.core.improv.scene_words import quotes_someone, short_phrase
from promptdesk.core.improv.speech import Cue, speech_for, unsaid_facts, words
from promptdesk.core.improv.story import Story
from promptdesk.core.improv.thinking import inner_voice
from promptdesk.core.improv.voice import first_person
from promptdesk.core.protocol.person_names import given_name

NOTE_MOVES = {"apologise": "apologise", "accept": "accept", "ask": "ask"}
PLAIN_LEAVES = ("I should head out.", "Goodbye, everyone.", "I must be going. Goodbye.", "Good night, all.",
                "Take care, all of you. Goodbye.", "Right. Goodbye for now.")
"""Leave-takings a close adds when its words hold none: the first not yet said of this actor's own share
(every n-th from its place in the cast of n, so two actors closing in one beat do not say the same); with
its share all said, the actor leaves without a word."""
PAIR_LEAVES = ("I should head out.", "Goodbye for now.", "I must be going. Goodbye.", "Good night.",
               "Take care. Goodbye.", "Right. I'll see you soon.")
"""The same, said to the one other person of a two-person scene (no `everyone`, no `all of you`)."""
POST_LEAVES = ("Let's leave it there.", "Thank you, everyone.", "Good night, all.", "Take care, all of you.",
               "Let's call it a day.", "Thank you all.")
"""The same where nobody can leave (`Material.confined`): the talk ends, nobody walks out."""
MANNER_MOVES = {"forceful": ("press", "interrupt"), "warm": ("mediate", "concede"), "quiet": ("concede", "agree"),
                "anxious": ("explain", "question")}


def material_of(brief: Briefing) -> Material:
    return read_material(brief.name, tuple(brief.others), brief.setting, brief.prompt, brief.goal,
                         brief.perspective, brief.profile)


def play_turn(brief: Briefing, seed: int, rng: random.Random) -> str:
    """A whole well-formed answer: `<thinking>…</thinking>` then `<speech>…</speech>`."""
    m, story = material_of(brief), Story(brief)
    if story.withholds():
        m = replace(m, facts=(), secrets=(), accounts=())
    cue, extra = choose(brief, seed, rng, m, story)
    if cue.move == "close":
        speech = _close(brief, seed, rng, m, story, cue, extra)
    else:
        speech = speech_for(brief, m, cue, rng, story.temperament, extra)
    return render(inner_voice(brief, cue, rng, story), speech)


def render(thinking: str, speech: str) -> str:
    """The answer; angle brackets quoted from the character's material (an imported goal's `<root>`,
    HTML in a prompt) are written as parentheses, as in the thinking, so they never read as a tag."""
    return f"<thinking>{thinking}</thinking>\n<speech>{speech.replace('<', '(').replace('>', ')')}</speech>"


def choose(brief: Briefing, seed: int, rng: random.Random, m: Material, story: Story) -> tuple[Cue, dict]:
    """The move for this turn, its addressee, topic and echoed phrase, and the slots it brings."""
    last = brief.addressed_by if brief.addressed_by and rng.random() < 0.85 else _answered(brief, rng)
    to = last.speaker if last and rng.random() < 0.7 else ""
    if not to and brief.others and rng.random() < 0.3:
        to = rng.choice(brief.others)
    pool = list(m.topics) if m.topics and (not m.mine or rng.random() < 0.65) else list(m.mine or m.props)
    echo = short_phrase(last.text, rng.randint(2, 4)) if last and last.text else ""
    cue = Cue("speak", to, _topic(brief, seed, pool, rng), echo)
    extra = _event_slots(story)
    if story.goal_object():
        obj = story.goal_object()
        extra["goal_do" if obj.startswith("to ") else "goal_obj"] = [obj.removeprefix("to ")]
    shift = story.length_shift()
    t = story.temperament
    if story.leaving or close_due(brief, seed, rng, shift):
        if story.leaving or not just_due(brief, seed, shift) or not _goal_act(brief, rng, m, story, cue, extra, 1.0):
            cue.move = "close"  # a goal act still owed is more often than not done first, the leaving after it
    elif "begin" in brief.cues:
        cue.move = "open"
    elif story.note and story.note.kind != "other":
        _note_move(cue, story, extra, last, rng)
    elif story.event and story.event[1] == 0:
        cue.move = "react" if rng.random() < 0.3 else "event"
        cue.symbol = f"event_{story.event[0].kind}" if rng.random() < 0.7 else "event"
    elif story.event and story.event[1] == 1 and rng.random() < 0.65:
        cue.move = "aftermath"
        kind = story.event[0].kind
        cue.symbol = f"aftermath_{kind}" if kind in ("enter", "dark") and rng.random() < 0.6 else "aftermath"
    elif not brief.cues and rng.random() < silence_rate(brief, t.quiet, t.forceful):
        cue.move = "silent"
    elif last and len(last.text.split()) >= 4 and rng.random() < 0.1 + 0.25 * t.forceful:
        cue.move, cue.to = "interrupt", last.speaker
    elif "nudge" in brief.cues:
        cue.move = rng.choice(("wind_down", "propose", "agree"))
    else:
        _story_move(brief, seed, rng, m, story, cue, last, extra)
    return cue, extra


def _answered(brief: Briefing, rng: random.Random) -> Line | None:
    """The line of the beat this turn answers: the latest one when two or fewer were heard; in a
    crowd, any of them, the later likelier (each actor answering the beat's last line made a pile-on:
    at 12 actors 70% of the lines spoken to someone were spoken to that one speaker)."""
    heard = brief.heard
    if len(heard) < 3:
        return brief.last_other
    return rng.choices(heard, weights=range(1, len(heard) + 1))[0]


def _topic(brief: Briefing, seed: int, pool: list[str], rng: random.Random) -> str:
    """A topic from the pool, each character favouring its own few (what they keep coming back to)."""
    if not pool:
        return ""
    return rng.choices(pool, _concerns(seed, brief.name, tuple(pool)))[0]


@lru_cache(maxsize=1024)
def _concerns(seed: int, name: str, pool: tuple[str, ...]) -> list[float]:
    """How much each topic weighs with this character in this run (read once per run and pool)."""
    return [0.3 + 3 * rng_for(seed, "concern", name, topic).random() ** 2 for topic in pool]


def _event_slots(story: Story) -> dict[str, list[str]]:
    if not story.event:
        return {}
    event = story.event[0]
    who = event.person if event.person and event.person.lower() not in ("someone", "somebody") else ""
    who = re.sub(r"^(?:A|An|The)\s+", "the ", who)  # come in, `a night cleaner` is the night cleaner
    return {"ev": [event.thing] if event.thing else [], "who": [who] if who else []}


def _what_is_told(said: str, m: Material) -> str:
    """What a note to tell `what I heard on the roof` asks to be told: the character's own sentence that holds
    it (`I heard footsteps on the roof last night`), not the question's words as a fragment."""
    if not re.match(r"(?:what|how|why|where|when|who|which)\b", said, re.I):
        return said
    words = {w[:5] for w in re.findall(r"[a-z]{3,}", said.lower())} - {"what", "why", "how", "where", "when", "who", "whic"}
    own = [s.rstrip(".") for s in (*m.secrets, *m.facts, *m.accounts)]
    best = max(own, key=lambda s: len(words & {w[:5] for w in re.findall(r"[a-z]{3,}", s.lower())}), default="")
    shared = words & {w[:5] for w in re.findall(r"[a-z]{3,}", best.lower())}
    return best if best and len(shared - {"the", "and", "you"}) >= min(2, len(words)) else said


def _note_move(cue: Cue, story: Story, extra: dict, last, rng: random.Random) -> None:
    """Act on the director's note of this turn."""
    note = story.note
    if note.kind == "leave":
        cue.move = "close"
    elif note.kind == "say":
        cue.move = "admit" if not note.names_a_thing else "mention"
        extra["said"] = [_what_is_told(note.said, material_of(story.brief))]
    elif note.kind == "manner":
        cue.move = rng.choice(MANNER_MOVES[note.manner])
        if cue.move == "interrupt" and not (last and last.text):
            cue.move = "press"
        if cue.move == "interrupt":
            cue.to = last.speaker
    else:
        cue.move = NOTE_MOVES[note.kind]
        if note.said:
            extra["ask"] = [note.said]
        if note.kind == "accept" and last:
            cue.to = last.speaker


def _to_you(line: str, to: str) -> str:
    """A goal line said to the person it names calls them `you` (`I tell you my plan`, not `I tell
    Oksana my plan` to Oksana's face)."""
    if not to:
        return line
    return re.sub(rf"(?<![\w'])(?:{re.escape(to)}|{re.escape(given_name(to))})(?![\w'])", "you", line)


def _story_move(brief: Briefing, seed: int, rng: random.Random, m: Material, story: Story, cue: Cue, last,
                extra: dict) -> None:
    """A goal act when its moment has come, a confidence now and then, else an intent of the arc."""
    progress = brief.beat / (close_threshold(seed, brief) + story.length_shift())
    if _goal_act(brief, rng, m, story, cue, extra, progress):
        return
    if m.facts and progress >= 0.45 and rng.random() < 0.12 and unsaid_facts(brief, m):
        cue.move = "confide"
        return
    cue.move = _intent(brief, progress, story, rng, bool(cue.echo) and not quotes_someone(last.text))


def _goal_act(brief: Briefing, rng: random.Random, m: Material, story: Story, cue: Cue, extra: dict,
              progress: float) -> bool:
    """The goal act this character owes, when its moment has come (`Story.goal_move`), more often than
    not: set on the cue; False when none is done this turn."""
    goal = story.goal_move(progress)
    if not goal or rng.random() >= 0.55 + 0.4 * min(1.0, max(0.0, progress - 0.6) / 0.4):
        return False  # more likely as the close nears: an act owed is seldom left undone
    cue.move = goal[0]
    cue.to = goal[1] or cue.to
    if cue.move == "admit":
        extra["said"] = [admission(m, story)]
        cue.symbol = "confess"
    elif cue.move == "apologise" and (what := story.apology_for()):
        cue.topic = what  # `The tenant apologises for the noise`: the apology is for the noise
    elif cue.move == "thank_goal" and (what := story.thanks_for()):
        cue.topic, cue.symbol = what, "thank_goal_for"  # `thanks him for telling her`: for telling me
    elif cue.move == "goal_say":
        extra["goal_line"] = [_to_you(story.goal_line, cue.to or (brief.others[0] if len(brief.others) == 1 else ""))]
        if _TELLING.match(extra["goal_line"][0]) and m.accounts:  # `explains the gap`: the explanation itself
            words = {w[:5] for w in re.findall(r"\w{4,}", extra["goal_line"][0].lower())}
            told = max(m.accounts, key=lambda s: (len(words & {w[:5] for w in re.findall(r"\w{4,}", s.lower())}),
                                                   -m.accounts.index(s)))
            extra["goal_deed"], extra["said"], cue.symbol = [extra["goal_line"][0][2:]], [told], "goal_tell"
        elif story.goal_deed:  # `Pip falls asleep`, `Tom raises his glass`: done, not announced
            extra["deed"], cue.symbol = [story.goal_deed], "goal_done"
            cue.to = next((o for o in brief.others if re.search(rf"\b{re.escape(given_name(o))}\b", story.goal_deed)), cue.to)
    elif cue.move == "agree_goal" and not extra.get("goal_obj"):
        cue.symbol = "agree_goal_do" if extra.get("goal_do") else "agree_goal_plain"
    return True


_TELLING = re.compile(r"I (?:explain|tell|describe|share|reveal|disclose|justify|clarify|outline|recount|account for|"
                      r"set out|lay out|talk about|open up about|come clean about)\b")
"""A goal deed that is said (`Kwame explains the gap in his CV`): done by saying what it is about, from the
character's perspective, not by naming the deed (`I explain the gap in my CV`)."""


def admission(m: Material, story: Story) -> str:
    """What a character the goal names to admit something says it is: what their perspective says they
    have kept hidden, else the sentence of their own perspective that shares most with the goal's clause (`You gave ten times the dose` for `Amal admits
    the dosing error`), else the clause's own object as theirs (`the dosing error was my doing`)."""
    clause = next((c for c in story.mine() if c.act == "admit"), None)
    words = set(clause.words) if clause else set()
    if m.secrets:
        return m.secrets[0]
    if m.facts:
        return max(m.facts, key=lambda fact: (len(words & {w[:5] for w in fact.lower().split()}), -m.facts.index(fact)))
    what = re.sub(r"^.*?\b(?:admits?|confess(?:es)?|reveals?|owns? up to)\s+(?:that\s+)?", "", clause.text if clause else "")
    if not what or what == (clause.text if clause else ""):
        return "it was me"
    return f"{what} was my doing" if re.match(r"(?:the|a|an|my|his|her|their)\s", what, re.I) else first_person(what)


def _close(brief: Briefing, seed: int, rng: random.Random, m: Material, story: Story, cue: Cue, extra: dict) -> str:
    """The closing speech: leaving because of an event, as host or guest, to the group, or plain."""
    own_place = bool(m.owner) and m.owner == brief.name
    if story.leaving and extra.get("ev"):
        cue.symbol = "leave_event"
    elif m.confined:
        cue.symbol = "close_post"  # a ship at sea, a plane in flight: nobody walks out
    elif m.owner and len(brief.others) == 1:
        cue.symbol = "close_host" if own_place else "close_guest"
    elif len(brief.others) >= 2 and rng.random() < 0.4:
        cue.symbol = "close_group" if len(brief.others) == 2 else "close_crowd"  # `you both` is two people
    else:
        cue.symbol = "close"
    said = words(brief, m, cue, rng, extra, lead_in=False)
    if not closes(said):
        own = {line.text for line in brief.own}
        cast = sorted((brief.name, *brief.others))
        leaves = POST_LEAVES if m.confined else PLAIN_LEAVES if len(cast) > 2 else PAIR_LEAVES
        mine = leaves[cast.index(brief.name)::len(cast)]  # none in a crowd larger than the leave-takings: a silent exit
        leave = next((plain for plain in mine if f"{said} {plain}".strip() not in own), "")
        if not leave and not said:
            return f"[REACT, TONE: settled, *{'turns back to the work' if m.confined else theirs(rng.choice(EXITS), brief.temperament.pronoun)}*]"
        said = f"{said} {leave}".strip()
    return close_speech(brief, seed, rng, cue.to, said, host=own_place and not story.leaving or m.confined)


def silence_rate(brief: Briefing, quiet: float, forceful: float) -> float:
    """How likely this character is to say nothing: more when quiet, less when addressed."""
    if not brief.heard:
        base = 0.55 if brief.beat <= 1 else 0.35
    else:
        base = 0.32 if len(brief.others) >= 2 else 0.08
    base += 0.2 * quiet - 0.12 * forceful
    return max(0.0, base * (0.3 if brief.addressed_by else 1.0))


def _intent(brief: Briefing, progress: float, story: Story, rng: random.Random, can_echo: bool) -> str:
    """A spoken intent weighted by the scene's progress and the character's leanings."""
    t = story.temperament
    if progress < 0.35:
        weights = {"press": 1 + 2 * t.forceful, "explain": 1 + t.anxious, "question": 1,
                   "echo": can_echo, "mediate": 0.5 + t.warm}
    elif progress < 0.7:
        weights = {"question": 1, "concede": max(0.2, 0.5 + t.anxious + t.warm - 0.4 * t.forceful),
                   "explain": 1, "echo": can_echo, "mediate": 0.5 + t.warm, "propose": 0.5}
    else:
        weights = {"propose": 2, "agree": 1.5 + t.warm, "concede": 1, "mediate": t.warm}
    names = [k for k, w in weights.items() if w > 0]
    return rng.choices(names, [float(weights[k]) for k in names])[0]
