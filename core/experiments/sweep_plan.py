"""A sweep's plan and results as its folder records them: `sweep.yaml` (`SweepPlan`, read back by
`read_plan`), its combinations (`Combination`, one run each) and `results.jsonl` (`read_results`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptdesk.core.casting.build import RunOptions
from promptdesk.core.casting.scene_file import read_yaml
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.experiments.benchmark import factors, model_choice, run_name
from promptdesk.core.protocol.bounded import json_lines, load_json

PLAN_FILE, RESULTS_FILE = "sweep.yaml", "results.jsonl"
RESULT_FIELDS = ("isolation", "coordinator", "seed", "close_reason", "goal_achieved", "success", "beats", "tokens",
                 "cost_usd", "duration_s", "failures", "audit")

FAILED_CLOSES = ("error", "provider-error")
"""Close reasons that make a run a failed run of its sweep: the engine failed, or its model calls did
(its `--batch` would exit 1)."""


def failed_run(row: dict[str, Any]) -> bool:
    """Whether a result line is a failed run's (`FAILED_CLOSES`)."""
    return row.get("close_reason") in FAILED_CLOSES


@dataclass(frozen=True)
class Combination:
    """One cell of the plan: a condition and a seed; in a benchmark sweep, the scene's name and the
    actors' model (`provider:model`) too ("" otherwise)."""

    isolation: str
    coordinator: str
    seed: int
    scene: str = ""
    model: str = ""

    @property
    def name(self) -> str:
        return run_name(self.scene, self.model, f"{self.isolation}-{self.coordinator}-seed{self.seed}")

    @property
    def condition(self) -> str:
        """One column of the comparison: the two choices, after the model when there are several."""
        return f"{self.model} {self.isolation}-{self.coordinator}" if self.model else f"{self.isolation}-{self.coordinator}"


@dataclass
class SweepPlan:
    """What to run. Everything but `concurrency` and `budget_usd` must match to resume a sweep."""

    scene: str
    isolations: list[str]
    coordinators: list[str]
    seeds: list[int]
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    max_beats: int | None = None
    characters_dirs: list[str] = field(default_factory=list)
    concurrency: int = 4
    budget_usd: float | None = None
    requests_per_min: int | None = None
    tokens_per_min: int | None = None
    provider_settings: dict[str, Any] = field(default_factory=dict)
    protocol: str | None = None
    scenes: list[str] = field(default_factory=list)  # a benchmark sweep's scene files (empty: `scene` alone),
    models: list[str] = field(default_factory=list)  # its actors' models and its evaluators, each
    evaluators: list[str] = field(default_factory=list)  # `provider:model[@url]` (`experiments.benchmark`)
    IDENTITY = ("scene", "isolations", "coordinators", "seeds", "provider", "model", "base_url", "max_beats",
                "characters_dirs", "protocol", "scenes", "models", "evaluators")
    INHERITED = ("provider", "model", "base_url", "protocol")
    """Provider flags that, not given again, are the recorded plan's (a flag not given is no difference)."""

    def combinations(self) -> list[Combination]:
        return [Combination(i, c, s, scene, model) for scene, model in factors(self.scenes, self.models)
                for i in self.isolations for c in self.coordinators for s in self.seeds]

    def conditions(self) -> list[str]:
        return list(dict.fromkeys(c.condition for c in self.combinations()))

    def differences(self, other: SweepPlan) -> list[str]:
        """The identity fields on which two plans disagree."""
        return [k for k in self.IDENTITY if getattr(self, k) != getattr(other, k)]

    def run_options(self, combo: Combination, out: Path) -> RunOptions:
        provider, model, base_url = model_choice(self.models, combo.model) or (self.provider, self.model, self.base_url)
        return RunOptions(isolation=combo.isolation, coordinator=combo.coordinator, provider=provider,
                          model=model, base_url=base_url or self.base_url, seed=combo.seed, max_beats=self.max_beats,
                          characters_dirs=[Path(d) for d in self.characters_dirs], out=out, headless=True,
                          write_character_journals=False, provider_settings=self.provider_settings,
                          protocol=self.protocol)


def unrecorded(folder: Path, rows: list[dict[str, Any]]) -> dict[str, str]:
    """The result lines of runs that failed before recording anything (close `error`, no `events.jsonl`:
    a run that could not start), by run name, with their error: they have a result but nothing to measure."""
    return {row["run"]: str(row.get("error") or "error") for row in rows
            if row.get("close_reason") == "error" and not (Path(folder) / row["run"] / "events.jsonl").is_file()}


def read_results(folder: Path) -> list[dict[str, Any]]:
    """The result lines of a sweep folder: JSON objects that name their run. A torn line (a kill
    mid-write) and a line that is no result (a list, a number: a hand edit) are skipped."""
    path = folder / RESULTS_FILE
    if not path.is_file():
        return []
    out = []
    for line in json_lines(path.read_text(encoding="utf-8", errors="replace")):
        try:
            row = load_json(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("run"), str):
            out.append(row)
    return out


def name_list(value: Any) -> bool:
    """A list of strings."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def whole_number(value: Any) -> bool:
    """An int that is no bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def whole_numbers(value: Any) -> bool:
    """A list of whole numbers."""
    return isinstance(value, list) and all(whole_number(v) for v in value)


PLAN_KEYS: dict[str, tuple[Any, str]] = {"scene": (lambda v: isinstance(v, str), "a file name"),
                                         "isolations": (name_list, "a list of names"),
                                         "coordinators": (name_list, "a list of names"),
                                         "seeds": (whole_numbers, "a list of whole numbers")}
"""The keys a sweep plan cannot do without, each with its check and what it must be."""


def plan_fields(path: Path, data: Any, what: str, keys: dict[str, tuple[Any, str]], fields: Any) -> dict[str, Any]:
    """The fields of a recorded plan (`sweep.yaml`, `takes.yaml`) for its dataclass (`fields`): a mapping
    whose `keys` are there and of the right kind, or an InvalidConfig naming the file and what is wrong."""
    advice = "move the folder aside or pass another --out"
    if not isinstance(data, dict):
        raise InvalidConfig(f"{path}: {what} is a mapping of keys ({', '.join(keys)}, ...); {advice}", file=str(path))
    for key, (ok, kind) in keys.items():
        if key not in data:
            raise InvalidConfig(f"{path}: {key} is missing; {advice}", file=str(path))
        if not ok(data[key]):
            raise InvalidConfig(f"{path}: {key} is not {kind} ({data[key]!r}); {advice}", file=str(path))
    return {k: v for k, v in data.items() if k in fields}


def read_plan(folder: Path) -> SweepPlan:
    """The plan recorded in a sweep folder's `sweep.yaml` (damage is an InvalidConfig naming it)."""
    path = folder / PLAN_FILE
    data = read_yaml(path, "Sweep plan")
    return SweepPlan(**plan_fields(path, data, "a sweep plan", PLAN_KEYS, SweepPlan.__dataclass_fields__))
