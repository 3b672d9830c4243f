"""`promptdesk evaluate RUN...`: score the actors of closed runs on a rubric, after the fact.

The same evaluation as a scene's `evaluate:` step (`promptdesk.core.engine.evaluation.score`: one request
per actor, constrained to the rubric's schema where the provider can, asked once more when the answer
cannot be read in full), recorded into the run folder as a live run records it: each request appended
to `prompts.jsonl`, each call and each actor's `evaluation` event to `events.jsonl`, then the derived
files written again (`evaluation.json` among them; the transcripts keep their date). The evaluator sees
the run as `private.json` and the log recorded it: the scene, every character's profile, perspective
(its goal) and secret, and the public record.

Without a chosen evaluator, a run is scored by its own (`run_evaluators`): those `private.json` records
(its scene's `evaluator:`, else its judge, else its provider, or a benchmark sweep's `--evaluator`), so that
the same command, with no provider flags, fills the gap a failed evaluation call left; a run that names
none is scored by the offline evaluator.

The folder's writer lock is held while it is written (a run still being played, resumed or rebuilt
refuses it, exit 2). Only closed runs are evaluated. An actor the same evaluator already scored on the
same rubric is skipped unless `again`; so running the same command after a failure or a kill scores
what is missing. With a budget, actors are scored one at a time and the command stops once it is spent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from promptdesk.core.casting import evaluators as casting_evaluators
from promptdesk.core.casting.pool import ProviderPool
from promptdesk.core.clock import RealClock
from promptdesk.core.engine.evaluation import UNREAD, Evaluator, Scored, event_of, evaluator_for, member, record_lines, \
    score
from promptdesk.core.engine.turn import failure_reason
from promptdesk.core.errors import InvalidConfig, NotARun, RecordingError
from promptdesk.core.formats.registry import get, of_run
from promptdesk.core.protocol.evaluation import Episode
from promptdesk.core.protocol.rubrics import Rubric
from promptdesk.core.providers.base import Completion, Request, Usage
from promptdesk.core.providers.pricing import cost_usd, dollars
from promptdesk.core.providers.spec import ProviderSpec
from promptdesk.core.record import evaluation_file
from promptdesk.core.record.events import CallEvent, CloseEvent, GenericEvent
from promptdesk.core.record.folder_lock import FolderLock
from promptdesk.core.record.private import read_private
from promptdesk.core.record.recorder import Recorder, read_events, redact


@dataclass
class RunEvaluation:
    """What one run's evaluation did: who was scored, skipped (already scored) or failed, and the spend."""

    run_dir: Path
    evaluator: str
    scored: list[Scored] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    cost_usd: float = 0.0
    stopped: str | None = None
    """Why the evaluation stopped before every actor was scored (the budget), or None."""

    @property
    def unread(self) -> dict[str, str]:
        """The actors whose evaluator's answer could not be read at all (asked twice): every score unknown,
        and why. Recorded, but not scored: the same command asks again."""
        return {s.slug: s.reading.whole or "" for s in self.scored if s.reading.whole}


def episode_from_record(record: dict[str, Any], events: list[Any]) -> Episode:
    """A closed run as the evaluator sees it, from `private.json` and the log."""
    scene = record.get("scene") or {}
    names = {slug: m.get("name") or slug for slug, m in record["cast"].items()}
    cast = tuple(member(slug, names[slug], m.get("profile") or "", m.get("perspective") or "")
                 for slug, m in record["cast"].items())
    turn_types = of_run(events).lines.turn_types
    return Episode(title=scene.get("title") or scene.get("name") or "", setting=scene.get("setting") or "",
                   prompt=scene.get("prompt") or "", cast=cast, lines=record_lines(events, names, turn_types),
                   goal=scene.get("goal") or "", goal_markers=tuple(scene.get("goal_markers") or ()))


