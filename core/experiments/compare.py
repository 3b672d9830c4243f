"""Runs side by side: per run, or per condition (isolation-coordinator) with mean ± sd over seeds,
and how sure each difference between two conditions is (`promptdesk.core.experiments.stats`).

The design comes from the runs. Runs are paired by their `Unit` (by default the seed: the same seed
fixes the improviser's draw, and a replayed model's), so when two conditions share seeds, as every
cell of a sweep and both arms of a sweep of takes do, each difference is taken seed by seed (a
paired analysis); conditions that share no seed, or `--unpaired`, are compared as independent
samples. A sweep over both choices also gets the factorial view (`stats.factorial`).

Runs of different scenes cannot be paired by seed (a seed draws different lines in each scene):
`compare` refuses them, unless the analysis is unpaired, or the unit pairs by scene and seed
(`BY_SCENE_AND_SEED`, for a set of scenarios run under every condition).

A value that is unknown for a run (`success` of an old run folder, a goal no one judged, the echo of
a run without a 3-gram) is left out of the mean and counted as unknown, never read as 0; in a paired
analysis it drops that seed's pair for that metric.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import mean, stdev
from typing import Any

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.experiments.column_stat import YES_NO, Stat, number, stat  # noqa: F401 (re-exported)
from promptdesk.core.experiments.metrics import NotARunFolder, RunMetrics, audit_verdict, metrics_of
from promptdesk.core.experiments.stats.design import Sample, repeated, shares_units, unit_text
from promptdesk.core.experiments.stats.factorial import Factorial, adjust_all, factorial, in_units, is_factorial
from promptdesk.core.experiments.stats.rows import Difference, Options, Table, differences, method
from promptdesk.core.experiments.sweep import PLAN_FILE, read_plan, read_results
from promptdesk.core.experiments.sweep_plan import unrecorded
from promptdesk.core.experiments.take_sweep import is_take_sweep, measure_take_sweep
from promptdesk.core.experiments.takes import Family, distinct, family, metrics_after

METRICS = ("beats", "goal_achieved", "success", "duration_s", "turns", "silences", "interruptions", "reactions",
           "mean_speech_words", "echo", "failures", "corrections", "salvaged", "tokens", "cost_usd", "cache_read_share")
"""The rows of a comparison: every number of `RunMetrics` (booleans count as 0/1: a mean is a rate)."""


@dataclass(frozen=True)
class Unit:
    """What pairs runs across conditions: a name for readers and the key of a run."""

    name: str
    of: Callable[[RunMetrics], Hashable]
    includes_scene: bool = False
    """The key tells scenes apart, so runs of several scenes can be paired (scenario by scenario)."""


BY_SEED = Unit("seed", lambda run: run.seed)
BY_SCENE_AND_SEED = Unit("scene and seed", lambda run: (run.scene, run.seed), includes_scene=True)


@dataclass
class Comparison:
    """Columns (runs or conditions), a `Stat` per metric and column, every pair's difference, and for
    a two-factor sweep the factorial view."""

    by: str
    runs: list[RunMetrics]
    columns: dict[str, list[RunMetrics]]
    table: dict[str, dict[str, Stat]]
    statistics: Table
    takes: Family | None = None
    """When the runs are takes of one another (`promptdesk.core.experiments.takes`): where they branched and
    diverge, and their tree; every metric is then of what follows the branch beat."""
    unit: Unit = BY_SEED
    factorial: list[Factorial] = field(default_factory=list)
    factorial_family: int = 0
    left_out: list[dict[str, Any]] = field(default_factory=list)
    """Per sweep folder given whose plan is not finished, its planned runs with no result
    (`left_out`): they are not in the comparison, and every form of it says so."""
    kin: str | None = None
    """When some of the runs are takes of one another but not all (`takes.kin_note`): said, since all are measured whole."""

    @property
    def metrics(self) -> list[str]:
        return list(self.table)

    @property
    def simulated(self) -> bool:
        """Every run kept simulated time (the offline improviser's clock): its durations are not wall time."""
        return bool(self.runs) and all(r.clock == "simulated" for r in self.runs)

    def label(self, metric: str) -> str:
        """A metric's row label: `duration_s` says when its seconds are simulated."""
        return metric + (" (simulated time)" if metric == "duration_s" and self.simulated else "")

    @property
    def differences(self) -> list[Difference]:
        return self.statistics.rows

    @property
    def options(self) -> Options:
        return self.statistics.options

    @property
    def paired(self) -> bool:
        return self.statistics.paired

    @property
    def significant(self) -> list[Difference]:
        """The differences significant at alpha after the adjustment across the table."""
        return [d for d in self.differences if d.significant]

    def to_dict(self) -> dict[str, Any]:
        stats = method(self.statistics) | {"unit": self.unit.name}
        if self.factorial:
            stats["factorial"] = (f"{self.factorial[0].design}; terms adjusted together "
                                  f"({self.factorial_family} tests)")
        return {"by": self.by, "columns": list(self.columns),
                "metrics": {m: {c: vars(s) for c, s in row.items()} for m, row in self.table.items()},
                "design": stats["design"], "statistics": stats,
                "differences": [d.to_dict() for d in self.differences],
                "factorial": [f.to_dict() for f in self.factorial],
                "runs": [r.to_dict() for r in self.runs], "left_out": self.left_out,
                **({"kin": self.kin} if self.kin else {}),
                **({"branched_at": self.takes.branched_at, "diverges_at": self.takes.diverges_at,
                    "takes": self.takes.to_dict()} if self.takes is not None else {})}


def value(run: RunMetrics, metric: str) -> float | None:
    """A metric of a run as a number (True/False as 1/0), None when unknown."""
    raw = getattr(run, metric)
    return None if raw is None else float(raw)


def finite(number: float | None) -> float | None:
    """A measured value, or None (unknown) when it is none or not a finite number (a NaN cost in a record)."""
    return number if number is not None and math.isfinite(number) else None


def known(runs: list[RunMetrics], metric: str) -> list[float]:
    """The known values of a metric over runs."""
    return [v for v in (value(r, metric) for r in runs) if v is not None]


def check_design(runs: list[RunMetrics], unit: Unit, options: Options) -> None:
    """Refuse a run with no start record (nothing says what it was), and runs of several scenes unless
    they can be compared (see the module docstring)."""
    for run in runs:
        if run.scene is None and run.isolation is None and run.seed is None and run.beats == 0:
            raise InvalidConfig(f"{run.run} recorded no event (an empty events.jsonl: a run killed before its first "
                                "event), so it has no scene, choices or seed to compare by; leave it out")
    scenes = sorted({str(r.scene) for r in runs})
    if len(scenes) > 1 and not unit.includes_scene and not options.unpaired:
        raise InvalidConfig(f"these runs are of {len(scenes)} different scenes ({', '.join(scenes)}): runs are paired "
                            "by seed, and a seed draws different lines in each scene; compare each scene's runs "
                            "apart, or give --unpaired to compare them as independent samples")


def check_pairs(columns: dict[str, list[RunMetrics]], samples: dict[str, Sample], unit: Unit) -> None:
    """Refuse a paired design where a condition has two runs of one unit (which would be its pair?)."""
    for column, sample in samples.items():
        twice = repeated(sample)
        if twice:
            names = [r.run for r in columns[column] if unit.of(r) in twice]
            raise InvalidConfig(f"{column} has more than one run with {unit.name} {unit_text(twice)} ({', '.join(names)}):"
                                f" a paired comparison needs one run per {unit.name} and condition; leave the extra "
                                "runs out, or give --unpaired")


def cells_of(columns: dict[str, list[RunMetrics]]) -> dict[str, dict[tuple[str, str], str]]:
    """The columns as (isolation, coordinator) cells, per label (a benchmark's model, a sweep folder; ""
    for a sweep's plain conditions); none when a column is not a sweep's condition."""
    groups: dict[str, dict[tuple[str, str], str]] = {}
    for column, runs in columns.items():
        first = runs[0]
        if first.isolation is None or first.coordinator is None:
            return {}
        label = (first.condition_label or "").removesuffix(f"{first.isolation}-{first.coordinator}").rstrip(" :")
        groups.setdefault(label, {})[(first.isolation, first.coordinator)] = column
    return groups


def compare(runs: list[RunMetrics], by: str = "run", metrics: tuple[str, ...] = METRICS,
            takes: Family | None = None, options: Options = Options(), unit: Unit = BY_SEED,
            measure: Callable[[RunMetrics, str], float | None] = value) -> Comparison:
    """Group runs by `run` (one column each) or `condition`; measure each metric per column (`measure`:
    how a metric is read from a run, `value` by default), and test every pair of columns as the design
    allows (`options`). `takes`: the runs are takes of one another (measured after their branch beat)."""
    check_design(runs, unit, options)
    options = replace(options, unit=unit.name)
    columns: dict[str, list[RunMetrics]] = {}
    for run in runs:
        columns.setdefault(run.run if by == "run" else run.condition(), []).append(run)
    samples = {m: {c: [(unit.of(r), finite(measure(r, m))) for r in rs] for c, rs in columns.items()} for m in metrics}
    table = {m: {c: stat([v for _, v in sample]) for c, sample in row.items()} for m, row in samples.items()}
    if by == "run":
        options = replace(options, unpaired=True)
    elif not options.unpaired and samples and shares_units(next(iter(samples.values()))):
        check_pairs(columns, next(iter(samples.values())), unit)
    statistics = differences(samples, options)
    found = Comparison(by, runs, columns, table, statistics, takes, unit)
    for label, cells in (cells_of(columns) if by == "condition" else {}).items():
        if is_factorial({cell: [] for cell in cells}):   # per label: each model's isolation × coordinator
            found.factorial += [replace(factorial(m, {cell: samples[m][column] for cell, column in cells.items()},
                                                  statistics.paired), label=label) for m in metrics]
    for f in found.factorial:   # the subject is the pairs' unit: a seed, or a scene and seed
        f.design = f.design.replace("by seed", f"by {unit.name}")
        f.untested = f.untested and in_units(f.untested, unit.name)
    if found.factorial:
        found.factorial_family = adjust_all(found.factorial, options.adjust, options.alpha)
    return found


def parse_metrics(text: str, known: tuple[str, ...] = METRICS) -> tuple[str, ...]:
    """`--metrics turns,tokens`: the metrics named, in the order given (raises InvalidConfig naming
    the valid ones: `known`, which an evaluation's dimensions may extend)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    wrong = [n for n in names if n not in known]
    if wrong or not names:
        raise InvalidConfig(f"--metrics takes a comma-separated list of {', '.join(known)}; got {text!r}")
    return tuple(dict.fromkeys(names))


def is_sweep(path: Path) -> bool:
    return (path / PLAN_FILE).is_file()


def sweep_runs(folder: Path) -> list[Path]:
    """The finished runs of a sweep folder, in plan order (runs without a result are left out, and so
    are runs that failed before recording anything: `left_out` names both)."""
    rows = read_results(folder)
    done = {row.get("run") for row in rows} - set(unrecorded(folder, rows))
    return [folder / c.name for c in read_plan(folder).combinations() if c.name in done]


def _expand(path: Path) -> tuple[list[Path], bool]:
    """The run folders a path names (itself, or a sweep's finished runs) and whether it was a sweep."""
    from promptdesk.core.experiments.take_sweep import take_sweep_runs
    if is_take_sweep(path) or is_sweep(path):
        folders = take_sweep_runs(path)[0] if is_take_sweep(path) else sweep_runs(path)
        if not folders:
            kind = "a sweep of takes with no finished take" if is_take_sweep(path) else "a sweep with no finished run"
            raise NotARunFolder(nothing_finished(path, kind))
        return folders, True
    if not (path / "events.jsonl").is_file():
        raise NotARunFolder(f"{path} is not a run folder (no events.jsonl in it) nor a sweep folder (no {PLAN_FILE})")
    return [path], False


def _expand_all(paths: list[Path]) -> list[tuple[Path, list[Path], bool]]:
    """Each path given, the run folders it names and whether it is a sweep. A run named twice (the
    same folder, or a run of a sweep also given) would count twice, and sweep folders are compared
    with sweep folders: either is refused, naming the folders."""
    expanded = [(path, *_expand(path)) for path in paths]
    given: dict[Path, int] = {}
    for index, (path, folders, _) in enumerate(expanded):
        for folder in folders:
            first = given.setdefault(folder.resolve(), index)
            if first != index:
                raise InvalidConfig(f"{folder} is given twice ({paths[first]} and {path}): name each run once, "
                                    "or it is counted twice")
    sweeps = [path for path, _, swept in expanded if swept]
    runs = [path for path, _, swept in expanded if not swept]
    if sweeps and runs:
        raise InvalidConfig(f"{runs[0]} is a run folder and {sweeps[0]} a sweep folder: compare sweep folders "
                            "together, or run folders together")
    return expanded


def sweeping(path: Path) -> str | None:
    """The process sweeping `path` now (`"1234 sweep"`), from the folder's lock; None when none is."""
    from promptdesk.core.record.folder_lock import holder
    return holder(path)


def nothing_finished(path: Path, kind: str) -> str:
    """Why a sweep with no finished run yet cannot be compared or reported, and what to do: wait for the
    sweep that is running it, or run it."""
    if writer := sweeping(path):
        pid = writer.partition(" ")[0]
        return f"{path} is {kind} yet; it is being swept now (process {pid}): run this again once a run has finished"
    return f"{path} is {kind} yet; run the sweep first"


def left_out(paths: list[Path]) -> list[dict[str, Any]]:
    """For each sweep folder (or sweep of takes) among `paths` whose plan is not finished: the folder,
    its planned and finished runs, and the names of the planned runs with no result, in plan order."""
    from promptdesk.core.experiments.take_sweep import read_take_plan
    out = []
    for path in paths:
        if not (is_take_sweep(path) or is_sweep(path)):
            continue
        rows = read_results(path)
        done = {row.get("run") for row in rows}
        planned = (read_take_plan(path) if is_take_sweep(path) else read_plan(path)).combinations()
        missing, names = [c for c in planned if c.name not in done], {c.name for c in planned}
        failed = {name: error for name, error in unrecorded(path, rows).items() if name in names}
        if missing or failed:
            seeds: dict[str, list[int]] = {}
            scenes: dict[str, dict[str, int]] = {}  # a benchmark's runs left out, per condition and scene
            for c in missing:
                seeds.setdefault(c.condition, []).append(c.seed)
                if getattr(c, "scene", ""):
                    by_scene = scenes.setdefault(c.condition, {})
                    by_scene[c.scene] = by_scene.get(c.scene, 0) + 1
            out.append({"folder": str(path), "planned": len(planned), "finished": len(planned) - len(missing),
                        "runs": [c.name for c in missing], "seeds": {k: sorted(set(v)) for k, v in seeds.items()},
                        **({"scenes": scenes} if scenes else {}), "unrecorded": failed,
                        **({"sweeping": writer} if (writer := sweeping(path)) else {})})
    return out


def check_sweeps(paths: list[Path], options: Options) -> None:
    """Refuse, unless the analysis is unpaired, sweep folders whose seeds draw different lines: a sweep of
    takes beside a sweep of whole runs, or sweeps of takes of another parent or from another beat (the
    same seed draws another continuation). Takes of one parent from one beat pair (two changes)."""
    if options.unpaired:
        return
    from promptdesk.core.experiments.take_sweep import read_take_plan
    kinds: dict[Any, tuple[Path, str]] = {}
    for path in paths:
        if is_take_sweep(path):
            plan = read_take_plan(path)
            key: Any = (plan.parent_id or plan.parent, plan.at_beat)
            kinds.setdefault(key, (path, f"takes of {Path(plan.parent).name} from beat {plan.at_beat}"))
        elif is_sweep(path):
            kinds.setdefault("whole runs", (path, "a sweep of whole runs"))
    if len(kinds) > 1:
        (first, one), (second, other) = list(kinds.values())[:2]
        raise InvalidConfig(f"{first} holds {one} and {second} {other}: the same seed draws other lines in each, so "
                            "their runs do not pair by seed; compare them apart, or give --unpaired to compare them "
                            "as independent samples")


def folders_of(paths: list[Path]) -> tuple[list[Path], str]:
    """The run folders named (run folders, and the finished runs of each sweep folder) and how to group
    them: by condition when a sweep is among them, else one column per run."""
    expanded = _expand_all(paths)
    return [f for _, folders, _ in expanded for f in folders], "condition" if any(s for _, _, s in expanded) else "run"


def _labelled(groups: list[tuple[Path, list[RunMetrics]]]) -> list[RunMetrics]:
    """The runs of several sweeps; when one condition is in more than one of them, every run's column
    is labelled with its sweep folder's name (or, when two have the same name, the path given)."""
    seen: dict[str, set[Path]] = {}
    for path, runs in groups:
        for run in runs:
            seen.setdefault(run.condition(), set()).add(path)
    if all(len(paths) < 2 for paths in seen.values()):
        return [run for _, runs in groups for run in runs]
    names = [path.name for path, _ in groups]
    out = []
    for path, runs in groups:
        prefix = path.name if names.count(path.name) == 1 else str(path)
        out += [_relabel(run, f"{prefix}:{run.condition()}") for run in runs]
    return out


def benchmark_conditions(folder: Path, runs: list[RunMetrics]) -> list[RunMetrics]:
    """A benchmark sweep's runs, each labelled with its combination's condition (its model and choices)."""
    plan = read_plan(folder)
    if not plan.models:
        return runs
    labels = {c.name: c.condition for c in plan.combinations()}
    return [_relabel(run, labels[run.run]) if run.run in labels else run for run in runs]


def _relabel(run: RunMetrics, label: str) -> RunMetrics:
    return replace(run, condition_label=label)


def measure(paths: list[Path], audit: bool = True) -> tuple[list[RunMetrics], str, Family | None]:
    """The runs named, measured, how to group them, and their family when they are takes of one another
    (then measured from their branch beat on). Several sweep folders are compared together; run
    folders with two conditions of two runs or more each are grouped by condition, else one column each."""
    expanded = _expand_all(paths)
    if any(swept for _, _, swept in expanded):
        groups = [(path, measure_take_sweep(path, audit) if is_take_sweep(path)
                   else benchmark_conditions(path, [metrics_of(f, audit=audit) for f in folders])) for path, folders, _ in expanded]
        return _labelled(groups), "condition", None
    folders = [f for _, fs, _ in expanded for f in fs]
    takes = family(folders)
    if takes is not None:
        return distinct([metrics_after(t, takes.branched_at, audit_verdict(t.folder) if audit else "not run")
                         for t in takes.takes], [t.folder for t in takes.takes]), "run", takes
    runs = distinct([metrics_of(folder, audit=audit) for folder in folders], folders)
    counts = [sum(r.condition() == c for r in runs) for c in dict.fromkeys(r.condition() for r in runs)]
    return runs, "condition" if sum(n > 1 for n in counts) > 1 else "run", None


def load(paths: list[Path], audit: bool = True) -> tuple[list[RunMetrics], str]:
    """The runs named measured, and how to group them."""
    runs, by, _ = measure(paths, audit)
    return runs, by
