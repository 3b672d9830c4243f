"""A sweep of takes: one run taken again from beat K over many seeds, with one change and without it,
so that what the change does is measured over many continuations with the statistics of `compare`.

`promptdesk sweep --branch-from RUN_DIR --at-beat K --event TEXT --seeds 1-10` plans, per seed, two
takes of the run from beat K (`promptdesk.core.casting.branch`): `retake-seed<N>` (no change but the seed) and
`change-seed<N>` (the change, the same seed). The two conditions, `retake` and `change`, differ only
by the change. The sweep folder holds `takes.yaml` (the plan), a take folder per combination,
`results.jsonl` and `spend.json`; the rest is an ordinary sweep's (`promptdesk.core.experiments.sweep.Sweep`):
concurrency, shared rate limits, a budget across invocations, resuming a stopped or killed take where
it stopped. A take's spend is its own calls only (its inherited part was paid by its parent), and its
results are measured from beat K on (`promptdesk.core.experiments.takes.metrics_after`).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from promptdesk.core.casting.branch import check_branch, prepare_branch
from promptdesk.core.casting.resume import prepare
from promptdesk.core.errors import InvalidConfig, NotARun
from promptdesk.core.experiments.metrics import RunMetrics, audit_verdict
from promptdesk.core.experiments.progress import Progress, planned_rows
from promptdesk.core.casting.scene_file import read_yaml
from promptdesk.core.experiments.sweep import RESULT_FIELDS, Sweep, read_results
from promptdesk.core.experiments.sweep_checks import check_names_recordable
from promptdesk.core.experiments.sweep_plan import plan_fields, unrecorded, whole_number, whole_numbers
from promptdesk.core.experiments.takes import metrics_after, read_take
from promptdesk.core.record.events import BaseEvent
from promptdesk.core.record.takes import Change, split_at_beat

TAKES_PLAN = "takes.yaml"
RETAKE, CHANGE = "retake", "change"
CONDITIONS = (RETAKE, CHANGE)


@dataclass(frozen=True)
class TakeCombination:
    """One take of the plan: with or without the change, and a seed."""

    condition: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.condition}-seed{self.seed}"


@dataclass
class TakeSweepPlan:
    """What to take again. Everything but `concurrency` and `budget_usd` must match to resume."""

    parent: str
    at_beat: int
    seeds: list[int]
    event: str | None = None
    note: str | None = None
    to: str | None = None
    base_url: str | None = None
    provider: str | None = None
    model: str | None = None
    """Another provider or model for every take from the beat on (with the change and without it)."""
    provider_settings: dict[str, Any] = field(default_factory=dict)
    """Provider settings for every take from the beat on (`--timeout`, `--max-concurrency`, ...), as `branch`'s."""
    concurrency: int = 4
    budget_usd: float | None = None
    requests_per_min: int | None = None
    tokens_per_min: int | None = None
    parent_id: str | None = None
    """The parent run's identity beside its absolute path (`run_identity`): a folder replaced by
    another run at the same path is a different parent."""

    IDENTITY = ("parent", "at_beat", "seeds", "event", "note", "to", "base_url", "provider", "model", "parent_id")
    INHERITED = ("base_url", "provider", "model")
    """Provider flags that, not given again, are the recorded plan's (a flag not given is no difference)."""

    def combinations(self) -> list[TakeCombination]:
        return [TakeCombination(c, s) for c in CONDITIONS for s in self.seeds]

    def conditions(self) -> list[str]:
        return list(CONDITIONS)

    def differences(self, other: TakeSweepPlan) -> list[str]:
        """The identity fields on which two plans disagree: the parent by its resolved path (from any
        working folder) and its identity when both know it."""
        wrong = [k for k in self.IDENTITY if k not in ("parent", "parent_id") and getattr(self, k) != getattr(other, k)]
        if Path(self.parent).resolve() != Path(other.parent).resolve():
            if not (self.parent_id and self.parent_id == other.parent_id):  # the same run, moved (`moved_parent`)
                wrong.insert(0, "parent")
        elif self.parent_id and other.parent_id and self.parent_id != other.parent_id:
            wrong.insert(0, "parent (another run now stands at its path)")
        return wrong

    def change(self, combo: TakeCombination) -> Change:
        """The take's change: the seed, and for the `change` condition the event or note."""
        moved = {"provider": self.provider, "model": self.model, "settings": self.provider_settings or None}
        if combo.condition == RETAKE:
            return Change(seed=combo.seed, **moved)
        return Change(event=self.event, note=self.note, to=self.to, seed=combo.seed, **moved)


