"""What every HTML report opens with, so that its numbers can be cited: what was run, and how to cite it.

"What was run" is read from the record alone: the scene (title, name, file, format; a benchmark's every
scene), the two choices
in words, the provider and model of every role (the offline improviser named as what it is: not a
model), the evaluator that scored the runs on each rubric, the seeds, the dates the runs were recorded, how time was kept (simulated on the improviser's
virtual clock, or real), the Promptdesk version that wrote the report, the command that ran the
experiment (rebuilt from the record) and the command that made the report. Nothing in it is a
path of the machine but what the person typed.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from promptdesk.core.protocol.sanitize import html_text
from promptdesk.core.casting.notes import ISOLATION_LINES, ROLE_LINES
from promptdesk.core.formats.registry import FORMATS
from promptdesk.core.improv import DISCLAIMER
from promptdesk.core.record import outputs
from promptdesk.core.record.evaluation_file import evaluations
from promptdesk.core.record.events import BaseEvent
from promptdesk.core.record.takes import branch_event, played_arrivals, played_providers, played_seed

OFFLINE_GOAL = ("The offline judge decides a goal by matching words, not by understanding: it reads the goal as "
                "clauses of who must do what (apologise, accept, agree, admit, ...) and counts a clause only when the "
                "person it names said one of that act's marker words, not in a question or after a negation; a goal "
                "that names no one and no act counts when at least 60% of its key words were spoken.")
"""How the offline improviser's judge gives its goal verdict (`promptdesk.core.improv.judge`)."""

STYLE = """.facts{border:1px solid #cbd5e1;background:#f8fafc;padding:.6rem 1rem;margin:1rem 0}
.facts dl{display:grid;grid-template-columns:11rem 1fr;gap:.25rem .5rem}
.facts dt{font-weight:600;overflow-wrap:anywhere}.facts dd{margin:0;min-width:0}
.facts .who{white-space:nowrap}
.cite{border-left:4px solid #2563eb;background:#eff6ff;padding:.6rem 1rem;margin:1rem 0}
.cite code,.facts code{font-size:.9em;word-break:break-all}"""


SCENES_SHOWN = 20
"""A benchmark's scenes named in "What was run" (the rest counted)."""


def esc(text: object) -> str:
    return html_text(text)


@dataclass
class Facts:
    """What one or more runs of one experiment were."""

    title: str = ""
    scene: str = ""
    file: str | None = None
    format: str = "scene"
    isolations: list[str] = field(default_factory=list)
    coordinators: list[str] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    providers: dict[str, set[str]] = field(default_factory=dict)
    """Role (an actor's name, or `judge`) to the `provider:model` it ran on."""
    dates: list[str] = field(default_factory=list)
    clocks: set[str] = field(default_factory=set)
    titles: list[str] = field(default_factory=list)
    """Every scene's title, in the order first met (a benchmark sweep plays several)."""
    example_label: str = ""
    """One condition's label as the tables write it (a benchmark's starts with its model), or ""."""
    evaluators: dict[str, set[str]] = field(default_factory=dict)
    """A rubric's title (`SOTOPIA-EVAL`) to the `provider:model` of each evaluator that scored a run on it."""


def _date(folder: Path) -> str | None:
    try:
        stamp = (folder / "events.jsonl").stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(stamp, timezone.utc).strftime("%Y-%m-%d")


def _judge(folder: Path) -> str | None:
    """The judge's provider and model, from the run's start record (its name and model only)."""
    try:
        from promptdesk.core.record.private import read_private
        judge = read_private(folder).get("judge")
    except Exception:  # an old or damaged record: the judge is simply not named
        return None
    if not isinstance(judge, dict):
        return None
    return f"{judge.get('name')}:{judge.get('model') or ('improviser' if judge.get('name') == 'offline' else 'default')}"


def gather(runs: list[tuple[Path, list[BaseEvent]]], file: str | None = None) -> Facts:
    """The facts of the runs of one experiment (a run, a sweep, takes)."""
    facts = Facts(file=file)
    for folder, events in runs:
        info = outputs.start_info(events)
        scene = info.get("scene", {})
        title = scene.get("title") or scene.get("name") or folder.name
        facts.title = facts.title or title
        if title not in facts.titles:
            facts.titles.append(title)
        facts.scene = facts.scene or scene.get("name") or ""
        facts.file = facts.file or scene.get("file")
        facts.format = scene.get("format") or facts.format
        played = {**info, "seed": played_seed(events, info.get("seed"))}   # a take's own seed, not its parent's
        for key, values in (("isolation", facts.isolations), ("coordinator", facts.coordinators), ("seed", facts.seeds)):
            if played.get(key) is not None and played[key] not in values:
                values.append(played[key])
        names = outputs.cast_names(events)
        for slug, spec in played_providers(events, info.get("providers") or {}).items():   # a take's own, if another
            facts.providers.setdefault(names.get(slug, slug), set()).add(str(spec))
        if info.get("coordinator") in ("A", "B") and (judge := _judge(folder)):
            facts.providers.setdefault("judge (coordinator)", set()).add(judge)
        for scored in evaluations(events):
            facts.evaluators.setdefault(str(scored.get("title") or scored.get("rubric")), set()).add(str(scored.get("evaluator")))
        facts.clocks.add(str(played_arrivals(events, info.get("arrivals")) or "real"))
        if (date := _date(folder)) and date not in facts.dates:
            facts.dates.append(date)
    return facts