class _Ledger:
    """Records the evaluation's calls into a reopened run folder, as `promptdesk.core.engine.turn.call`
    records a live run's: the request before it is sent, its `call` event after."""

    def __init__(self, recorder: Recorder, evaluator: Evaluator, t0: float) -> None:
        self.recorder, self.evaluator, self.t0 = recorder, evaluator, t0
        self.started = time.monotonic()
        self.cost_usd = 0.0
        self.unknown = 0
        """Calls that sent no usage (their cost is unknown: a budget cannot be kept)."""

    def now(self) -> float:
        return round(self.t0 + time.monotonic() - self.started, 4)

    async def send(self, request: Request) -> Completion:
        provider = self.evaluator.provider
        self.recorder.record_prompt(self.now(), provider.as_sent(request))
        began, completion, ok, billed = time.monotonic(), None, False, None
        try:
            completion = await RealClock().wait_for(provider.complete(request), self.evaluator.timeout_s)
            ok = True
            return completion
        except BaseException as exc:
            billed = getattr(exc, "usage", None)
            raise
        finally:
            self.recorder.record(self._call(request, completion, ok, time.monotonic() - began,
                                            billed if isinstance(billed, Usage) else None))

    def _call(self, request: Request, completion: Completion | None, ok: bool, elapsed: float,
              billed: Usage | None) -> CallEvent:
        provider = self.evaluator.provider
        usage = completion.usage if completion else billed
        model = (completion.model if completion else None) or provider.model
        head = {"t": self.now(), "from": "coordinator", "target": request.to, "text": f"{request.purpose} call for "
                f"{request.to}", "provider": provider.name, "model": model, "purpose": request.purpose, "ok": ok,
                "latency_s": round(completion.latency_s if completion and completion.latency_s else elapsed, 4)}
        if usage is not None and not usage.reported:
            self.unknown += 1
            return CallEvent(**head, usage="unknown", input_tokens=None, output_tokens=None, cache_write_tokens=None,
                             cache_read_tokens=None, cost_usd=None)
        usage = usage or Usage()
        cost = round(cost_usd(provider.name, model, usage), 8)
        self.cost_usd += cost
        return CallEvent(**head, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                         cache_write_tokens=usage.cache_write_tokens, cache_read_tokens=usage.cache_read_tokens,
                         cost_usd=cost)


def run_evaluators(run_dir: Path, settings: dict[str, Any] | None = None,
                   base_url: str | None = None) -> tuple[str | None, list[ProviderSpec]]:
    """The rubric and the evaluators a run records (its own: `promptdesk.core.casting.evaluators`), each with
    `settings` (timeouts and the like, as the flags give them) over its own, and a remote one on `base_url`
    when given (as `promptdesk resume --base-url` moves a run's providers); (None, []) when it names none.
    `NotARun` for a folder that is not a run; `InvalidConfig` for a `base_url` no evaluator of it can take."""
    record = read_private(Path(run_dir))
    specs = casting_evaluators.specs_of(record, base_url)
    if base_url and not any(s.name != "offline" for s in specs):
        raise InvalidConfig(f"--base-url: {run_dir} records no remote evaluator, and the offline evaluator takes no "
                            "model and no server; add --provider and --model to score it with a model on that server")
    if not specs:
        return None, []
    return record[casting_evaluators.RECORD_KEY]["rubric"], [
        ProviderSpec.model_validate({**s.model_dump(mode="json"), **(settings or {})}) for s in specs]


def already_scored(events: list[Any], rubric: Rubric, label: str) -> set[str]:
    """The actors this evaluator has scored on this rubric in the run (by its latest answer about each: one
    that could not be read at all scored nothing)."""
    latest = {e.target: evaluation_file.fields(e) for e in events if evaluation_file.is_evaluation(e)
              and evaluation_file.fields(e).get("rubric") == rubric.name
              and evaluation_file.fields(e).get("evaluator") == label}
    return {slug for slug, extra in latest.items() if not unread(extra)}


