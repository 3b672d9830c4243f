"""What one run did, measured from its `events.jsonl` alone.

Every function here is pure over the event list, but for two that read the run folder: `audit_verdict` (the isolation
audit's verdict) and `recorded_success` (the `success` the run recorded in its `metadata.json`). `sweep`, `compare`,
`report`, the console and `promptdesk metrics` all call `run_metrics`, so a number means the same thing everywhere.

Definitions:
- a *turn* is a speech that is not a silence (`speak`, `interrupt` and `react` all count);
- *words* are runs of letters, digits, apostrophes and combining marks in the spoken text; in a script
  written without spaces (Chinese, Japanese, Thai) each character is a word, as the audit reads them;
- *talk share* is an actor's words over all actors' words;
- *echo* of a speech is the share of its word 3-grams already used in the speech just before it by
  another actor; a run's and an actor's echo are the mean over their speeches that have 3-grams and
  follow another actor's speech;
- *cache-read share* is cache-read tokens over all input-side tokens (input, cache write, cache read);
- *duration* is seconds from the first to the last recorded event, on the run's clock (`clock`):
  simulated time for a run on the offline improviser, wall time otherwise;
- *success* is the run's own record (`metadata.json`): true when the scene closed on its own, false
  when it was stopped, failed or never closed (`promptdesk.core.record.outputs.succeeded`); None (unknown) when
  the folder has no readable `metadata.json` with a true/false `success` (an old or unfinished run).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any, NamedTuple

from promptdesk.core.protocol.bounded import load_json
from promptdesk.core.record import outputs
from promptdesk.core.record.audit_words import spoken
from promptdesk.core.record.evaluation_file import evaluations, failed as failed_evaluations
from promptdesk.core.experiments.arcs import JOURNAL, BeatTiming, Relationship, arcs, beat_timing, relationships
from promptdesk.core.errors import InvalidConfig, PromptdeskError
from promptdesk.core.formats.registry import FORMATS
from promptdesk.core.record.events import BaseEvent, CallEvent, SpeakEvent
from promptdesk.core.record.seams import superseded_calls
from promptdesk.core.record.takes import played_seed

_WORD = re.compile(r"[\w']+")
EVERYONE = "*"
"""The column of the address matrix for speeches addressed to no one cast member (or to all)."""


NESTED = ("actors", "addressed", "arcs", "relationships", "beat_timing", "evaluation")
"""The fields of `RunMetrics` that are tables of their own, not one value of the summary."""


class NotARunFolder(InvalidConfig):
    """A path given as a run folder holds no `events.jsonl`."""


@dataclass
class ActorMetrics:
    """One actor's share of a run."""

    turns: int = 0
    silences: int = 0
    interruptions: int = 0
    reactions: int = 0
    words: int = 0
    talk_share: float = 0.0
    tokens: int | None = 0
    """None (unknown) when a call of this actor's sent no usage; so is `cost_usd`."""
    cost_usd: float | None = 0.0
    cache_read_share: float = 0.0
    failures: int = 0
    corrections: int = 0
    salvaged: int = 0
    """Replies that did not keep the protocol and were salvaged (to silence, a fallback): not failures."""
    echo: float | None = None


@dataclass
class RunMetrics:
    """Everything `promptdesk metrics` reports about one run."""

    run: str
    scene: str | None
    isolation: str | None
    coordinator: str | None
    seed: int | None
    beats: int
    close_reason: str
    goal_achieved: bool | None
    success: bool | None
    duration_s: float
    tokens: int | None
    cost_usd: float | None
    cache_read_share: float
    turns: int
    silences: int
    interruptions: int
    reactions: int
    mean_speech_words: float
    echo: float | None
    failures: int
    corrections: int
    salvaged: int
    """Replies salvaged because they did not keep the protocol (each actor's, summed)."""
    audit: str
    actors: dict[str, ActorMetrics] = field(default_factory=dict)
    addressed: dict[str, dict[str, int]] = field(default_factory=dict)
    condition_label: str | None = None
    """The run's condition when it is not its two choices (a sweep of takes: `retake` or `change`)."""
    clock: str = "real"
    """Which clock `duration_s` was kept on: `simulated` (the offline improviser's virtual clock: a scene
    without simulated latency takes 0 s) or `real` (wall time)."""
    arcs: dict[str, list[str | None]] = field(default_factory=dict)
    """Per actor, its tone in each beat (`promptdesk.core.experiments.arcs`)."""
    relationships: dict[str, dict[str, Relationship]] = field(default_factory=dict)
    """Speaker to addressee: how many speeches, in which tones."""
    beat_timing: list[BeatTiming] = field(default_factory=list)
    """Each beat's wall time, slowest call and spread."""
    evaluation: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per `rubric@evaluator` (`sotopia@openai:gpt-4o`): each actor's scores and overall (None: unknown),
    and their mean over the actors (`promptdesk.core.record.evaluation_file`; empty: not evaluated)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (actors and matrix included)."""
        return asdict(self)

    def condition(self) -> str:
        """The run's condition: the two pre-experiment choices as one label, e.g. `b-C` (or its own label)."""
        return self.condition_label or f"{self.isolation or '?'}-{self.coordinator or '?'}"