def offline(facts: Facts) -> bool:
    return any(spec.startswith("offline:") for specs in facts.providers.values() for spec in specs)


def _spec(spec: str) -> str:
    provider, _, model = spec.partition(":")
    if provider == "offline":
        return "offline improviser (not a model)"
    return f"{provider}, model {model}"


def seeds_text(seeds: list[int]) -> str:
    from promptdesk.core.experiments.stats.design import unit_text
    return unit_text(seeds) if seeds else "not recorded"


def facts_html(facts: Facts, *, ran: str | list[str] | None, made: str | None, extra: list[tuple[str, str]] = ()) -> str:
    """The "What was run" box (already-escaped HTML)."""
    from promptdesk import version
    where = f"<code>{esc(facts.file or facts.scene + ' (its file is not recorded)')}</code>"
    if len(facts.titles) > 1:
        shown = "; ".join(facts.titles[:SCENES_SHOWN]) + (f"; and {len(facts.titles) - SCENES_SHOWN:,} more"
                                                           if len(facts.titles) > SCENES_SHOWN else "")
        rows = [("Scenes", f"{len(facts.titles):,} scenes ({where}): {esc(shown)}; format {esc(facts.format)}")]
    else:
        rows = [("Scene", f"{esc(facts.title)} ({where}), format {esc(facts.format)}")]
    rows += [("Isolation " + esc(i), esc(ISOLATION_LINES.get(i, "?").split(" — ", 1)[-1])) for i in sorted(facts.isolations)]
    rows += [("Coordinator " + esc(c), esc(ROLE_LINES.get(c, "?").split(" — ", 1)[-1])) for c in sorted(facts.coordinators)]
    model, _, choices = facts.example_label.rpartition(" ")   # a benchmark's label: its model, then the choices
    if model and "-" in choices:
        i, c = choices.split("-", 1)
        rows.append(("Condition labels", f"model, then isolation-coordinator: <code>{esc(facts.example_label)}</code> is "
                                         f"isolation {esc(i)} with coordinator {esc(c)}, every actor on {esc(model)}"))
    elif len(facts.isolations) * len(facts.coordinators) > 1:
        # an example the report's tables show (a sweep with coordinator C only has no a-B)
        i, c = choices.split("-", 1) if "-" in choices else (min(facts.isolations), min(facts.coordinators))
        rows.append(("Condition labels", f"isolation-coordinator: <code>{esc(i)}-{esc(c)}</code> is isolation {esc(i)} "
                                         f"with coordinator {esc(c)}"))
    rows += provider_rows(facts.providers)
    if not any(role.startswith("judge") for role in facts.providers):
        rows.append(("Judge", "none: coordinator C decides by rules in code" if "C" in facts.coordinators else "not recorded"))
    for rubric, specs in facts.evaluators.items():
        rows.append((f"Evaluator ({esc(rubric)})", esc("; ".join(_spec(s) for s in sorted(specs)))))
    rows.append(("Seeds", esc(seeds_text(facts.seeds))))
    rows.append(("Recorded", esc(", ".join(sorted(facts.dates)) or "unknown") + " (UTC)"))
    clock = ("simulated time: the improviser's virtual clock (durations are simulated, not wall time)"
             if facts.clocks == {"simulated"} else "real time" if facts.clocks == {"real"} else "mixed")
    rows.append(("Time", esc(clock)))
    rows += list(extra)
    rows.append(("Promptdesk", esc(version())))
    if ran:   # one command, or several (takes: the parent's run, then each take's branch), one a line
        rows.append(("Run with", "<br>".join(f"<code>{esc(c)}</code>" for c in ([ran] if isinstance(ran, str) else ran))))
    if made:
        rows.append(("This report", f"<code>{esc(made)}</code>"))
    notes = [DISCLAIMER, OFFLINE_GOAL] if offline(facts) else []
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    return (f'<section class="facts"><h2>What was run</h2><dl>{body}</dl>'
            + "".join(f"<p>{esc(n)}</p>" for n in notes) + "</section>")


