"""Takes as the record holds them: a run played again from the start of one of its beats, in a folder of its own.

A take of a run (its *parent*) from beat K starts with the parent's record up to the start of beat K,
copied as it was, never played again:

- `events.jsonl`: the parent's lines before its `beat` event of beat K, bar a resume's seam of beat K;
- `prompts.jsonl`: the parent's lines before its first request for beat K or later (so the requests
  the parent paid for are on the take's record, and audited there, but never sent again);
- `superseded.jsonl`: the parent's superseded lines of beats before K (a resumed parent's cut beats);
- `notes.md`: the parent's, with a line saying whose take this is.

Then one `branch` event: `parent` (the parent's folder), `beat` (K), `change` (what the take does
differently: `event`, `note` and `to`, `seed`, `provider`, `model`; empty for a plain retake),
`inherited` (how many of the take's events came from the parent) and `arrivals` (what decides arrival
order from there on, as in the `start` event: a take on another provider may differ from its parent).
The take's own events follow.
`metadata.json` carries the last `branch` event as `parent`, `branchedAt` and `change` (`branch_fields`).
How a take is cast and played: `promptdesk.core.casting.branch`.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from promptdesk.core.characters.name_gate import normalised
from promptdesk.core.errors import InvalidConfig, NotARun
from promptdesk.core.record.events import BaseEvent, parse_event_json, why_unreadable
from promptdesk.core.record.private import FILE as PRIVATE
from promptdesk.core.record.prompt_log import FILE as PROMPTS
from promptdesk.core.record.run_folder import FILE_MODE
from promptdesk.core.record.seams import SUPERSEDED, is_seam
from promptdesk.core.protocol.bounded import json_lines
from promptdesk.core.protocol.lines import direction, folded
from promptdesk.core.protocol.sanitize import mend, strip_controls
from promptdesk.core.protocol.lookalikes import without_bidi

BRANCH = "branch"
"""The type of the event that opens a take's own part of the record."""
TAKE_KEY = "take"
"""Where `private.json` of a take says whose take it is (`parent`, `beat`, `change`), from its start."""


@dataclass(frozen=True)
class Change:
    """What a take does differently from its parent (all None: the same scene again)."""

    event: str | None = None
    note: str | None = None
    to: str | None = None
    seed: int | None = None
    provider: str | None = None
    model: str | None = None
    settings: dict[str, Any] | None = None
    """Provider settings for the rest of the scene (`timeout_s`, `max_concurrency`, `schema_format`,
    `journal_timeout_s`), over every provider's."""

    def record(self) -> dict[str, Any]:
        """The change as the `branch` event and `metadata.json` record it (only what was given)."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    def check(self, cast: dict[str, Any]) -> Change:
        """This change with `to` as the cast's slug, refused when it does not fit: texts must say
        something, `to` needs a note and must name one actor of `cast` (slug to start record), by
        slug or by character name, in any case."""
        for name in ("event", "note"):
            text = getattr(self, name)
            if text is not None and not text.strip():
                raise InvalidConfig(f"--{name} needs a text")
            try:
                direction(text or "", f"--{name}")
            except ValueError as exc:
                raise InvalidConfig(str(exc)) from None
        # bytes that are not UTF-8 in a command line reach Python as lone surrogates, which no file can hold: the
        # take was refused as if its parent were no run ("cannot branch: ... surrogates not allowed")
        mended = replace(self, event=None if self.event is None else mend(self.event),
                         note=None if self.note is None else mend(self.note))
        if self.to is None:
            return mended
        if self.note is None:
            raise InvalidConfig("--to names who gets a --note: give the note too")
        return replace(mended, to=_actor(self.to, cast))


def _actor(to: str, cast: dict[str, Any]) -> str:
    """The slug of the one actor of `cast` that `to` names (its slug or its name, case and width
    folded), or a refusal that lists the cast."""
    if to in cast:
        return to
    names = {slug: str((member or {}).get("name") or slug) if isinstance(member, dict) else slug
             for slug, member in cast.items()}
    wanted = normalised(to)
    found = [slug for slug, name in names.items() if wanted in (normalised(slug), normalised(name))]
    if len(found) == 1:
        return found[0]
    listed = ", ".join(f"{slug} ({name})" if name != slug else slug for slug, name in names.items())
    why = f"names {len(found)} actors" if found else "names no actor"
    raise InvalidConfig(f"--to {to}: {why} in this run; give one of the cast by slug or name: {listed}")


@dataclass
class Prefix:
    """A run's record up to the start of one of its beats."""

    beat: BaseEvent
    """The parent's `beat` event of the beat the take starts from (not part of the prefix)."""
    events: list[BaseEvent]
    """The readable events before it, in order."""
    lines: list[str]
    """The raw lines of `events.jsonl` before it."""
    prompts: list[str]
    """The raw lines of `prompts.jsonl` before the first request of that beat or a later one."""
    superseded: list[str]
    """The raw lines of `superseded.jsonl` of earlier beats."""
    unreadable: list[str] = field(default_factory=list)
    """A notice for each line of the parent's `events.jsonl` before the beat that is no readable event:
    the take copies it as it stands, but the actors' state is rebuilt without it."""