def words(text: str) -> list[str]:
    """The lower-cased words of a text, in any script (`promptdesk.core.record.audit_words.spoken`)."""
    return [w.lower() for w in _WORD.findall(text)] if text.isascii() else spoken(text)


def trigrams(text: str) -> set[tuple[str, ...]]:
    """The distinct word 3-grams of a text."""
    ws = words(text)
    return {tuple(ws[i:i + 3]) for i in range(len(ws) - 2)}


def is_speech(event: BaseEvent, turn_types: tuple[str, ...] = ()) -> bool:
    """A turn that said something: a non-silent `speak`, or one of the format's own turns (a
    collaboration's `agent_response`: its `FormatLines.turn_types`)."""
    return (isinstance(event, SpeakEvent) and event.action != "silent") or event.type in turn_types


TURN_TYPES = tuple(t for fmt in FORMATS.values() for t in fmt.lines.turn_types)
"""Every format's own turn types (a log is read by its events, whatever format its start names)."""


def speeches(events: list[BaseEvent]) -> list[BaseEvent]:
    """Every turn that said something, in log order."""
    return [e for e in events if is_speech(e, TURN_TYPES)]


def echoes(events: list[BaseEvent]) -> list[tuple[str, float]]:
    """(speaker, echo) for each speech that follows another actor's speech and has 3-grams."""
    out: list[tuple[str, float]] = []
    previous: BaseEvent | None = None
    for speech in speeches(events):
        grams = trigrams(speech.text)
        if previous is not None and previous.from_ != speech.from_ and grams:
            out.append((speech.from_, len(grams & trigrams(previous.text)) / len(grams)))
        previous = speech
    return out


def address_matrix(events: list[BaseEvent]) -> dict[str, dict[str, int]]:
    """Speaker to addressee (`TO:`) counts; unknown or missing addressees count under `*`."""
    names = outputs.cast_names(events)
    by_name = {name.lower(): slug for slug, name in names.items()} | {slug.lower(): slug for slug in names}
    matrix: dict[str, Counter[str]] = {slug: Counter() for slug in names}
    for speech in speeches(events):
        whole = (speech.target or "").strip().lower()
        targets = [whole] if whole in by_name else [t.strip() for t in whole.split(",") if t.strip()]
        row = matrix.setdefault(speech.from_, Counter())
        for target in targets or [EVERYONE]:
            row[by_name.get(target, EVERYONE)] += 1
    return {slug: dict(row) for slug, row in matrix.items()}


def _share(part: float, whole: float) -> float:
    return round(part / whole, 4) if whole else 0.0


def _cache_share(row: dict[str, Any]) -> float:
    read = row.get("cache_read_tokens", 0)
    return _share(read, row.get("input_tokens", 0) + row.get("cache_write_tokens", 0) + read)


def actor_metrics(events: list[BaseEvent], cut: Sequence[BaseEvent] = ()) -> dict[str, ActorMetrics]:
    """Per-actor counts, words, spend (`cut`: the calls of beats played again, paid for too) and echo
    (every cast member has a row, even a silent one)."""
    actors = {slug: ActorMetrics() for slug in outputs.cast_names(events)}
    turn_types = TURN_TYPES
    for event in events:
        if outputs.is_salvage(event) and outputs.whose(event) in actors:
            actors[outputs.whose(event)].salvaged += 1
        if isinstance(event, SpeakEvent) or event.type in turn_types:
            action = getattr(event, "action", "speak")
            row = actors.setdefault(event.from_, ActorMetrics())
            row.silences += action == "silent"
            row.turns += is_speech(event, turn_types)
            row.interruptions += action == "interrupt"
            row.reactions += action == "react"
            row.words += len(words(event.text)) if is_speech(event, turn_types) else 0
        elif event.type in ("system", "correct") and outputs.whose(event) in actors:
            row = actors[outputs.whose(event)]
            row.failures += outputs.is_failure(event)
            row.corrections += event.type == "correct"
    total_words = sum(row.words for row in actors.values())
    spend, unpriced = outputs.costs(events, cut)["perActor"], outputs.unpriced_payers(events, cut)
    per_echo: dict[str, list[float]] = {}
    for slug, value in echoes(events):
        per_echo.setdefault(slug, []).append(value)
    for slug, row in actors.items():
        money = spend.get(slug, {})
        row.talk_share = _share(row.words, total_words)
        row.tokens = int(sum(money.get(k, 0) for k in ("input_tokens", "output_tokens", "cache_write_tokens",
                                                       "cache_read_tokens")))
        row.cost_usd = None if slug in unpriced else _known(round(money.get("usd", 0.0), 6))
        if money.get("unknown_usage_calls"):
            row.tokens = row.cost_usd = None
        row.cache_read_share = _cache_share(money)
        row.echo = round(mean(per_echo[slug]), 4) if slug in per_echo else None
    return actors


