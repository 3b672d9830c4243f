"""Takes side by side: runs that share their record up to the start of a beat (a run and its takes,
takes of one run, takes of takes; `promptdesk branch`).

Each run says whose take it is in its last `branch` event (`promptdesk.core.record.takes`). Following those links
on disk gives every run's line of ancestors, each link with the beat it was taken from. Two runs share
their record up to the smallest such beat on the path between them in the tree of takes; the runs given
to `compare` or `report` share theirs up to `branched_at`, the smallest over all of them. From there on:

- `diverges_at` is the first beat whose played lines (speech, world events, notes, failures, the close)
  are not the same in every run; None when they played the same scene to the same close (a take with no
  change on the improviser);
- the metrics are measured on what follows only (`metrics_after`): beats and duration from that beat,
  turns, words, tokens and cost of those beats; the shared part is the same in every run and paid once;
- `by_beat` lines the runs up beat by beat, a take's change marked where it was made.

A family copied or moved together is still one: a parent is looked for beside its take by its folder
name first, then where it was recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from promptdesk.core.experiments.metrics import NotARunFolder, RunMetrics, recorded_success, run_metrics
from promptdesk.core.formats.registry import of_run
from promptdesk.core.record import outputs
from promptdesk.core.record.events import BaseEvent, SpeakEvent
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.takes import BRANCH, branch_event, describe_change, played_seed, shown
from promptdesk.core.record.seams import superseded_calls

PLAYED = ("speak", "event", "note", "close")
"""What a run played, beat by beat, for `diverges_at` (plus an actor's failure: a `system` with a target)."""


@dataclass
class Take:
    """One run as a take: its folder, log, and whose take it is (None for a run that is not one)."""

    folder: Path
    events: list[BaseEvent]
    parent: str | None = None
    """The parent's folder, resolved when it was found on disk."""
    beat: int | None = None
    """The beat it was taken from."""
    change: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return str(self.folder.resolve())

    @property
    def label(self) -> str:
        """The run's name, and for a take where it came from."""
        if self.parent is None:
            return shown(self.folder.name)
        change = describe_change(self.change, outputs.cast_names(self.events))
        return f"{shown(self.folder.name)} (take of {shown(Path(self.parent).name)} from beat {self.beat}: {change})"


def read_take(folder: Path, events: list[BaseEvent] | None = None) -> Take:
    """A run folder read as a take: its parent is the folder of the recorded name beside it when there is
    one (a family copied or moved together), else the recorded folder."""
    folder = Path(folder)
    if folder.name in ("", ".."):  # `compare ../kitchen .` inside a take: its name and the folder beside it are real
        folder = folder.resolve()
    if events is None and not (folder / "events.jsonl").is_file():   # a sweep, or no run at all: said, no traceback
        sweep = (folder / "sweep.yaml").is_file()
        raise NotARunFolder(f"{folder} is {'a sweep folder' if sweep else 'not a run folder (no events.jsonl)'}: several "
                            "folders are a run and its takes; a report takes one sweep (`promptdesk compare SWEEP SWEEP` "
                            "puts sweeps side by side)")
    events = read_events(folder) if events is None else events
    event = branch_event(events)
    if event is None:
        return Take(folder, events)
    extra = event.model_extra or {}
    recorded = Path(str(extra.get("parent") or ""))
    found = _on_disk(folder, recorded)
    parent = str(found.resolve()) if found is not None else str(recorded)
    return Take(folder, events, parent, event.beat, dict(extra.get("change") or {}))


def _on_disk(folder: Path, recorded: Path) -> Path | None:
    """Where the run recorded as `recorded` is now: beside `folder` by its name, else where recorded."""
    beside = folder.parent / recorded.name
    if (beside / "events.jsonl").is_file() and beside.resolve() != folder.resolve():
        return beside
    return recorded if (recorded / "events.jsonl").is_file() else None


def ancestry(take: Take, limit: int = 64) -> list[tuple[str, int | None]]:
    """The run and its ancestors as (folder, the beat it was taken from), nearest first. Past a parent no
    longer on disk (deleted, moved away) the line goes on from the `branch` events the take inherited:
    each names its parent and beat, so a grandparent still there is met again."""
    line: list[tuple[str, int | None]] = [(take.key, take.beat)]
    current = take
    while current.parent is not None and len(line) < limit:
        folder = Path(current.parent)
        if not (folder / "events.jsonl").is_file():
            links = [e for e in current.events if e.type == BRANCH]  # oldest first: the last is its own
            for n in range(len(links) - 1, -1, -1):
                recorded = Path(str((links[n].model_extra or {}).get("parent") or ""))
                if n < len(links) - 1 and (found := _on_disk(current.folder, recorded)) is not None:
                    return line + ancestry(read_take(found), limit - len(line))
                line.append((str(recorded), links[n - 1].beat if n > 0 else None))
            break
        current = read_take(folder)
        line.append((current.key, current.beat))
    return line


def shared_until(a: list[tuple[str, int | None]], b: list[tuple[str, int | None]]) -> int | None:
    """The beat up to whose start two runs share their record (by their ancestries), None when unrelated."""
    keys_b = [k for k, _ in b]
    for i, (key, _) in enumerate(a):
        if key in keys_b:
            j = keys_b.index(key)
            beats = [beat for _, beat in a[:i] + b[:j]]
            return min(beats) if beats and None not in beats else None
    return None


@dataclass
class Family:
    """Runs that are takes of one another, in the order given."""

    takes: list[Take]
    branched_at: int
    diverges_at: int | None

    def tree(self) -> list[tuple[int, Take, str]]:
        """The runs as a tree, depth first: (depth, take, the text drawn before its label: `├─ `,
        `└─ ` and `│  ` under its parent), each under its nearest ancestor among them (a take of a take
        under the run it came from when the take between is not given, or is gone)."""
        keys = {t.key for t in self.takes}
        children: dict[str | None, list[Take]] = {}
        for take in self.takes:
            nearest = next((key for key, _ in ancestry(take)[1:] if key in keys), None)
            children.setdefault(nearest, []).append(take)
        out: list[tuple[int, Take, str]] = []

        def walk(parent: str | None, depth: int, indent: str) -> None:
            kids = children.get(parent, [])
            for n, child in enumerate(kids):
                last = n == len(kids) - 1
                out.append((depth, child, indent + ("└─ " if last else "├─ ") if depth else ""))
                walk(child.key, depth + 1, indent + ("   " if last else "│  ") if depth else "")
        walk(None, 0, "")
        return out

    def tree_lines(self) -> list[str]:
        """The tree as text, one run a line."""
        return [drawn + take.label for _, take, drawn in self.tree()]

    def to_dict(self) -> dict[str, Any]:
        return {"branched_at": self.branched_at, "diverges_at": self.diverges_at,
                "takes": [{"run": t.folder.name, "parent": t.parent, "branched_at": t.beat, "change": t.change}
                          for t in self.takes],
                "tree": [{"run": t.folder.name, "depth": depth} for depth, t, _ in self.tree()]}


def family(folders: list[Path]) -> Family | None:
    """The runs as takes of one another, or None when they are not (fewer than two, or unrelated)."""
    if len(folders) < 2:
        return None
    takes = [read_take(folder) for folder in folders]
    if len({t.key for t in takes}) < len(takes) or all(t.parent is None for t in takes):
        return None
    lines = [ancestry(t) for t in takes]
    shared = [shared_until(lines[0], other) for other in lines[1:]]
    if any(beat is None for beat in shared):
        return None
    branched_at = min(beat for beat in shared if beat is not None)
    return Family(takes, branched_at, diverges_at([after(t.events, branched_at) for t in takes], branched_at))


def kin_note(folders: list[Path]) -> str | None:
    """For runs given together that are not one family (`family` is None): the takes of one another among
    them (each group a run and its takes), which are then measured whole like the rest; None when none."""
    try:
        takes = [read_take(folder) for folder in folders]
    except (NotARunFolder, OSError, ValueError):
        return None
    lines = [ancestry(t) for t in takes]
    groups: list[list[int]] = []
    for i, line in enumerate(lines):
        joined = [g for g in groups if any(shared_until(line, lines[j]) is not None for j in g)]
        groups = [g for g in groups if g not in joined] + [sorted([i, *(j for g in joined for j in g)])]
    kin = [g for g in groups if len(g) > 1]
    if not kin:
        return None
    said = "; ".join(f"{_and([shown(takes[i].folder.name) for i in g])} are takes of one another" for g in kin)
    others = [shown(takes[i].folder.name) for g in groups if len(g) == 1 for i in g]
    apart = f", {_and(others)} {'is' if len(others) == 1 else 'are'} not" if others else ""
    return (f"{said} (they share their record up to a beat){apart}: not all the runs given are one family, so every "
            "run is measured whole, from beat 0, the beats takes share counted in each; compare one family alone "
            "to measure it from the beat it branched at.")


def _and(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def after(events: list[BaseEvent], beat: int) -> list[BaseEvent]:
    """What a run recorded from the start of `beat` on: from its `branch` event of that beat when it is
    a take from there (its change included), else from its `beat` event; `branch` events left out."""
    start = next((i for i, e in enumerate(events) if e.beat == beat and e.type in ("beat", BRANCH)), len(events))
    return [e for e in events[start:] if e.type != BRANCH]


def _played(event: BaseEvent) -> tuple | None:
    if isinstance(event, SpeakEvent):
        return ("speak", event.from_, event.action, event.text)
    if event.type in PLAYED or (event.type == "system" and event.target):
        return (event.type, event.from_, event.target, event.text, getattr(event, "reason", None))
    return None


def played_by_beat(events: list[BaseEvent]) -> dict[int, list[tuple]]:
    """Per beat, what was played in it (see `PLAYED`); the close belongs to the beat it closed."""
    out: dict[int, list[tuple]] = {}
    current = None
    for event in events:
        current = event.beat if event.beat is not None else current
        played = _played(event)
        if played is not None and current is not None:
            out.setdefault(current, []).append(played)
    return out


def diverges_at(suffixes: list[list[BaseEvent]], start: int) -> int | None:
    """The first beat from `start` on where the runs did not all play the same; None when they never differ."""
    played = [played_by_beat(events) for events in suffixes]
    last = max((max(p, default=start) for p in played), default=start)
    for beat in range(start, last + 1):
        if any(p.get(beat, []) != played[0].get(beat, []) for p in played[1:]):
            return beat
    return None


def seed_of(take: Take) -> int | None:
    """The seed the run played its own part with: the change's, else the start's."""
    return played_seed(take.events, outputs.start_info(take.events).get("seed"))


def metrics_after(take: Take, beat: int, audit: str = "not run") -> RunMetrics:
    """The run's metrics from the start of `beat` on (see the module docstring)."""
    part = after(take.events, beat)
    start = [e for e in take.events if e.type == "start"][:1]
    cut = [call for call in superseded_calls(take.folder) if call.beat is not None and call.beat >= beat]
    measured = run_metrics(start + part, run=take.folder.name, audit=audit, success=recorded_success(take.folder),
                           cut=cut)
    numbers = [e.beat for e in part if e.beat is not None]
    return replace(measured, beats=(max(numbers) + 1 - beat) if numbers else 0, seed=seed_of(take),
                   duration_s=round(part[-1].t - part[0].t, 3) if part else 0.0,
                   clock="simulated" if outputs.simulated(take.events) else "real")   # the take's own clock


def distinct(runs: list[RunMetrics], folders: list[Path]) -> list[RunMetrics]:
    """Runs put side by side one a column, each named by its folder, and by its parent folder too where two
    share a name (`sweep-a/change-seed1`, `sweep-b/change-seed1`): one name would be one column of both."""
    names = [r.run for r in runs]
    named = [f"{f.parent.name}/{r.run}" if names.count(r.run) > 1 else r.run for r, f in zip(runs, folders)]
    named = [str(f) if named.count(n) > 1 else n for n, f in zip(named, folders)]  # the same two levels: the whole path
    return [replace(r, run=n) for r, n in zip(runs, named)]


def change_events(take: Take) -> set[int]:
    """The positions in the log of every change the run was taken with (its own and, for a take of a
    take, its parent's on the inherited part): the operator's world event or note delivered right after
    each `branch` event, at its beat."""
    marked: set[int] = set()
    for at, event in enumerate(take.events):
        if event.type != BRANCH:
            continue
        for i in range(at + 1, len(take.events)):
            e = take.events[i]
            if e.type not in ("event", "note") or e.from_ != "operator" or e.beat != event.beat:
                break
            marked.add(i)
    return marked


def by_beat(take: Take, beat: int) -> dict[int, list[tuple[str, bool]]]:
    """Per beat from `beat` on, the run's transcript lines (the close as `[SCENE END: reason]`), each
    with whether it is a change the run was taken with."""
    own = of_run(take.events).lines
    start = [e for e in take.events if e.type == "start"][:1]
    marked = {id(take.events[i]) for i in change_events(take)}
    rows: dict[int, list[tuple[str, bool]]] = {}
    current = beat
    for event in after(take.events, beat):
        current = event.beat if event.beat is not None else current
        if event.type == "close":
            rows.setdefault(current, []).append((f"[SCENE END: {event.reason}]", False))
        elif outputs.is_public(event, own):
            line = outputs.transcript_lines(start + [event], own, notes=True)[-1]
            rows.setdefault(current, []).append((line, id(event) in marked))
    return rows