def _lines(path: Path) -> list[str]:
    """The lines of a JSON-lines log, each ended by a newline: split at `\n` only, since a record's
    JSON may hold U+2028, U+0085 and the other characters `str.splitlines` breaks at."""
    lines = json_lines(path.read_text(encoding="utf-8", errors="replace"), keepends=True) if path.exists() else []
    return [line if line.endswith("\n") else line + "\n" for line in lines]


def _beat_of(line: str) -> int | None:
    try:
        beat = json.loads(line).get("beat")
    except (ValueError, AttributeError):
        return None
    return beat if isinstance(beat, int) else None


PLAYED = frozenset({"call", "think", "speak", "route", "correct", "beat_end", "journal", "close"})
"""Events of a beat's own play: none of beat K (or later) can stand before beat K's `beat` event (world events,
notes and controls of beat K can: they are delivered at the safe point before it)."""


def _played_early(event: BaseEvent, beat: int) -> bool:
    """Whether `event`, met before the `beat` event of `beat`, belongs to that beat's play or a later one's."""
    number = event.beat
    return isinstance(number, int) and (number > beat or (number == beat and event.type in PLAYED))


def _from_beat(number: int | None, beat: int) -> bool:
    """Whether a request of beat `number` belongs to the take from `beat` (beat 0 is a beat like any other)."""
    return number is not None and number >= beat


def split_at_beat(run_dir: Path, beat: int) -> Prefix:
    """The record of `run_dir` up to the start of `beat`; `InvalidConfig` naming the beats there are
    when the run never began that beat."""
    run_dir = Path(run_dir)
    log = run_dir / "events.jsonl"
    if not log.is_file():
        raise NotARun(f"{run_dir} is not a run folder (no events.jsonl): give a folder under runs/ or the --out of a run")
    raw = _lines(log)
    kept: list[BaseEvent] = []
    begun: list[int] = []
    unreadable: list[str] = []
    early: list[str] = []
    spoken: dict[tuple[str, int | None], int] = {}
    seams: set[int] = set()
    for number, line in enumerate(raw):
        try:
            event = parse_event_json(line)
        except ValueError as exc:
            if line.strip():
                unreadable.append(f"{log} line {number + 1} is not a readable event ({why_unreadable(exc)}): the take "
                                  "keeps it as it stands, but the actors are set where they were without it, and "
                                  "the take's audit cannot call it clean; repair that line, then take again")
            continue
        if is_seam(event) and isinstance(event.beat, int) and event.beat >= beat:
            seams.add(number)  # the attempt of beat K the seam moved aside is not the take's: nor is the seam
            continue
        if event.type == "beat" and event.beat is not None:
            if event.beat == beat:
                if early:
                    more = f" (and {len(early) - 1} more)" if len(early) > 1 else ""
                    raise InvalidConfig(f"--at-beat {beat}: {log} is out of order: {early[0]}{more}, before the `beat` "
                                        f"event of beat {beat} at line {number + 1}; a take would set the actors from it: "
                                        "put each such line back where it belongs (after the `beat` event of its beat, "
                                        "once), or take again from an earlier beat")
                prompts = _lines(run_dir / PROMPTS)
                cut = next((i for i, p in enumerate(prompts) if _from_beat(_beat_of(p), beat)), len(prompts))
                if not (run_dir / PROMPTS).is_file() and (calls := sum(e.type == "call" for e in kept)):
                    unreadable.append(f"{run_dir / PROMPTS} is missing: the take's record has none of the {calls} "
                                      f"requests its parent sent before beat {beat}, and the take's audit cannot call it "
                                      "clean; put the parent's prompts.jsonl back, then take again")
                lines = [line for index, line in enumerate(raw[:number]) if index not in seams]
                return Prefix(event, kept, lines, prompts[:cut], _superseded_before(run_dir, beat), unreadable)
            begun.append(event.beat)
        elif _played_early(event, beat):
            early.append(f"line {number + 1} is a `{event.type}` event of beat {event.beat}")
        elif event.type == "speak" and (event.from_, event.beat) in spoken:
            early.append(f"line {number + 1} is {event.from_}'s second turn in beat {event.beat} (the first: line "
                         f"{spoken[(event.from_, event.beat)]})")
        if event.type == "speak":
            spoken.setdefault((event.from_, event.beat), number + 1)
        kept.append(event)
    played = f"beats 0 to {max(begun)}" if begun and max(begun) else "beat 0 only" if begun else "no beat at all"
    raise InvalidConfig(f"--at-beat {beat}: {run_dir} never began beat {beat} (it played {played}); "
                        "give a beat the run began")