CAST_ROWS = 10
"""Past this many actors "What was run" gives one row per provider line, naming its actors, rather than one
row per actor (27 rows of the same words read as a list to skim, not a fact)."""


def provider_rows(providers: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The rows naming who played on what: one per actor (and judge), or for a crowd one per provider
    line with its actors' names, each kept on one line (`Sir Robert Hale` never breaks into `Sir Robert`
    and `Hale`; judges keep their own rows)."""
    lines = {role: "; ".join(_spec(s) for s in sorted(specs)) for role, specs in providers.items()}
    actors = [role for role in lines if not role.startswith("judge")]
    if len(actors) <= CAST_ROWS:
        return [(esc(role), esc(line)) for role, line in lines.items()]
    grouped: dict[str, list[str]] = {}
    for role in actors:
        grouped.setdefault(lines[role], []).append(role)
    rows = [(f"Cast ({len(actors)})" if len(grouped) == 1 else f"{len(names)} of the cast of {len(actors)}",
             f"{esc(line)}: " + ", ".join(f'<span class="who">{esc(name)}</span>' for name in names))
            for line, names in grouped.items()]
    return rows + [(esc(role), esc(line)) for role, line in lines.items() if role not in actors]


def cite_html(text: str) -> str:
    """The "How to cite these numbers" box."""
    return f'<aside class="cite"><h2>How to cite these numbers</h2><p>{esc(text)}</p></aside>'


def sweep_command(plan: Any) -> str:
    """The `promptdesk sweep` command that runs a plan (`promptdesk.core.experiments.sweep.SweepPlan`)."""
    words = ["promptdesk", "sweep", str(plan.scene), "--isolation", ",".join(plan.isolations),
             "--coordinator", ",".join(plan.coordinators), "--seeds", seeds_text(list(plan.seeds)).replace(", ", ",").replace(" ", "")]
    words[2:3] = [as_given(plan.scene)] if not getattr(plan, "scenes", None) else [str(p) for p in _given(plan)]
    benchmark = (("--models", ",".join(getattr(plan, "models", []))), ("--evaluator", ",".join(getattr(plan, "evaluators", []))))
    for flag, value in (("--provider", plan.provider), ("--model", plan.model), ("--base-url", getattr(plan, "base_url", None)),
                        ("--protocol", getattr(plan, "protocol", None)), ("--max-beats", plan.max_beats), *benchmark):
        if value is not None and value != "":
            words += [flag, str(value)]
    for folder in getattr(plan, "characters_dirs", None) or []:
        words += ["--characters-dir", str(folder)]
    if isinstance(getattr(plan, "budget_usd", None), (int, float)):   # a ceiling stops runs: it is part of what ran
        words += ["--budget-usd", f"{plan.budget_usd:g}"]
    for key, value in (getattr(plan, "provider_settings", None) or {}).items():
        if key in SETTING_FLAGS and value is not None and value is not False:
            words += [SETTING_FLAGS[key]] + ([] if value is True else [str(value)])
    return shlex.join(words)


SETTING_FLAGS = {"schema_format": "--schema-format", "max_concurrency": "--max-concurrency", "timeout_s": "--timeout",
                 "journal_timeout_s": "--journal-timeout", "send_ahead": "--send-ahead"}
"""The provider settings a sweep's plan records, by the flag that gave each (`core.cli.provider_flags.FLAGS`)."""


def take_sweep_command(plan: Any) -> str:
    """The `promptdesk sweep --branch-from` command of a sweep of takes (`take_sweep.TakeSweepPlan`): the
    parent by its folder's name (its recorded path is this machine's), the change and the seeds as flags."""
    words = ["promptdesk", "sweep", "--branch-from", Path(plan.parent).name, "--at-beat", str(plan.at_beat)]
    if plan.event is not None:
        words += ["--event", plan.event]
    if plan.note is not None:
        words += ["--note", plan.note] + (["--to", plan.to] if plan.to else [])
    words += ["--seeds", seeds_text(list(plan.seeds)).replace(", ", ",")]
    for flag, value in (("--provider", plan.provider), ("--model", plan.model), ("--base-url", plan.base_url)):
        if value:   # another provider or model for every take: another plan, so part of what ran
            words += [flag, str(value)]
    for key, value in (plan.provider_settings or {}).items():
        if key in SETTING_FLAGS and value is not None and value is not False:
            words += [SETTING_FLAGS[key]] + ([] if value is True else [str(value)])
    if isinstance(plan.budget_usd, (int, float)):
        words += ["--budget-usd", f"{plan.budget_usd:g}"]
    return shlex.join(words)


