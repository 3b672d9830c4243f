"""Where the scene stands for one actor: what just happened, what the director asked, what the goal
still needs, and how all that bends this character's manner and the scene's length.

Read from the actor's own request only (its briefing and thread), like everything the improviser does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.directions import Event, Note, read_event, read_note
from promptdesk.core.improv.temperament import Temperament
from promptdesk.core.protocol.goal_acts import GoalClause, does_act, read_goal, same_person

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
        """The newest world event of the last two turns, with how many own turns ago it came (0: now)."""
        recent = self.brief.recent("event", 2)
        return (read_event(recent[-1][0].text), recent[-1][1]) if recent else None

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
        return read_goal(self.brief.goal, self._cast) if self.brief.goal else ()

    @property
    def _cast(self) -> tuple[str, ...]:
        return tuple(n for n in (self.brief.name, *self.brief.others) if n)

    def mine(self) -> list[GoalClause]:
        """The goal's clauses this character is named in (or everyone is)."""
        me = self.brief.name
        return [c for c in self.clauses if c.act and (c.everyone or any(same_person(n, me, self._cast) for n in c.who))]

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
            elif clause.act in ("apologise", "admit", "thank", "promise") and progress >= 0.3:
                return clause.act if clause.act in ("apologise", "admit") else "concede", ""
        return None

    @cached_property
    def _goal_object(self) -> str:
        return self._find_goal_object()

    def goal_object(self) -> str:
        """What the goal asks the characters to agree on (read once per turn)."""
        return self._goal_object

    def _find_goal_object(self) -> str:
        """What the goal asks the characters to agree on (`agree on accountability measures`), or to do,
        with its `to` (`agree to paint the fence` -> `to paint the fence`)."""
        for clause in self.clauses:
            if clause.act == "agree":
                words = clause.text.split()
                at = next((i for i, w in enumerate(words) if w.lower() in ("on", "to", "upon")), None)
                if at is not None and at + 1 < len(words):
                    verb = words[at].lower() == "to" and words[at + 1].lower() not in _DETERMINERS
                    return ("to " if verb else "") + " ".join(words[at + 1:])
        return ""

    def length_shift(self) -> int:
        """How many beats the directions add to the scene: someone arriving, a note to act on."""
        return 2 * min(self.arrivals, 2) + min(len(self.notes), 2)