def _superseded_before(run_dir: Path, beat: int) -> list[str]:
    """The superseded lines of beats before `beat`: each block a resume moved aside starts at the
    `beat` event of its cut beat, and every line of the block belongs to that beat."""
    kept: list[str] = []
    current: int | None = None
    for line in _lines(run_dir / SUPERSEDED):
        try:
            data = json.loads(line)
        except ValueError:
            data = {}
        if isinstance(data, dict) and data.get("type") == "beat" and isinstance(data.get("beat"), int):
            current = data["beat"]
        owner = current if current is not None else _beat_of(line)
        if owner is not None and owner < beat:
            kept.append(line)
    return kept


def write_prefix(folder: Path, prefix: Prefix, notes: str) -> None:
    """Start a take's folder with its parent's record (`prefix`) and `notes`, every file 0600."""
    folder = Path(folder)
    files = {"events.jsonl": prefix.lines, PROMPTS: prefix.prompts, "debug.log": [], "notes.md": [notes]}
    if prefix.superseded:
        files[SUPERSEDED] = prefix.superseded
    for name, lines in files.items():
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:  # as `open_private`
            handle.write("".join(lines))
            handle.flush()
            os.fsync(handle.fileno())


def branch_event(events: list[BaseEvent]) -> BaseEvent | None:
    """The `branch` event that opens this take's own part (the last one: a take of a take inherits its parent's)."""
    return next((e for e in reversed(events) if e.type == BRANCH), None)


def branch_fields(events: list[BaseEvent]) -> dict[str, Any]:
    """`parent`, `branchedAt` and `change` for `metadata.json` (nothing for a run that is not a take)."""
    event = branch_event(events)
    if event is None:
        return {}
    extra = event.model_extra or {}
    fields = {"parent": extra.get("parent"), "branchedAt": event.beat, "change": extra.get("change") or {}}
    unpriced = unpriced_models(events)
    return {**fields, "unpricedModels": unpriced} if unpriced else fields


def unpriced_models(events: list[BaseEvent], more: Sequence[str] = ()) -> list[str]:
    """The models with no known price a run (a take: its parent's part and its own) played on: its start
    event's, each `branch` event's (a take on another model), and `more`."""
    found = set(more)
    for event in events:
        listed = (event.model_extra or {}).get("unpriced_models") if event.type in ("start", BRANCH) else None
        if isinstance(listed, list):
            found.update(str(model) for model in listed if model)
    return sorted(found)


def played_seed(events: list[BaseEvent], start_seed: Any = None) -> Any:
    """The seed a run played its own part with: the last `branch` change that set one (a take's, or a
    take of a take's), else `start_seed` (the start record's: a run that is not a take)."""
    for event in reversed(events):
        if event.type == BRANCH and (seed := ((event.model_extra or {}).get("change") or {}).get("seed")) is not None:
            return seed
    return start_seed


def played_arrivals(events: list[BaseEvent], start_arrivals: Any = None) -> Any:
    """What decided arrival order in a run's own part (`simulated` or `real`): the last `branch`'s, since a
    take may play on another provider than its parent's, else `start_arrivals` (the start record's)."""
    for event in reversed(events):
        if event.type == BRANCH and (arrivals := (event.model_extra or {}).get("arrivals")) is not None:
            return arrivals
    return start_arrivals


def played_providers(events: list[BaseEvent], providers: dict[str, Any]) -> dict[str, Any]:
    """Each actor's `provider:model` in a run's own part: a take made with `--provider`/`--model` (or a take
    of one) plays every actor on it from its beat on, whatever the start record says; else `providers`."""
    for event in reversed(events):
        change = ((event.model_extra or {}).get("change") or {}) if event.type == BRANCH else {}
        if change.get("provider") or change.get("model"):
            def spec(old: Any) -> str:
                provider = change.get("provider") or str(old).partition(":")[0]
                return f"{provider}:{'improviser' if provider == 'offline' else change.get('model') or 'default'}"
            return {slug: spec(old) for slug, old in providers.items()}
    return providers


def inherited(events: list[BaseEvent]) -> int:
    """How many of a take's events came from its parent (0 for a run that is not a take)."""
    event = branch_event(events)
    return int((event.model_extra or {}).get("inherited", 0)) if event is not None else 0