def as_given(scene: Any) -> str:
    """A scene file as a command names it: a shipped example by its name (where it is installed is
    this machine's), any other file as recorded."""
    from promptdesk import resources
    try:
        shipped = resources.example_scenes()
    except Exception:  # noqa: BLE001 - a damaged install: the file as recorded
        return str(scene)
    path = Path(str(scene))
    for name, file in shipped.items():
        if path == file or (path.is_absolute() and path.resolve() == file.resolve()):
            return name
    return str(scene)


def scenes_given(plan: Any) -> str:
    """Where a sweep's scenes are, as its command gave them: the file, a benchmark's folder, or its files (the
    first `SCENES_SHOWN`, the rest counted), so "What was run" never names one file as every scene's."""
    if not getattr(plan, "scenes", None):
        return as_given(plan.scene)
    given = _given(plan)
    more = f", and {len(given) - SCENES_SHOWN:,} more" if len(given) > SCENES_SHOWN else ""
    return ", ".join(given[:SCENES_SHOWN]) + more


def _given(plan: Any) -> list[str]:
    """A benchmark sweep's scenes as given: its folder when every file is in it, else the files."""
    folder = str(plan.scene)
    return [folder] if all(str(p).startswith(folder.rstrip("/") + "/") for p in plan.scenes) else list(plan.scenes)


def branch_command(events: list[BaseEvent]) -> str | None:
    """The `promptdesk branch` command that made a take (the parent by its folder's name: its recorded
    path is this machine's), None for a run that is not a take."""
    event = branch_event(events)
    if event is None:
        return None
    extra = event.model_extra or {}
    change = extra.get("change") or {}
    words = ["promptdesk", "branch", Path(str(extra.get("parent") or "PARENT")).name, "--at-beat", str(event.beat)]
    for key in ("event", "note", "to", "seed", "provider", "model"):
        if change.get(key) is not None:
            words += [f"--{key}", str(change[key])]
    for key, value in (change.get("settings") or {}).items():   # the provider settings it was taken with
        if key in SETTING_FLAGS and value is not None and value is not False:
            words += [SETTING_FLAGS[key]] + ([] if value is True else [str(value)])
    return shlex.join(words)


def _private(folder: Path | None) -> dict[str, Any]:
    """A run's start record (`private.json`), {} when there is none to read."""
    if folder is None:
        return {}
    try:
        from promptdesk.core.record.private import read_private
        return read_private(folder)
    except Exception:  # an old or damaged record: the flags it would give are left out
        return {}


def run_command(events: list[BaseEvent], folder: Path | None = None) -> str:
    """The command that made a run: `promptdesk --batch` (its scene file by name when recorded), or
    for a take, the `promptdesk branch` that made it. With the run's `folder`, its start record adds
    what the log does not hold: a run without journals (`--journals none`) and its budget."""
    if (branched := branch_command(events)) is not None:
        return branched
    info = outputs.start_info(events)
    scene = info.get("scene", {})
    specs = {str(p) for p in (info.get("providers") or {}).values()}
    words = ["promptdesk", "--batch", scene.get("file") or f"{scene.get('name', 'SCENE')}.yaml",
             "--isolation", str(info.get("isolation")), "--coordinator", str(info.get("coordinator"))]
    if len(specs) == 1:   # one provider and model for the whole cast (a mixed cast is its scene file's)
        provider, _, model = specs.pop().partition(":")
        words += ["--provider", provider] + (["--model", model] if model and provider != "offline" else [])
    if info.get("seed") is not None:
        words += ["--seed", str(info["seed"])]
    fmt = FORMATS.get(str(scene.get("format")))
    if isinstance(info.get("max_beats"), int) and not getattr(fmt, "round_cap", ""):  # a format in rounds has its own cap
        words += ["--max-beats", str(info["max_beats"])]
    if info.get("coordinator") in ("A", "B") and info.get("suggested_events") in ("inject", "ask"):  # off: headless default
        words += ["--suggested-events", str(info["suggested_events"])]
    if isinstance(info.get("pace_s"), (int, float)) and info["pace_s"] > 0:
        words += ["--pace", f"{info['pace_s']:g}"]
    record = _private(folder)
    if record.get("journal_step") is False and getattr(fmt, "keeps_journals", False):
        words += ["--journals", "none"]
    if isinstance(record.get("budget_usd"), (int, float)):
        words += ["--budget-usd", f"{record['budget_usd']:g}"]
    return shlex.join(words)
