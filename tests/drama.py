"""Reading a scene's drama from its run folder: who said what at which beat, and the properties a
writer would count (line overlap between scenes, repeats, duplicates in a beat, uptake of a world
event or a director's note, scene length). Nothing here knows any line the improviser can say: every
measure compares what the run folder holds with itself or with the direction that was given."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

STOP = frozenset("the a an and or but of to in on at for with from by is are was were be been has have had "
                 "it its this that there their they them you your his her he she we our us my me i "
                 "everyone someone has have goes make makes".split())


@dataclass(frozen=True)
class Said:
    """One actor's turn as recorded: beat, actor slug, action, spoken words and business."""

    beat: int
    actor: str
    action: str
    text: str
    business: str

    @property
    def spoke(self) -> bool:
        return self.action != "silent" and bool(self.text)


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]


def turns(run_dir: Path) -> list[Said]:
    """Every speech of the run, in order."""
    return [Said(e["beat"], e["from"], e.get("action") or "speak", (e.get("text") or "").strip(),
                 (e.get("nonverbal") or "").strip()) for e in records(run_dir) if e["type"] == "speak"]


def thoughts(run_dir: Path) -> list[tuple[int, str, str]]:
    """Every private thought of the run: (beat, actor, text)."""
    return [(e["beat"], e["from"], e.get("text") or "") for e in records(run_dir) if e["type"] == "think"]


def directions(run_dir: Path, kind: str) -> list[tuple[int, str, str | None]]:
    """The world events (`event`) or director's notes (`note`) of a run: (beat, text, addressee)."""
    return [(e["beat"], e["text"], e.get("target")) for e in records(run_dir) if e["type"] == kind
            and (kind != "note" or e.get("from") == "operator")]


def last_beat(run_dir: Path) -> int:
    return max(e["beat"] for e in records(run_dir) if e.get("beat") is not None)


def words_of(text: str) -> set[str]:
    """A text's content words, by their first five letters (so `alarm`/`alarms` and `leave`/`leaving` meet)."""
    return {w[:5] for w in re.findall(r"[a-z']{4,}", text.lower()) if w not in STOP}


def overlap_share(lines: list[str], others: set[str]) -> float:
    """The share of `lines` (occurrences) that occur word for word among `others`."""
    return sum(line in others for line in lines) / len(lines) if lines else 0.0


DISCOURSE_MARKERS = frozenset("look listen well okay ok right so no yes honestly sorry anyway oh hm i mean you know "
                              "all right".split()) | {"i mean", "you know", "all right"}
"""English interjections a line may open with (`Look, ...`): a line said again behind one is the same line."""


def plain(text: str) -> str:
    """A line without an opening interjection."""
    head, sep, rest = text.partition(", ")
    return rest if sep and head.lower() in DISCOURSE_MARKERS else text


def repeats(run_dir: Path) -> list[tuple[str, str]]:
    """Lines an actor said more than once in the run (an opening interjection aside): (actor, line)."""
    said = Counter((t.actor, plain(t.text)) for t in turns(run_dir) if t.spoke)
    return [key for key, n in said.items() if n > 1]


def same_beat_duplicates(run_dir: Path) -> list[tuple[int, str]]:
    """Lines two actors said in the same beat: (beat, line)."""
    said = Counter((t.beat, t.text) for t in turns(run_dir) if t.spoke)
    return [key for key, n in said.items() if n > 1]


def uptake(run_dir: Path, beat: int, text: str, within: int = 2) -> float:
    """The share of the actors who, within `within` beats of a world event, said or did something
    that refers to it (one of its content words in their words or business)."""
    event = words_of(text)
    window = [t for t in turns(run_dir) if beat <= t.beat <= beat + within]
    actors = {t.actor for t in window}
    took = {t.actor for t in window if words_of(f"{t.text} {t.business}") & event}
    return len(took) / len(actors) if actors else 0.0


def next_line(run_dir: Path, actor: str, beat: int) -> Said | None:
    """The actor's first spoken line from `beat` on."""
    return next((t for t in turns(run_dir) if t.actor == actor and t.beat >= beat and t.spoke), None)