def describe_change(change: dict[str, Any], names: dict[str, str] | None = None) -> str:
    """A change in a few words, on one line: `world event "…"`, `note to Bob: "…"` (the actor by its name
    in `names`, else its slug; texts folded, without escape sequences or control characters), `seed 3`,
    `provider p, model m`, `model m`; or `no change`."""
    parts = []
    if change.get("event"):
        parts.append(f'world event "{shown(change["event"])}"')
    if change.get("note"):
        to = change.get("to")
        parts.append(f'note to {shown((names or {}).get(to, to)) if to else "everyone"}: "{shown(change["note"])}"')
    if change.get("seed") is not None:
        parts.append(f"seed {change['seed']}")
    if change.get("provider"):
        parts.append(f"provider {change['provider']}" + (f", model {change['model']}" if change.get("model") else ""))
    elif change.get("model"):
        parts.append(f"model {change['model']}")
    if change.get("settings"):
        parts.append(", ".join(f"{key} {value}" for key, value in change["settings"].items()))
    return "; ".join(parts) or "no change"


def shown(text: object) -> str:
    """A change's text as a line shows it: one line, no escape sequence, control character or direction
    control (an override left open would turn the rest of the line round)."""
    return folded(without_bidi(strip_controls(str(text))))


def takes_of(run_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The takes of a run beside it (folders of the same parent folder whose `private.json` names it as
    their parent), each with what `private.json` says of it (`parent`, `beat`, `change`), by beat then name."""
    run_dir = Path(run_dir).resolve()
    found: list[tuple[Path, dict[str, Any]]] = []
    try:
        siblings = sorted(p for p in run_dir.parent.iterdir() if p.is_dir() and p != run_dir)
    except OSError:
        return []
    for folder in siblings:
        try:
            take = json.loads((folder / PRIVATE).read_text(encoding="utf-8")).get(TAKE_KEY)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(take, dict) and Path(str(take.get("parent", ""))).name == run_dir.name:
            found.append((folder, take))
    return sorted(found, key=lambda pair: (pair[1].get("beat") or 0, pair[0].name))


def own_part_from(run_dir: Path) -> int:
    """The beat a take's own part of the record begins at (its last `branch` event's), 0 for a run that
    is not a take: its calls of earlier beats were inherited, paid by its parent."""
    try:
        with open(Path(run_dir) / "events.jsonl", "rb") as handle:
            branches = [line for line in handle if b'"branch"' in line]
    except OSError:
        return 0
    for line in reversed(branches):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("type") == BRANCH and isinstance(data.get("beat"), int):
            return data["beat"]
    return 0


_FLAGS = {"event": "--event", "note": "--note", "to": "--to", "seed": "--seed", "provider": "--provider",
          "model": "--model", "timeout_s": "--timeout", "max_concurrency": "--max-concurrency",
          "schema_format": "--schema-format", "journal_timeout_s": "--journal-timeout", "send_ahead": "--send-ahead"}


def unbegun_take(run_dir: Path, record: dict[str, Any], events: list[BaseEvent]) -> str | None:
    """None, unless `run_dir` is a take cut off before it began: its `private.json` names the take, but
    its log has no `branch` event for it (the kill came while the take was being set up). Nothing of the
    take was played, and its change was never delivered: resuming it would play the parent again as it
    was, so the answer says so and gives the `branch` command that takes it again."""
    take = record.get(TAKE_KEY)
    if not isinstance(take, dict) or any(e.type == BRANCH and e.beat == take.get("beat")
                                         and (e.model_extra or {}).get("parent") == take.get("parent") for e in events):
        return None
    if any(e.type == "close" or (e.type == "beat" and isinstance(e.beat, int) and e.beat >= (take.get("beat") or 0))
           for e in events):
        return None  # its own beats are on the log (its `branch` line lost to a hand edit): it began
    change = take.get("change") if isinstance(take.get("change"), dict) else {}
    given = {**change, **(change.get("settings") if isinstance(change.get("settings"), dict) else {})}
    flags = "".join(f" {_FLAGS[k]}" if v is True else f" {_FLAGS[k]} {shlex.quote(str(v))}"
                    for k, v in given.items() if k in _FLAGS and v is not None and v is not False)
    urls = {spec.get("base_url") for spec in (record.get("providers") or {}).values() if isinstance(spec, dict)}
    if len(urls) == 1 and (url := urls.pop()):  # where the take was sent (`--base-url`, recorded with its providers)
        flags += f" --base-url {shlex.quote(str(url))}"
    parent = shlex.quote(str(take.get("parent")))
    return (f"{run_dir} is a take of {take.get('parent')} from beat {take.get('beat')} cut off before it began "
            f"(its events.jsonl has no `branch` event: nothing of the take was played, its change never delivered), "
            f"so it cannot be resumed; take it again with `promptdesk branch {parent} --at-beat {take.get('beat')}"
            f"{flags}`, and remove {run_dir}")