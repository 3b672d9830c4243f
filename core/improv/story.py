"""Where the scene stands for one actor: what just happened, what the director asked, what the goal
still needs, and how all that bends this character's manner and the scene's length.

Read from the actor's own request only (its briefing and thread), like everything the improviser does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property

from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.roles import person_roles
from promptdesk.core.improv.directions import Event, Note, read_event, read_note
from promptdesk.core.improv.temperament import Temperament
from promptdesk.core.improv.voice import base_verb, own_possessives
from promptdesk.core.protocol.goal_acts import ACTS, NOT_VERBS, GoalClause, does_act, read_goal, said_together, same_person
from promptdesk.core.protocol.person_names import given_name, spoken_name

MANNER_SHIFT = {"forceful": {"forceful": 1.0, "quiet": 0.0, "anxious": 0.0}, "warm": {"warm": 1.0, "forceful": 0.0},
                "quiet": {"quiet": 1.0, "forceful": 0.0}, "anxious": {"anxious": 1.0, "forceful": 0.0}}
"""What a manner note does to the character's leanings for the rest of the scene."""


_DETERMINERS = frozenset("the a an my our your his her their this that these those some any every each".split())


@dataclass
class Story:
    """The directions and the goal, as they bear on this actor's next turn."""

    brief: Briefing

    @cached_property
    def event(self) -> tuple[Event, int] | None:
        """The newest world event of the last two turns, with how many own turns ago it came (0: now).
        Several given at once are shared out over the cast by its order, so the room takes up each of
        them; one that sends everyone out is everyone's."""
        gone = [(line, a) for line, a in self.brief.recent("event", 3) if read_event(line.text).kind == "leave"]
        if gone:  # once everyone has to go, a later event is no reason to leave
            return read_event(gone[-1][0].text), gone[-1][1]
        recent = self.brief.recent("event", 2)
        if not recent:
            return None
        age = recent[-1][1]
        events = [read_event(line.text) for line, a in recent if a == age]
        leaving = [e for e in events if e.kind == "leave"]
        cast = sorted(self._cast)
        rank = cast.index(self.brief.name) if self.brief.name in cast else len(cast) - 1
        return (leaving or events)[-1 - rank % len(leaving or events)], age

    @cached_property
    def leaving(self) -> bool:
        """An event told everyone to leave, now or lately: the scene is over for this character."""
        return any(read_event(line.text).kind == "leave" for line, _ in self.brief.recent("event", 3))

    @cached_property
    def arrivals(self) -> int:
        """Events that brought someone or something new in (each lengthens the scene a little)."""
        return sum(read_event(line.text).kind == "enter" for line, _ in self.brief.directions if line.kind == "event")

    @cached_property
    def note(self) -> Note | None:
        """The director's note of this turn, if one came."""
        fresh = self.brief.recent("note", 0)
        return read_note(fresh[-1][0].text) if fresh else None

    @cached_property
    def notes(self) -> list[Note]:
        """Every director's note this character has had, oldest first."""
        return [read_note(line.text) for line, _ in self.brief.directions if line.kind == "note"]

    @cached_property
    def temperament(self) -> Temperament:
        """The profile's temperament, bent by any manner note (the newest wins)."""
        manners = [n.manner for n in self.notes if n.kind == "manner"]
        base = self.brief.temperament
        return replace(base, **MANNER_SHIFT[manners[-1]]) if manners else base

    @cached_property
    def clauses(self) -> tuple[GoalClause, ...]:
        return read_goal(self.brief.goal, self._cast, self.roles) if self.brief.goal else ()

    @cached_property
    def roles(self) -> tuple[tuple[str, str], ...]:
        """Who plays each role the goal names (`promptdesk.core.improv.roles`)."""
        b = self.brief
        return person_roles(b.name, tuple(b.others), b.prompt, b.goal, b.perspective, b.profile)

    @property
    def _cast(self) -> tuple[str, ...]:
        return tuple(n for n in (self.brief.name, *self.brief.others) if n)

    def mine(self) -> list[GoalClause]:
        """The goal's clauses this character is named in (or everyone is)."""
        me = self.brief.name
        return [c for c in self.clauses if c.act and not c.negated and (c.everyone or any(same_person(n, me, self._cast) for n in c.who))]

    def withholds(self) -> bool:
        """Whether the goal asks this character never to admit or reveal something (`Mara never admits
        the affair`): they keep what their perspective holds to themselves."""
        me = self.brief.name
        return any(c.negated and c.act == "admit" and (c.everyone or any(same_person(n, me, self._cast) for n in c.who))
                   for c in self.clauses)

    def done_by_me(self, act: str) -> bool:
        return any(does_act(line.text, act) for line in self.brief.own)

    def heard(self, act: str) -> str:
        """Who did `act` in what this character heard ('' when no one)."""
        lines = self.brief.history + self.brief.latest
        return next((line.speaker for line in reversed(lines) if line.kind == "speech" and not line.own
                     and line.speaker != self.brief.name and does_act(line.text, act)), "")

    def goal_move(self, progress: float) -> tuple[str, str] | None:
        """The goal act this character would do now (act, to whom), when its moment has come."""
        for clause in self.mine():
            if self.done_by_me(clause.act):
                continue
            if clause.act == "accept":
                giver = self.heard("apologise") or self.heard("admit")
                if giver:
                    return "accept", giver
            elif clause.act == "agree" and progress >= 0.6:
                return "agree_goal", ""
            elif clause.act in ("apologise", "admit") and progress >= 0.3:
                return clause.act, ""
            elif clause.act in ("thank", "promise", "refuse") and progress >= 0.3 and self._saying(clause):
                return ("thank_goal", self._thanked(clause)) if clause.act == "thank" else ("goal_say", "")
        for clause in self.clauses:
            if not clause.act and not clause.negated and clause.words and not clause.everyone and progress >= 0.5 and self._saying(clause) \
                    and any(same_person(n, self.brief.name, self._cast) for n in clause.who) and not self._said(clause):
                return "goal_say", ""
        return None

    def apology_for(self) -> str:
        """What the goal asks this character to apologise for (`apologises for the noise` -> `the noise`;
        `for his temper` -> `my temper`), else ''."""
        clause = next((c for c in self.mine() if c.act == "apologise"), None)
        found = re.search(r"\b(?:for|about)\s+((?:the|his|her|their|my|this|that|a|an)\s+[^\W\d][\w'-]*"
                          r"(?:\s+(?!and\b|or\b|to\b|by\b|with\b|before\b|after\b)[^\W\d][\w'-]*){0,3})",
                          clause.text, re.I) if clause else None
        return own_possessives(found.group(1), self.brief.temperament.pronoun) if found else ""

    def _saying(self, clause: GoalClause) -> bool:
        """Whether the clause can be said in the first person; it is kept for this turn's line, and what it
        does as a stage direction (`raises his glass to the couple`) for a deed that is no speech act."""
        self.goal_line = goal_sentence(clause, self.brief.temperament.pronoun)
        told = re.match(r"^I (?:tell|inform|warn|remind) (?:\w+ ){1,2}?(?:that )?(.+\b(?:is|are|was|were|has|have|had|will|"
                        r"can|cannot|won't|did|does|must)\b.+)$", self.goal_line)
        self.goal_deed = "" if not self.goal_line or SPEECH_ACT.match(self.goal_line) else goal_deed(clause)
        if told:  # `The doctor tells Harold the cancer has spread`: what is told, not the telling
            self.goal_line = told.group(1)
        return bool(self.goal_line)

    def _said(self, clause: GoalClause) -> bool:
        """Whether one statement of this character's own lines (or their business) already holds most of the
        clause's key words."""
        done = [f"{line.text} *{line.nonverbal}*." for line in self.brief.own]
        return len(said_together(clause, done)) >= 0.6 * len(clause.words)

    def _thanked(self, clause: GoalClause) -> str:
        """Whom a `thank` clause thanks: the other cast member it names (by name, first name, or as they are
        called, `Dr Haddad` for Dr Amal Haddad), else the one person of the clause
        before it when it thanks `him`, `her` or `them` (`Oleg admits ..., and the charge nurse thanks
        him`), else whoever spoke last."""
        named = [m for m in self._cast if m != self.brief.name and re.search(
            rf"(?<!\w)(?:{re.escape(m)}|{re.escape(given_name(m))}|{re.escape(spoken_name(m))})(?!\w)", clause.text)]
        at = self.clauses.index(clause) if clause in self.clauses else 0
        before = self.clauses[at - 1].who if at else ()
        if not named and re.search(r"\bthanks?\s+(?:him|her|them)\b", clause.text, re.I) and len(before) == 1 \
                and before[0] in self._cast and before[0] != self.brief.name:
            named = list(before)
        last = self.brief.last_other
        return named[0] if named else last.speaker if last else ""

    def thanks_for(self) -> str:
        """What the goal asks this character to thank someone for, as said to them (`thanks him for his
        patience` -> `your patience`; `for telling her` -> `telling me`), else ''."""
        clause = next((c for c in self.mine() if c.act == "thank"), None)
        found = re.search(r"\bfor\s+((?:[^\W\d][\w'-]*\s*){1,5})$", clause.text.rstrip(" ."), re.I) if clause else None
        if not found:
            return ""
        said = re.sub(r"\b(?:his|her|their)\b(?=\s+[a-z])", "your", found.group(1).strip())
        return re.sub(r"\b(?:him|her|them)\b", "me", said)

    @cached_property
    def _goal_object(self) -> str:
        return self._find_goal_object()

    def goal_object(self) -> str:
        """What the goal asks the characters to agree on (read once per turn)."""
        return self._goal_object

    goal_deed: str = ""
    """The same clause as a stage direction, when it is a deed rather than a speech act (`falls asleep`)."""

    goal_line: str = ""
    """The first-person sentence of the goal clause this turn says (`goal_move`'s `goal_say`)."""

    def _find_goal_object(self) -> str:
        """What the goal asks the characters to agree on (`agree on accountability measures`), or to do,
        with its `to` (`agree to paint the fence` -> `to paint the fence`)."""
        for clause in self.clauses:
            if clause.act == "agree" and not clause.negated:
                words = clause.text.split()
                at = next((i for i, w in enumerate(words) if w.lower() in ("on", "to", "upon")), None)
                if at is not None and at + 1 < len(words):
                    verb = words[at].lower() == "to" and words[at + 1].lower() not in _DETERMINERS
                    return ("to " if verb else "") + " ".join(words[at + 1:])
        return ""

    def length_shift(self) -> int:
        """How many beats the directions add to the scene: someone arriving, a note to act on."""
        return 2 * min(self.arrivals, 2) + min(len(self.notes), 2)