def run_identity(run_dir: Path) -> str | None:
    """A run's identity: a digest of its `private.json` (written once at its start, never rewritten),
    or None when it cannot be read."""
    try:
        return hashlib.sha256((Path(run_dir) / "private.json").read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def moved_parent(folder: Path, recorded: TakeSweepPlan, given: TakeSweepPlan) -> None:
    """Refuse a parent given at another path than the recorded one, with the same start record, that is
    not the run the sweep's takes were taken from: each take begins with its parent's record before the
    beat, so the given run's must be that of every take already begun (a moved parent's is)."""
    if Path(recorded.parent).resolve() == Path(given.parent).resolve() or recorded.parent_id != given.parent_id:
        return  # the same path, or another run (`differences` names it)
    try:
        prefix = split_at_beat(Path(given.parent), given.at_beat).lines
    except (InvalidConfig, NotARun, OSError):
        return  # the take's checks name what is wrong with it
    for combo in given.combinations():
        log = folder / combo.name / "events.jsonl"
        with contextlib.suppress(OSError), open(log, encoding="utf-8", errors="replace") as handle:
            if [handle.readline() for _ in prefix] != prefix:
                raise InvalidConfig(f"{given.parent} is not the run {folder}'s takes were taken from ({recorded.parent}, "
                                    f"moved?): its record before beat {given.at_beat} is not theirs; give that run")


def is_take_sweep(path: Path) -> bool:
    return (Path(path) / TAKES_PLAN).is_file()


TAKE_PLAN_KEYS: dict[str, tuple[Any, str]] = {"parent": (lambda v: isinstance(v, str), "a run folder's path"),
                                              "at_beat": (whole_number, "a whole number"),
                                              "seeds": (whole_numbers, "a list of whole numbers")}
"""The keys a plan of takes cannot do without, each with its check and what it must be."""


def read_take_plan(folder: Path) -> TakeSweepPlan:
    """The plan recorded in a sweep of takes' `takes.yaml` (damage is an InvalidConfig naming it)."""
    path = Path(folder) / TAKES_PLAN
    data = read_yaml(path, "Plan of takes")
    return TakeSweepPlan(**plan_fields(path, data, "a sweep of takes' plan", TAKE_PLAN_KEYS,
                                       TakeSweepPlan.__dataclass_fields__))


def take_sweep_runs(folder: Path) -> tuple[list[Path], dict[str, str], int]:
    """The finished takes of a sweep of takes in plan order, each one's condition by name, and the beat."""
    plan = read_take_plan(folder)
    rows = read_results(folder)
    done = {row.get("run") for row in rows} - set(unrecorded(folder, rows))
    finished = [c for c in plan.combinations() if c.name in done]
    return [Path(folder) / c.name for c in finished], {c.name: c.condition for c in finished}, plan.at_beat


class TakeProgress(Progress):
    """The sweep's progress, its results counted by the take's condition."""

    def begin(self, plan: Any, results: list[dict[str, Any]], todo: int, spent: float | None = None,
              resumed: int = 0) -> None:
        self.total = dict.fromkeys(plan.conditions(), len(plan.seeds))
        self.done, self.failed = dict.fromkeys(plan.conditions(), 0), dict.fromkeys(plan.conditions(), 0)
        for row in planned_rows(plan, results):
            self._count(str(row.get("condition")), row)
        self.spent = sum(row.get("cost_usd") or 0.0 for row in results) if spent is None else spent
        self.started, self.todo, self.finished_now = self.now(), todo, 0
        self._say(f"sweep of takes: {sum(self.total.values())} takes, {sum(self.done.values())} already done, "
                  f"{todo} to run" + (f" ({resumed} continuing where they stopped)" if resumed else "")
                  + (f", ${self.spent:.4f} already spent" if self.spent else ""))


class TakeSweep(Sweep):
    """Runs a plan of takes into a folder (see the module docstring)."""

    def __init__(self, plan: TakeSweepPlan, folder: Path, progress: Any = None) -> None:
        self._start(plan, folder, progress)
        self.parent = Path(plan.parent).resolve()
        plan.parent, plan.parent_id = str(self.parent), run_identity(self.parent)

    def validate(self) -> None:
        """Refuse a plan that cannot run (the parent, the beat, the change), before anything is written."""
        if self.plan.event is None and self.plan.note is None:
            raise InvalidConfig("a sweep of takes measures one change: give --event TEXT or --note TEXT")
        check_names_recordable(self.plan, TAKES_PLAN)
        recorded = None
        if is_take_sweep(self.folder):  # run again: a provider flag not given is the recorded plan's, checked as such
            with contextlib.suppress(InvalidConfig):  # a damaged plan is named when the folder is prepared
                recorded = read_take_plan(self.folder)
                for key in self.plan.INHERITED:
                    if getattr(self.plan, key) is None:
                        setattr(self.plan, key, getattr(recorded, key))
        if recorded is not None:
            moved_parent(self.folder, recorded, self.plan)
        for condition in CONDITIONS:
            check_branch(self.parent, self.plan.at_beat, self.plan.change(TakeCombination(condition, self.plan.seeds[0])),
                         self.plan.base_url)

    FOLDER = (TAKES_PLAN, "a sweep of takes", "a sweep of takes")

    def _recorded_plan(self) -> TakeSweepPlan:
        return read_take_plan(self.folder)

    def _plan_text(self) -> str:
        return yaml.safe_dump(asdict(self.plan), sort_keys=False)

    def _session(self, combo: TakeCombination) -> Any:  # type: ignore[override]
        """The take: its stopped or killed run continued, else a new take; what it inherited is its baseline."""
        run_dir = self.folder / combo.name
        if combo.name in self.to_resume:
            session = prepare(run_dir, self.plan.base_url, stopped_too=True)
        else:
            session = prepare_branch(self.parent, self.plan.at_beat, self.plan.change(combo), out=run_dir,
                                     base_url=self.plan.base_url)
        self.baseline[combo.name] = session.state.cost_usd
        return session

    def _result(self, combo: TakeCombination, events: list[BaseEvent]) -> dict[str, Any]:  # type: ignore[override]
        run_dir = self.folder / combo.name
        metrics = metrics_after(read_take(run_dir, events), self.plan.at_beat, audit_verdict(run_dir)).to_dict()
        return {"run": combo.name, "condition": combo.condition, **{k: metrics[k] for k in RESULT_FIELDS}}



def measure_take_sweep(folder: Path, audit: bool = True) -> list[RunMetrics]:
    """The finished takes of a sweep of takes, measured from the branch beat, each labelled by its condition."""
    folders, conditions, beat = take_sweep_runs(folder)
    return [replace(metrics_after(read_take(f), beat, audit_verdict(f) if audit else "not run"),
                    condition_label=conditions[f.name]) for f in folders]
