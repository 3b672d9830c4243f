"""Reading a request the way an actor would: who am I, who is here, what just happened to me.

Understands the briefing of `promptdesk.core.engine.briefing` (its `##` sections and scene lines) and both thread
shapes: isolation (b), a thread of beat updates and this actor's own answers; isolation (a), one
message of lines witnessed so far (own lines marked `(you)`), then `NOW:` and the beat update.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field

from promptdesk.core.improv.lines import Line, logical_lines, parse_line, parse_lines, parse_speech_block
from promptdesk.core.improv.temperament import Temperament, read_temperament
from promptdesk.core.providers.base import ChatMessage

CUES = {
    "nudge": re.compile(r"natural end|bring it to a close|natural conclusion|wrap(?:ping)? up", re.I),
    "stall": re.compile(r"move the scene forward|should respond|too passive", re.I),
    "begin": re.compile(r"\byou speak first\b|\bbegin the scene\b", re.I),
}
_BEAT = re.compile(r"^\s*BEAT\s+(\d+)", re.I | re.M)
_NOW = "\nNOW:\n"


@dataclass
class Briefing:
    """What one actor knows this turn, read from its request alone."""

    name: str
    others: list[str] = field(default_factory=list)
    temperament: Temperament = field(default_factory=Temperament)
    title: str = ""
    setting: str = ""
    prompt: str = ""
    goal: str = ""
    perspective: str = ""
    beat: int = 1
    latest: list[Line] = field(default_factory=list)
    history: list[Line] = field(default_factory=list)
    own: list[Line] = field(default_factory=list)
    cues: set[str] = field(default_factory=set)
    earlier_cues: set[str] = field(default_factory=set)
    profile: str = ""
    directions: list[tuple[Line, int]] = field(default_factory=list)
    """Every world event and director's note read, in order, with how many of this actor's own turns
    came before it (`turns_since` turns it into "how long ago")."""

    def turns_since(self, at: int) -> int:
        """This actor's own turns since a direction read when it had taken `at` turns."""
        return len(self.own) - at

    def recent(self, kind: str, within: int) -> list[tuple[Line, int]]:
        """The events or notes (`kind`) at most `within` own turns ago, newest last, with turns since."""
        return [(line, self.turns_since(at)) for line, at in self.directions
                if line.kind == kind and self.turns_since(at) <= within]

    @property
    def heard(self) -> list[Line]:
        """Speech by others, in this beat, that said or did something."""
        return [line for line in self.latest if line.kind == "speech" and not line.own
                and line.speaker != self.name and line.action != "silent"]

    @property
    def last_other(self) -> Line | None:
        return self.heard[-1] if self.heard else None

    @property
    def addressed_by(self) -> Line | None:
        """The latest line spoken to this character by name."""
        return next((line for line in reversed(self.heard) if line.target == self.name), None)

    @property
    def scene_key(self) -> str:
        return "\x1f".join((self.title, self.setting, self.prompt, self.goal))


def read_briefing(system: str, messages: list[ChatMessage], fallback_name: str, beat: int | None) -> Briefing:
    """Everything an actor can know from its system prompt and its message thread."""
    found = _scene_fields(system)
    found["name"] = found.get("name") or fallback_name
    brief = Briefing(**found)
    brief.profile = _character(system) or system
    brief.temperament = read_temperament(brief.profile)
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    updates = [i for i in users if _BEAT.search(_now(messages[i].content))]
    latest_at = (updates or users or [-1])[-1]
    for i, message in enumerate(messages):
        if message.role == "assistant":
            if own := _own_speech(message.content, brief.name):
                brief.own.append(own)
            continue
        before, now = _split(message.content)
        _take(brief, before, latest=False)
        _take(brief, now, latest=(i == latest_at))
    match = _BEAT.search(_now(messages[latest_at].content)) if latest_at >= 0 else None
    brief.beat = int(match.group(1)) if match else (beat or max(1, len(users)))
    return brief


def _take(brief: Briefing, text: str, latest: bool) -> None:
    """File the items of one chunk of routed text under latest or history, and note its cues."""
    items, cues = _read_chunk(text)
    for item in items:
        if item.kind == "speech" and item.own:
            brief.own.append(item)
        elif item.kind == "event" or (item.kind == "note" and not _cue_names(item.text)):
            brief.directions.append((item, len(brief.own)))
    (brief.latest if latest else brief.history).extend(i for i in items if not i.own)
    (brief.cues if latest else brief.earlier_cues).update(cues)


@lru_cache(maxsize=4096)
def _read_chunk(text: str) -> tuple[tuple[Line, ...], frozenset[str]]:
    """The items and cues of one chunk of routed text. Read once per text: a thread re-sends the
    same messages every turn, and a crowd's threads are long (the items are frozen, so shared)."""
    plain = [ln for ln in logical_lines(text) if not ((p := parse_line(ln)) and p.kind != "note")]
    return tuple(parse_lines(text)), frozenset(_cue_names(" ".join(plain)))


def _cue_names(text: str) -> set[str]:
    return {name for name, pattern in CUES.items() if pattern.search(text)}


@lru_cache(maxsize=4096)
def _own_speech(answer: str, name: str) -> Line | None:
    """This actor's own speech in one of its past answers (read once per answer: a thread re-sends them)."""
    match = re.search(r"<speech>(.*?)(?:</speech>|$)", answer, re.S)
    return parse_speech_block(match.group(1), speaker=name) if match else None


def _split(content: str) -> tuple[str, str]:
    before, sep, now = content.partition(_NOW)
    return (before, now) if sep else ("", content)


def _now(content: str) -> str:
    return _split(content)[1]


def _character(system: str) -> str:
    """The character's section of a briefing: up to its journal, or the scene when it has no journal."""
    section = _between(system, "## YOUR CHARACTER", "## YOUR JOURNAL")
    return _between(section, "", "## THE SCENE") if "## THE SCENE" in section else section


def _between(text: str, start: str, end: str) -> str:
    at = text.find(start)
    if at < 0:
        return ""
    stop = text.find(end, at)
    return text[at + len(start):stop if stop >= 0 else len(text)].strip()


def _scene_fields(system: str) -> dict:
    """Title, setting, prompt, goal, name, others and perspective from the scene section."""
    at = system.rfind("## THE SCENE")
    if at < 0:
        return {}
    section = system[at:].split("\n", 1)[-1]
    section = section.split("\n## INSTRUCTION", 1)[0]
    fields: dict = {}
    prompt: list[str] = []
    head, _, perspective = section.partition("Your private perspective:")
    fields["perspective"] = perspective.strip()
    for line in head.strip().splitlines():
        if match := re.match(r"^(Title|Setting|Goal of the scene):\s*(.*)$", line):
            key = {"Title": "title", "Setting": "setting"}.get(match.group(1), "goal")
            fields[key] = match.group(2).strip()
        elif match := re.match(r"^You are (.+?)\. Also present: (.*?)\.?\s*$", line):
            fields["name"] = match.group(1).strip()
            fields["others"] = [] if match.group(2).strip() == "no one" else \
                [n.strip() for n in match.group(2).split(",") if n.strip()]
        elif line.strip():
            prompt.append(line.strip())
    fields["prompt"] = " ".join(prompt)
    return fields
