"""A sweep: every combination of isolation × coordinator × seed as an ordinary run, in one process (a
benchmark sweep adds scenes, actor models and evaluators: `promptdesk.core.experiments.benchmark`).

The sweep folder holds `sweep.yaml` (the plan), one run folder per combination (named
`<isolation>-<coordinator>-seed<N>`, built through `build_session` exactly as `--batch` builds a
run), `results.jsonl`, one line appended as each run finishes, and `spend.json`, what the sweep has
spent in all its invocations (`promptdesk.core.experiments.spend`). Running the same plan into the same folder
again resumes: runs with a result are skipped; a run without one that was killed, or stopped by the
sweep (its budget, a signal), is continued where it stopped (`promptdesk.core.casting.resume`); one whose record
is whole and closed (a killed sweep's run that `promptdesk resume` finished) has its result read from its folder;
any other run folder without a result is kept aside as `<name>.partial-<k>` and the run starts again.

One sweep at a time: the sweep holds its folder's lock (`promptdesk.core.record.folder_lock`) from
`prepare_folder` to `release`, and each live run its run folder's. The budget (`--budget-usd`, or the
one recorded in `sweep.yaml` when none is given) holds across invocations: it is compared with
everything spent so far, and a sweep whose budget is spent starts nothing; a call that sends no
token usage stops a sweep with a budget (its cost is unknown, so the budget cannot be kept).

Runs of a sweep do not append to the characters' own journals: every run starts from the same
memories, whatever order the runs finish in (the run folder's `journals/` still holds them).
A file that cannot be written (a full disk, a permission: the sweep's own files or a run's record)
stops the sweep as a `RecordingError` naming the path (`failure`), with every live run stopped
cleanly: nothing gets a result line it did not earn, and the same command run again continues.
A wait a provider's response header asks for is capped by its `retry_after_cap_s` and said once on
the progress stream (`promptdesk.core.providers.ratelimit`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from promptdesk.core.engine import heap
from promptdesk.core.errors import InvalidConfig, NotARun, RecordingError, recording_error
from promptdesk.core.record.events import BaseEvent, CallEvent
from promptdesk.core.record.folder_lock import LOCK_FILE, FolderLock, busy, holder
from promptdesk.core.record.run_folder import write_atomic
from promptdesk.core.record.cut import cut_of_folder
from promptdesk.core.record.private import read_private
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.seams import superseded_calls
from promptdesk.core.experiments.benchmark import attach_evaluators, check_benchmark, scene_key
from promptdesk.core.experiments.metrics import audit_verdict, recorded_success, run_metrics, unscored_agents
from promptdesk.core.experiments.spend import SPEND_FILE, spent_so_far, write_spend
from promptdesk.core.experiments.retry_failed import set_aside, set_failed_aside
from promptdesk.core.experiments.sweep_checks import (DISK_ERRNOS, SWEEP_ADVICE, check_names_recordable, check_plan,
                                                     check_recorded_budget, writing)
from promptdesk.core.providers.ratelimit import Limiters, Limits
from promptdesk.core.casting.scene_file import Scene, load_scene
from promptdesk.core.casting import evaluators
from promptdesk.core.casting.build import build_session
from promptdesk.core.casting.resume import prepare, resumable

from promptdesk.core.experiments.sweep_plan import (PLAN_FILE, RESULT_FIELDS, RESULTS_FILE, Combination,  # noqa: F401
                                                   SweepPlan, failed_run, read_plan, read_results)


class Sweep:
    """Runs a plan into a folder: concurrency, shared rate limits, budget, results and stopping."""

    def __init__(self, plan: SweepPlan, folder: Path, progress: Any = None) -> None:
        self.scenes: dict[str, Scene] = {scene_key(path): load_scene(Path(path)) for path in plan.scenes}
        self.scene: Scene = next(iter(self.scenes.values())) if self.scenes else load_scene(Path(plan.scene))
        self._start(plan, folder, progress)

    def _start(self, plan: Any, folder: Path, progress: Any) -> None:
        """The state every sweep keeps while it runs (a sweep of takes starts from it too)."""
        self.plan, self.folder, self.progress = plan, folder, progress
        self.limiters = Limiters(Limits(plan.requests_per_min, plan.tokens_per_min), say=self._note)
        self.live: dict[str, Any] = {}
        self.baseline: dict[str, float] = {}
        """What each live run had already spent when this invocation took it up (a resumed run's past)."""
        self.spent_usd = 0.0  # in all its invocations; runs still live excepted (`live_spend` adds them)
        self.unknown_cost: list[str] = []
        """The run folders whose record holds a call of unknown cost (then no budget can be kept)."""
        self.to_resume: set[str] = set()
        self.retry_failed = False
        """Whether failed runs are set aside and played again (`--retry-failed`, `retry_failed`)."""
        self.retried: list[str] = []
        self.stopping: str | None = None
        self.failed = 0
        self.failure: RecordingError | None = None
        """The first write that failed: the sweep stopped on it."""
        self.unpriced: list[str] = []
        """The plan's models with no known price (`provider:model`), found by `validate`."""
        self.lock: FolderLock | None = None

    def validate(self) -> None:
        """Refuse a plan that cannot run (choices, cast, providers, a budget that cannot be kept, as
        `--batch` refuses it), before anything is written or sent. One run per coordinator (and model)
        is built in a scratch folder: a judge's model counts (a benchmark's scenes and evaluators too)."""
        check_names_recordable(self.plan, PLAN_FILE)
        self.unpriced = check_plan(self.scene, self.plan)
        if self.plan.scenes or self.plan.models or self.plan.evaluators:
            self.unpriced += check_benchmark(self.scenes or {"": self.scene}, self.plan, self.unpriced)

    def _note(self, line: str) -> None:
        """Tell the operator something (a provider's wait) on the progress stream."""
        if self.progress:
            self.progress.note(line)

    def prepare_folder(self) -> list[Combination]:
        """Lock the folder, write or check `sweep.yaml`, read what was spent, note the stopped runs to
        continue and set aside the other unfinished ones; return the runs still to do. Raises
        `FolderBusy` while another sweep (or a run) writes the folder or one of its unfinished runs."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.lock = FolderLock.take(self.folder, "sweep")
        except OSError as exc:
            if exc.errno in DISK_ERRNOS:
                raise recording_error(exc, str(self.folder), SWEEP_ADVICE) from None
            raise InvalidConfig(f"{self.folder} cannot be used as a sweep folder ({exc.strerror or exc}); "
                                f"give another --out") from None
        try:
            return self._prepare()
        except BaseException:
            self.release()
            raise

    FOLDER = (PLAN_FILE, "a sweep", "a sweep folder")
    """This kind of sweep's plan file, and what it is called (a sweep of takes has its own)."""

    def _recorded_plan(self):  # noqa: ANN202 - the plan of this kind of sweep
        return read_plan(self.folder)

    def _plan_text(self) -> str:
        return yaml.safe_dump(asdict(self.plan), sort_keys=False)

    def _prepare(self) -> list[Combination]:
        (name, kind, folder_kind), plan_path = self.FOLDER, self.folder / self.FOLDER[0]
        if plan_path.is_file():
            recorded = self._recorded_plan()
            for key in self.plan.INHERITED:
                if getattr(self.plan, key) is None:
                    setattr(self.plan, key, getattr(recorded, key))
            if wrong := recorded.differences(self.plan):
                verb = "differ" if len(wrong) > 1 or wrong[0].endswith("s") else "differs"   # seeds differ, model differs
                raise InvalidConfig(f"{self.folder} holds {kind} with a different plan ({', '.join(wrong)} {verb}); "
                                    f"give another --out, or the same flags as before to resume")
            if self.plan.budget_usd is None:
                self.plan.budget_usd = recorded.budget_usd
                check_recorded_budget(self.plan.budget_usd, plan_path, self.unpriced)
        elif any(p.name != LOCK_FILE for p in self.folder.iterdir()):
            raise InvalidConfig(f"{self.folder} exists and is not {folder_kind} (no {name}); give another --out")
        if self.retry_failed:
            with writing(self.folder / RESULTS_FILE):
                self.retried = set_failed_aside(self.folder, {c.name for c in self.plan.combinations()})
        done = {row.get("run") for row in read_results(self.folder)}
        todo = [c for c in self.plan.combinations() if c.name not in done]
        for combo in todo:
            if (who := holder(self.folder / combo.name)) is not None:
                raise busy(self.folder / combo.name, who)
        with writing(plan_path):  # in one step: a write cut short leaves the old plan (or none), never half of one
            write_atomic(plan_path, self._plan_text())
        for combo in list(todo):
            if (row := self._closed_row(combo)) is not None:
                with writing(self.folder / RESULTS_FILE):
                    self._append(row)
                self.failed += failed_run(row)
                todo.remove(combo)
        for combo in todo:
            if resumable(self.folder / combo.name, stopped_too=True):
                self.to_resume.add(combo.name)
            else:
                with writing(self.folder / combo.name):
                    set_aside(self.folder / combo.name, "partial")
        self.spent_usd, self.unknown_cost = spent_so_far(self.folder)
        with writing(self.folder / SPEND_FILE):
            write_spend(self.folder, self.spent_usd, self.plan.budget_usd)
        return todo

    def release(self) -> None:
        """Let go of the sweep folder's lock (the end of the process does too)."""
        if self.lock is not None:
            self.lock.release()

    def budget_spent(self) -> bool:
        """True when the budget is already spent, or cannot be kept (the record holds a call whose cost is
        unknown: `unknown_cost`): nothing more may start."""
        return self.plan.budget_usd is not None and (self.spent_usd >= self.plan.budget_usd or bool(self.unknown_cost))

    def budget_message(self, todo: list[Combination]) -> str:
        """Why a sweep whose budget is spent, or cannot be kept, starts nothing, and how to go on."""
        budget = self.plan.budget_usd or 0.0
        if self.unknown_cost:
            runs = ", ".join(self.unknown_cost[:3]) + (", …" if len(self.unknown_cost) > 3 else "")
            return (f"The sweep's budget cannot be kept: {len(self.unknown_cost)} run(s) ({runs}) made a call whose "
                    f"server sent no token usage, so what the sweep spent is ${self.spent_usd:.4f} and more, by "
                    f"an unknown amount, against --budget-usd {budget:g}; {len(todo)} run(s) still to do, nothing "
                    "was started. To go on without a budget, sweep into another --out, on a server that reports usage.")
        more = max(budget * 2, self.spent_usd + budget)
        return (f"The sweep's budget is spent: ${self.spent_usd:.4f} of --budget-usd {budget:g} (recorded in "
                f"{self.folder / 'spend.json'}); {len(todo)} run(s) still to do, nothing was started. "
                f"To go on, run the same command with a higher budget, e.g. --budget-usd {more:.2f}: "
                f"stopped runs continue where they stopped.")

    async def run(self, todo: list[Combination]) -> None:
        """Run every combination still to do, `concurrency` at a time, until done or stopped."""
        slots = asyncio.Semaphore(self.plan.concurrency)
        if self.progress:
            self.progress.begin(self.plan, read_results(self.folder), len(todo), self.spent_usd,
                                resumed=len(self.to_resume & {c.name for c in todo}))
        if self.retried:
            self._note(f"{len(self.retried)} failed run(s) played again ({', '.join(self.retried[:5])}"
                       f"{', …' if len(self.retried) > 5 else ''}): each earlier attempt kept as <run>.failed-<k>, "
                       "its result in results.failed.jsonl")
        await asyncio.gather(*(self._one(combo, slots) for combo in todo))
        self._save_spend()
        if self.progress:
            self.progress.end(self.stopping, self.spent_usd, self.plan.budget_usd)

    def stop(self, why: str = "stop") -> None:
        """Stop every live run cleanly and start no more (Ctrl-C, SIGTERM, the budget, a failed write)."""
        if self.stopping is None:
            self.stopping = why
        for session in list(self.live.values()):
            session.stop()

    def live_spend(self) -> float:
        """Spent so far, in this invocation's live runs too (a resumed run's earlier spend counted once)."""
        return self.spent_usd + sum(s.state.cost_usd - self.baseline.get(name, 0.0) for name, s in self.live.items())

    def _save_spend(self) -> None:
        try:
            with writing(self.folder / SPEND_FILE):
                write_spend(self.folder, self.live_spend(), self.plan.budget_usd)
        except RecordingError as error:
            self.recording_failed(error)

    def recording_failed(self, error: RecordingError) -> None:
        """A write failed: keep the first such error and stop the sweep (every live run cleanly)."""
        if self.failure is None:
            self.failure = error
        self.stop("record-error")

    def _watch(self, event: BaseEvent) -> None:
        if not isinstance(event, CallEvent) or (event.unknown and self.plan.budget_usd is not None):
            return self.stop("unknown-usage") if isinstance(event, CallEvent) else None
        if event.cost_usd:
            self._save_spend()
        if self.plan.budget_usd is not None and self.live_spend() >= self.plan.budget_usd:
            self.stop("budget")

    def _session(self, combo: Combination) -> Any:
        """The run's session: its stopped or killed run continued, else a new one."""
        run_dir = self.folder / combo.name
        if combo.name in self.to_resume:
            session = prepare(run_dir, self.plan.base_url, stopped_too=True)
            self.baseline[combo.name] = session.state.cost_usd
            return session
        self.baseline[combo.name] = 0.0
        session = build_session(self.scenes.get(combo.scene, self.scene), self.plan.run_options(combo, run_dir))
        attach_evaluators(session, self.plan.evaluators, self.plan.provider_settings)
        return session

    async def _one(self, combo: Combination, slots: asyncio.Semaphore) -> None:
        async with slots:
            if self.stopping or self.budget_spent():
                self.stopping = self.stopping or "budget"
                return
            session, failure, row = None, None, {}
            try:
                session = self._session(combo)
                self.limiters.attach(session)
                session.subscribe(self._watch)
                self.live[combo.name] = session
                result = await session.run()
                if result.close_reason == "record-error":
                    failure = session.recorder.failure or RecordingError(
                        str(result.error).removeprefix(f"{RecordingError.code}: "))
                else:
                    row = self._result(combo, session.recorder.events)
            except RecordingError as exc:
                failure = exc
            except OSError as exc:  # a file of the run could not be written (a resumed run's seam, as it is prepared)
                failure = recording_error(exc, exc.filename or str(self.folder / combo.name), SWEEP_ADVICE)
            except Exception as exc:  # noqa: BLE001 - a run's crash is recorded, never dropped
                # a take's combination has no scene or model of its own: its crash is recorded all the same
                own = getattr(combo, "scene", "") or getattr(combo, "model", "")
                factors = {"condition": combo.condition} if own else {}
                row = {"run": combo.name, **asdict(combo), **factors, "close_reason": "error", "success": False,
                       "error": f"{type(exc).__name__}: {exc}"}
            finally:
                self.live.pop(combo.name, None)
            if session is not None:
                self.spent_usd += session.state.cost_usd - self.baseline.get(combo.name, 0.0)
            if failure is not None:
                self.recording_failed(failure)
            if failure is not None or (self.stopping and row["close_reason"] == "stop"):
                if self.progress:
                    self.progress.stopped(combo, self.spent_usd)
                return
            try:
                with writing(self.folder / RESULTS_FILE):
                    self._append(row)
            except RecordingError as error:
                self.recording_failed(error)
                return
            self.failed += failed_run(row)
            if self.progress:
                self.progress.finished(combo, row, self.spent_usd)
            heap.release()  # the run's heap, frozen beat by beat, can be collected once it is garbage

    def _result(self, combo: Combination, events: list[BaseEvent]) -> dict[str, Any]:
        run_dir = self.folder / combo.name
        metrics = run_metrics(events, run=combo.name, audit=audit_verdict(run_dir), success=recorded_success(run_dir),
                              cut=superseded_calls(run_dir)).to_dict()
        factors = {"condition": combo.condition, "scene": combo.scene, "model": combo.model} if combo.scene or combo.model else {}
        cast, owed = list(metrics["actors"]), owed_evaluations(run_dir) if metrics["success"] else 0
        missing = max(0, owed - len(metrics["evaluation"])) * len(cast)  # a stop in its evaluation step: none scored
        scored = ({"unscored": unscored_agents(metrics["evaluation"], cast) + missing}
                  if metrics["evaluation"] or missing else {})
        return {"run": combo.name, **factors, **{k: metrics[k] for k in RESULT_FIELDS}, **scored}

    def _closed_row(self, combo: Combination) -> dict[str, Any] | None:
        """The result of a run that closed without the sweep recording it (a killed sweep's run finished by
        `promptdesk resume`, or a kill between a run's close and its result line), read from its folder;
        None unless its record is whole (closed, not by a stop, its journal step done, its files written)."""
        run_dir = self.folder / combo.name
        if not (run_dir / "metadata.json").is_file():
            return None
        try:
            events = read_events(run_dir)
        except OSError:
            return None
        close = next((e for e in reversed(events) if e.type == "close"), None)
        if close is None or getattr(close, "reason", None) == "stop" or cut_of_folder(run_dir, events) is not None:
            return None
        return self._result(combo, events)

    def _append(self, row: dict[str, Any]) -> None:
        """Append one result line (after a torn last line, from a kill mid-write, on a line of its own)."""
        with open(self.folder / RESULTS_FILE, "a+b") as handle:  # only its last byte is read: no rereading per run
            torn = handle.seek(0, os.SEEK_END) > 0 and handle.seek(-1, os.SEEK_END) >= 0 and handle.read(1) != b"\n"
            handle.write((b"\n" if torn else b"") + (json.dumps(row, ensure_ascii=False) + "\n").encode())

    def complete(self) -> bool:
        """True when every planned run has a result line."""
        done = {row.get("run") for row in read_results(self.folder)}
        return all(c.name in done for c in self.plan.combinations())

    def any_failed(self) -> bool:
        """True when a planned run's result, of this invocation or an earlier one, is a failed run's."""
        planned = {c.name for c in self.plan.combinations()}
        return any(failed_run(row) for row in read_results(self.folder) if row.get("run") in planned)


def owed_evaluations(run_dir: Path) -> int:
    """How many evaluators were to score the run after its close (its start record says; 0 when it cannot)."""
    try:
        return len(evaluators.specs_of(read_private(run_dir)))
    except (NotARun, ValueError, OSError):
        return 0


async def run_with_signals(sweep: Sweep, todo: list[Combination]) -> None:
    """Run the sweep; Ctrl-C, SIGTERM and SIGHUP (as for `--batch`) stop every run cleanly instead of
    killing the process."""
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            loop.add_signal_handler(sig, sweep.stop, "stop")
            installed.append(sig)
        except (NotImplementedError, RuntimeError):
            pass
    try:
        await sweep.run(todo)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        sweep.release()