_NOT_VERBS = NOT_VERBS


@dataclass(frozen=True)
class _At:
    """Where a clause's verb starts, read like a match."""

    at: int

    def start(self) -> int:
        return self.at


SPEECH_ACT = re.compile(r"I (?:order|rule|declare|pronounce|sentence|strike|promise|swear|vow|resign|name|bless|forgive|"
                        r"grant|deny|approve|authori[sz]e|propose|suggest|insist|demand|request|invite|announce|warn|"
                        r"recommend|confirm|concede|object|sustain|overrule|dismiss|fire|hire|bet|pardon|appoint|nominate|"
                        r"veto|withdraw|quit|welcome|congratulate|offer|ban|forbid|permit|allow|accuse|challenge|ask|"
                        r"agree|accept|refuse|thank|apologi[sz]e|admit|say|tell|call|decide|choose|pick|vote|"
                        r"explain|describe|share|reveal|disclose|justify|clarify|outline|recount|account|set out|"
                        r"lay out|talk|open up|come clean|answer|reply|insist|argue|plead|testify|confess|sign|approve|agree)\b")
"""A goal deed done by saying it (`I order the slingshot`, `I strike the identification`); any other
(`I fall asleep`, `I raise my glass`) is done, not announced."""


def goal_deed(clause: GoalClause) -> str:
    """A goal clause's deed as a stage direction, from its verb on as the goal writes it (`Tom raises his
    glass to the couple` -> `raises his glass to the couple`); '' when no verb is found."""
    found = _verb_at(clause.text)
    if found is None:
        return ""
    return clause.text[clause.text.rfind(" ", 0, found) + 1:].rstrip(" .")