def unread(extra: dict[str, Any]) -> bool:
    """An evaluation event whose answer could not be read at all: no score, each unknown for that reason."""
    why = extra.get("unknown") or {}
    return (not any(v is not None for v in (extra.get("scores") or {}).values()) and bool(why)
            and all(str(reason).startswith(UNREAD) for reason in why.values()))


async def evaluate_run(run_dir: Path, rubric: Rubric, spec: ProviderSpec, *, again: bool = False,
                       budget_usd: float | None = None, spent: float = 0.0) -> RunEvaluation:
    """Score every actor of a closed run (see the module docstring); `spent` is what earlier runs of
    the same command already spent against `budget_usd`. Raises `NotARun` for a folder that is not a
    closed run, `FolderBusy` while another process writes it."""
    run_dir = Path(run_dir)
    record = read_private(run_dir)
    lock = FolderLock.take(run_dir, "evaluate")
    try:
        events = read_events(run_dir)
        if not any(isinstance(e, CloseEvent) for e in events):
            raise NotARun(f"{run_dir} has not closed (no close event): resume it (`promptdesk resume {run_dir}`), "
                          "then evaluate it")
        provider = ProviderPool(int(record.get("seed") or 0), RealClock()).get(spec)
        evaluator = evaluator_for(rubric, provider, spec)
        result = RunEvaluation(run_dir, evaluator.label)
        done = set() if again else already_scored(events, rubric, evaluator.label)
        result.skipped = [slug for slug in record["cast"] if slug in done]
        todo = [slug for slug in record["cast"] if slug not in done]
        if todo:
            await _score_all(run_dir, record, events, evaluator, todo, result, budget_usd, spent, lock)
        return result
    finally:
        lock.release()


async def _score_all(run_dir: Path, record: dict[str, Any], events: list[Any], evaluator: Evaluator,
                     todo: list[str], result: RunEvaluation, budget_usd: float | None, spent: float,
                     lock: FolderLock) -> None:
    """Reopen the folder's logs, score each actor in `todo` one at a time, write the derived files."""
    episode = episode_from_record(record, events)
    dated = datetime.fromtimestamp((run_dir / "events.jsonl").stat().st_mtime)
    recorder = Recorder(run_dir, get(str((record.get("scene") or {}).get("format") or "scene")).lines)
    recorder.lock = lock
    recorder.reopen(events)
    ledger = _Ledger(recorder, evaluator, max([0.0, *(e.t for e in events)]))
    try:
        for slug in todo:
            if budget_usd is not None and spent + ledger.cost_usd >= budget_usd:
                result.stopped = f"the budget of {dollars(budget_usd)} is spent (${spent + ledger.cost_usd:.4f})"
                break
            if budget_usd is not None and ledger.unknown:
                result.stopped = (f"the budget of {dollars(budget_usd)} cannot be kept: {evaluator.label} sent no token "
                                  "usage, so its cost is unknown")
                break
            try:
                scored = await score(ledger.send, evaluator, episode, slug)
            except RecordingError:
                raise
            except Exception as exc:  # noqa: BLE001 - one actor's failed evaluation, said and recorded
                why = redact(failure_reason(exc))
                result.failed[slug] = why
                recorder.record(GenericEvent(t=ledger.now(), **{"from": "coordinator"}, type="system",
                                             text=f"The evaluator ({evaluator.label}) could not score "
                                                  f"{episode.member(slug).name}: {why}", reason="evaluation",
                                             evaluated=slug, rubric=evaluator.rubric.name, evaluator=evaluator.label))
                continue
            recorder.record(event_of(scored, evaluator, ledger.now()))
            result.scored.append(scored)
    finally:
        result.cost_usd = ledger.cost_usd
        await evaluator.provider.aclose()
        recorder.lock = None  # the caller releases it, after the derived files are written
        try:
            recorder.finish(dated)
        except RecordingError as exc:
            raise InvalidConfig(f"the evaluation of {run_dir} is in its events.jsonl, but its derived files could "
                                f"not be written ({exc}); run `promptdesk rebuild {run_dir}`") from None