def _known(usd: float) -> float | None:
    """A cost, None (unknown) when the record's costs sum to no finite number (a NaN in a damaged record)."""
    return usd if math.isfinite(usd) else None


def _optional_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def recorded_success(run_dir: Path) -> bool | None:
    """The `success` a run recorded in its `metadata.json`; None (unknown) when the file is missing or
    unreadable, or holds no true/false `success`."""
    try:
        data = load_json((run_dir / "metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return _optional_bool(data.get("success")) if isinstance(data, dict) else None


def run_metrics(events: list[BaseEvent], run: str = "", audit: str = "unavailable",
                success: bool | None = None, cut: Sequence[BaseEvent] = ()) -> RunMetrics:
    """The metrics of one run from its events; the audit verdict and the recorded success are passed
    in, as they need the folder (`audit_verdict`, `recorded_success`; `metrics_of` reads both)."""
    info, close, spend = outputs.start_info(events), outputs.close_event(events), outputs.costs(events, cut)
    actors = actor_metrics(events, cut)
    said = speeches(events)
    echo_values = [value for _, value in echoes(events)]
    return RunMetrics(
        run=run, scene=info.get("scene", {}).get("name"), isolation=info.get("isolation"),
        coordinator=info.get("coordinator"), seed=played_seed(events, info.get("seed")), beats=outputs.beats_played(events),
        close_reason=close.reason if close else "incomplete",
        goal_achieved=_optional_bool(close.goal_achieved) if close else None,
        success=success, duration_s=round(outputs.duration_s(events), 3),
        tokens=None if spend["unknownUsageCalls"] else spend["totalTokens"],
        cost_usd=None if spend["unknownUsageCalls"] or outputs.unpriced_spend(events) else _known(spend["estimatedUSD"]),
        cache_read_share=_cache_share(spend),
        turns=len(said), silences=sum(a.silences for a in actors.values()),
        interruptions=sum(a.interruptions for a in actors.values()),
        reactions=sum(a.reactions for a in actors.values()),
        mean_speech_words=round(mean(len(words(s.text)) for s in said), 2) if said else 0.0,
        echo=round(mean(echo_values), 4) if echo_values else None,
        failures=sum(a.failures for a in actors.values()), corrections=sum(a.corrections for a in actors.values()),
        salvaged=sum(a.salvaged for a in actors.values()),
        audit=audit, clock="simulated" if outputs.simulated(events) else "real",
        actors=actors, addressed=address_matrix(events), arcs=arcs(events),
        relationships=relationships(events), beat_timing=beat_timing(events), evaluation=evaluation_of(events))


def evaluation_of(events: list[BaseEvent]) -> dict[str, dict[str, Any]]:
    """The run's evaluations by `rubric@evaluator`: each actor's scores (and overall), and their mean; why
    scores are unknown, and the actors whose evaluation call failed (an evaluator that failed for every actor
    is there too, with no scores, so that its failure is counted, never dropped)."""
    found = {f"{group['rubric']}@{group['evaluator']}": {
        "dimensions": list(group["dimensions"]),
        "actors": {slug: {**actor["scores"], "overall": actor["overall"]} for slug, actor in group["actors"].items()},
        "unknown": {slug: actor["unknown"] for slug, actor in group["actors"].items() if actor["unknown"]},
        "mean": group["mean"]} for group in evaluations(events)}
    for key, actors in failed_evaluations(events).items():
        found.setdefault(key, {"dimensions": [], "actors": {}, "unknown": {}, "mean": {}})["failed"] = actors
    return found


def unscored_agents(evaluation: dict[str, dict[str, Any]], cast: list[str]) -> int:
    """How many (agent, evaluator) scorings of a run are missing: an evaluation call that failed, or an answer
    that could not be read at all (each agent of a run that was to be scored, per evaluator it records)."""
    missing = 0
    for group in evaluation.values():
        for slug in cast:
            reasons = group.get("unknown", {}).get(slug, {})
            unread = bool(reasons) and all(str(why).startswith("the answer could not be read") for why in reasons.values())
            missing += slug not in group.get("actors", {}) or unread
    return missing


def audit_verdict(run_dir: Path) -> str:
    """The isolation audit's verdict: `clean`, `leaks: N`, `incomplete` (no leak found, but the record
    could not all be checked: the audit fails closed), or `unavailable` when this build has no audit."""
    try:
        from promptdesk.core.record.audit import audit_run
    except ImportError:
        return "unavailable"
    try:
        report = audit_run(run_dir)
    except PromptdeskError as exc:
        return f"unavailable ({exc.message})"
    return "clean" if report.clean else f"leaks: {len(report.leaks)}" if report.leaks else "incomplete"


def run_events(run_dir: Path) -> list[BaseEvent]:
    """A run folder's log; `NotARunFolder` when there is none, or when it holds lines but not one event
    Promptdesk can read (another tool's log). An empty log is a run killed before its first event."""
    from promptdesk.core.record.recorder import read_events
    if not (run_dir / "events.jsonl").is_file():
        raise NotARunFolder(f"{run_dir} is not a run folder (no events.jsonl in it); give a folder a run wrote")
    events = read_events(run_dir)
    if not events and (run_dir / "events.jsonl").read_bytes().strip():
        raise NotARunFolder(f"{run_dir.resolve()}: its events.jsonl holds no event Promptdesk can read (another tool's "
                            "log?); give a folder a Promptdesk run wrote")
    return events


def metrics_of(run_dir: Path, audit: bool = True) -> RunMetrics:
    """Read a run folder's log and measure it (raises `NotARunFolder` when there is no log)."""
    events = run_events(run_dir)
    return run_metrics(events, run=run_dir.resolve().name, audit=audit_verdict(run_dir) if audit else "not run",
                       success=recorded_success(run_dir), cut=superseded_calls(run_dir))


SPOKE, SILENT, INTERRUPTED, REACTED, FAILED, ABSENT = "spoke", "silent", "interrupted", "reacted", "failed", ""
"""The states of one actor in one beat, as the timeline shows them (a failure outranks the rest)."""

_RANK = {ABSENT: 0, SILENT: 1, REACTED: 2, SPOKE: 3, INTERRUPTED: 4, FAILED: 5}


def timeline(events: list[BaseEvent]) -> dict[str, list[str]]:
    """Per actor, one state per beat: spoke, silent, interrupted, reacted, failed, or '' (no turn)."""
    actors = list(outputs.cast_names(events))
    length = outputs.beats(events)
    rows = {slug: [ABSENT] * length for slug in actors}
    for event in events:
        if event.beat is None:
            continue
        if isinstance(event, SpeakEvent):
            slug = event.from_
            state = {"silent": SILENT, "interrupt": INTERRUPTED, "react": REACTED}.get(event.action, SPOKE)
        elif event.type == "system" and event.target in rows:
            slug, state = event.target, FAILED
        else:
            continue
        row = rows.get(slug) or rows.setdefault(slug, [ABSENT] * length)
        if event.beat < len(row) and _RANK[state] > _RANK[row[event.beat]]:
            row[event.beat] = state
    return rows




def cost_per_beat(events: list[BaseEvent], field_name: str = "cost_usd") -> list[float]:
    """The sum of every call's `cost_usd` (or another numeric call field, e.g. tokens) per beat. The
    journal step's calls come after the close and belong to no beat (`journal_spend`)."""
    per = [0.0] * outputs.beats(events)
    for call in (e for e in events if isinstance(e, CallEvent) and e.beat is not None and e.beat < len(per)
                 and e.purpose != JOURNAL):
        per[call.beat] += getattr(call, field_name) or 0  # unknown usage adds nothing it cannot know
    return per


def journal_spend(events: list[BaseEvent], field_name: str = "cost_usd") -> float:
    """What the journal step's calls (after the close) spent, in the same field."""
    return sum(getattr(e, field_name) or 0 for e in events if isinstance(e, CallEvent) and e.purpose == JOURNAL)


class Spend(NamedTuple):
    """What each beat spent, its unit, and what the journal step spent apart from the beats."""

    per_beat: list[float]
    unit: str
    journal: float


def spend_per_beat(events: list[BaseEvent]) -> Spend:
    """What each beat spent, with its unit: the cost when any cost was recorded, otherwise the
    output tokens (an all-zero cost line would say nothing), labelled "no cost recorded"."""
    costs = cost_per_beat(events)
    if any(costs) or journal_spend(events):
        return Spend(costs, "cost per beat", journal_spend(events))
    return Spend(cost_per_beat(events, "output_tokens"), "output tokens per beat (no cost recorded)",
                 journal_spend(events, "output_tokens"))