def _verb_at(text: str) -> int | None:
    """Where a clause with no act has its verb: after a modal (`Theo must tell Oksana`), else the first
    `-s` word that is a verb, whichever comes first."""
    modal = re.search(r"(?<![\w'])(?:must|should|shall|will|would|can|could|may|might)\s+([a-z])", text)
    plain = re.search(rf"(?<![\w'])(?!(?:{_NOT_VERBS})\b)[a-z]+s\b", text)
    if modal and not (plain and plain.start() < modal.start()):
        return modal.start(1)
    return plain.start() if plain else None


def goal_sentence(clause: GoalClause, pronoun: str = "") -> str:
    """A goal clause said by the person it names, in the first person: from its act's verb (`both parents
    promise to follow the ruling` -> `I promise to follow the ruling`), or for a clause with no act
    from its first verb (`Judge Okafor rules on custody` -> `I rule on custody`); '' when it has none."""
    text = clause.text
    if clause.act:
        found = re.search(ACTS[clause.act][0], text, re.I)
    else:  # `Socrates persuades Hypatia that a lie can be good` is persuading, not being good
        at = _verb_at(text)
        found = _At(at) if at is not None else None
    if not found:
        return ""
    start = text.rfind(" ", 0, found.start()) + 1
    verb = re.match(r"[\w'-]+", text[start:])
    if not verb:
        return ""
    rest = own_possessives(text[start + len(verb.group(0)):], pronoun)
    return f"I {base_verb(verb.group(0))}{rest}".rstrip(" .")
