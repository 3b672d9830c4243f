"""`promptdesk import sotopia EXPORT.json`: select, build, check and write Sotopia's scenes and characters.

One scene per environment-agent combo (`per="combo"`), or per environment with its first usable combo
(`per="environment"`); `envs` keeps the environments named (codename or pk), `sample` draws that many
scenes with `seed`. Every scene is checked as a scene file is (`scene_from_dict`); one that fails is
refused with its record's key. A combo naming an environment or agent the export lacks (or refused) is
skipped and counted, as is an environment no combo casts.

Writing is idempotent: under `to`, `scenes/<name>.yaml` and `characters/<slug>/profile.md` (the layout a
scene finds its characters in). A file already holding what the import would write is left alone
(unchanged); a file holding something else (edited by hand, or another export's) is kept and counted,
unless `force` replaces it. With no selection every agent is written; with one, the agents its scenes cast.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from promptdesk.core.casting.scene_file import scene_from_dict
from promptdesk.core.characters.importers.model import Imported, ImportProblem
from promptdesk.core.characters.importers.write import profile_text
from promptdesk.core.characters.name_gate import normalised
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.experiments.sotopia import naming
from promptdesk.core.experiments.sotopia.export import AGENT, COMBO, ENVIRONMENT, Export, Refusal, read_export
from promptdesk.core.experiments.sotopia.profiles import character_of
from promptdesk.core.experiments.sotopia.scenes import Casting, header, scene_data
from promptdesk.core.protocol.lines import inert
from promptdesk.core.protocol.sanitize import strip_controls

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
OUTCOMES = ("written", "unchanged", "replaced", "kept")


@dataclass
class Options:
    """How to import (the command's flags)."""

    to: Path = Path("sotopia")
    envs: list[str] = field(default_factory=list)
    per: str = "combo"
    sample: int | None = None
    seed: int = 0
    turns: str = "sequential"
    background_story: bool = False
    """Tell each pair its background story (`--background-story`). Off by default, as Sotopia's runner:
    Sotopia wrote the stories from both agents' whole profiles, secrets included, and many tell one."""
    force: bool = False


@dataclass
class Summary:
    """What an import read, refused, skipped and wrote."""

    export: Export
    skipped: Counter[str] = field(default_factory=Counter)
    """Combos (and environments) not made into scenes, by why."""
    refused: list[Refusal] = field(default_factory=list)
    """Records refused: malformed ones, agents whose name fails the gate, scenes that fail the scene checks."""
    scenes: Counter[str] = field(default_factory=Counter)
    characters: Counter[str] = field(default_factory=Counter)
    kept: list[Path] = field(default_factory=list)
    """Files left as they were because they differ from what the import would write."""
    candidates: int = 0
    matched: int | None = None
    """The scenes of the environments `--env` names, before `--sample` (None: no `--env`)."""
    selected: int = 0
    uncast: list[str] = field(default_factory=list)
    """`--env` names whose environments no usable combo casts (no scene was written for them)."""
    stories: int = 0
    """Scenes whose pair has a background story in the export (told, or not told without
    `--background-story`)."""

    @property
    def clean(self) -> bool:
        """Every record was read and every file is what the import writes."""
        return not self.refused and not self.kept and not self.skipped_problems and not self.uncast

    @property
    def skipped_problems(self) -> int:
        """Skipped combos that point at something missing or refused (not an environment without combo)."""
        return sum(n for why, n in self.skipped.items() if not why.startswith("environments"))


def run_import(path: Path, options: Options) -> Summary:
    """Import an export into `options.to` (see the module docstring). `NotAnExport` (exit 2) when the file
    is not one; `InvalidConfig` (exit 2, nothing written) for an `--env` that names no environment."""
    export = read_export(path)
    summary = Summary(export, refused=list(export.refused))
    characters = _characters(export, summary, path.name)
    slugs = naming.character_slugs({pk: c.name for pk, c in characters.items()})
    castings = _castings(export, summary, options.per, slugs)
    summary.candidates = len(castings)
    chosen = _select(castings, export, options, summary)
    summary.selected = len(chosen)
    stories = _stories(export)
    scenes = []
    for casting in chosen:
        story = stories.get((frozenset(a.pk for a in casting.agents), casting.environment.relationship), "")
        summary.stories += bool(story)
        data = scene_data(casting, turns=options.turns, story=story if options.background_story else "")
        try:
            scene_from_dict(data, source=casting.key)
        except InvalidConfig as exc:
            why = exc.message.splitlines()[0].removeprefix(f"{casting.key}: ")
            summary.refused.append(Refusal(casting.key, COMBO if casting.combo else ENVIRONMENT,
                                           f"the scene it makes fails the scene checks: {why}"))
            continue
        scenes.append((casting, data))
    cast = {pk for casting, _ in scenes for pk in (a.pk for a in casting.agents)}
    wanted = characters if not (options.envs or options.sample) else {pk: c for pk, c in characters.items() if pk in cast}
    for pk, character in wanted.items():
        folder = Path(options.to) / "characters" / slugs[pk]
        summary.characters[_place(folder / "profile.md", profile_text(character), options.force, summary)] += 1
    for casting, data in scenes:
        text = header(casting, path.name) + yaml.dump(data, Dumper=DUMPER, sort_keys=False, allow_unicode=True, width=100)
        summary.scenes[_place(Path(options.to) / "scenes" / f"{casting.name}.yaml", text, options.force, summary)] += 1
    return summary


def _characters(export: Export, summary: Summary, source: str) -> dict[str, Imported]:
    """Every agent that passes the gate, as a character (the others refused with their key)."""
    out = {}
    for pk, agent in export.agents.items():
        key = export.key(AGENT, pk)
        try:
            out[pk] = character_of(agent, key, source)
        except ImportProblem as exc:
            summary.refused.append(Refusal(key, AGENT, str(exc).removeprefix(f"{key}: ")))
            export.refused_pks.add((AGENT, pk))
    return out


def _castings(export: Export, summary: Summary, per: str, slugs: dict[str, str]) -> list[Casting]:
    """Every scene the export can make, named from the whole export; what cannot be made is counted."""
    usable: list[tuple[str, str | None, str, tuple[str, str]]] = []
    cast_envs = set()
    for combo in export.combos:
        why = _unusable(export, combo.env, combo.agents, slugs)
        if why:
            summary.skipped[why] += 1
            continue
        if per == "combo" or combo.env not in cast_envs:
            usable.append((export.key(COMBO, combo.pk), combo.pk, combo.env, combo.agents))
        cast_envs.add(combo.env)
    uncast = sum(1 for pk in export.environments if pk not in cast_envs)
    if uncast and not export.combos:
        summary.skipped["environments: the export has no EnvAgentComboStorage record, which casts an environment's "
                        "two agents (no scene without a cast)"] += uncast
    elif uncast:
        summary.skipped["environments no usable combo casts (no scene without a cast)"] += uncast
    if per == "environment":
        usable = [(export.key(ENVIRONMENT, env), None, env, agents) for _, _, env, agents in usable]
    names = naming.scene_names(
        (key, combo or env, naming.codename_slug(export.environments[env].codename, env),
         "" if per == "environment" else export.agents[a].first_name,
         "" if per == "environment" else export.agents[b].first_name) for key, combo, env, (a, b) in usable)
    return [Casting(key, export.environments[env], (export.agents[a], export.agents[b]), (slugs[a], slugs[b]), combo,
                    names[key]) for key, combo, env, (a, b) in usable]


def _unusable(export: Export, env: str, agents: tuple[str, str], slugs: dict[str, str]) -> str | None:
    """Why a combo cannot be cast, or None."""
    if env not in export.environments:
        refused = (ENVIRONMENT, env) in export.refused_pks
        return f"combos naming a {'refused' if refused else 'missing'} environment"
    for pk in agents:
        if pk not in export.agents or pk not in slugs:
            refused = (AGENT, pk) in export.refused_pks
            return f"combos naming a {'refused' if refused else 'missing'} agent"
    first, second = (export.agents[pk] for pk in agents)
    if normalised(first.name) == normalised(second.name):  # as the cast check compares them: case, forms, punctuation
        return "combos of two agents with one name (no one could tell them apart)"
    return None


def _select(castings: list[Casting], export: Export, options: Options, summary: Summary) -> list[Casting]:
    """The scenes `--env` and `--sample` keep (an `--env` naming no environment is refused; one whose
    environments no usable combo casts is noted in `summary.uncast`)."""
    chosen = castings
    if options.envs:
        named: dict[str, set[str]] = {}  # a codename or pk -> the environments it names (an index: linear in both)
        for pk, env in export.environments.items():
            for name in (pk, env.codename, *([env.tag] if env.tag else [])):  # a tag: every environment it marks
                named.setdefault(name, set()).add(pk)
        for listed in export.lists.values():  # an EnvironmentList (Sotopia's hard subset): the environments it names
            for name in (listed.pk, listed.name):
                named.setdefault(name, set()).update(e for e in listed.environments if e in export.environments)
        for name in options.envs:  # a codename as the export writes it, its reserved word's colon and all (`inert`)
            named.setdefault(name, named.get(inert(strip_controls(name)), set()))
        unknown = [e for e in options.envs if not named[e]]
        if unknown:
            raise InvalidConfig(f"--env {', '.join(unknown)}: no environment of {export.path} has that codename, pk or tag"
                                f"{', and no EnvironmentList of it that name or pk with an environment it holds' if export.lists else ''}; "
                                f"nothing was imported")
        wanted = {pk for e in options.envs for pk in named[e]}
        cast = {c.environment.pk for c in castings}
        summary.uncast = [e for e in dict.fromkeys(options.envs) if not named[e] & cast]
        chosen = [c for c in chosen if c.environment.pk in wanted]
        summary.matched = len(chosen)
    if options.sample is not None and options.sample < len(chosen):
        ordered = sorted(chosen, key=lambda c: c.name)
        chosen = sorted(random.Random(options.seed).sample(ordered, options.sample), key=lambda c: c.name)
    return chosen


def _stories(export: Export) -> dict[tuple[frozenset[str], int], str]:
    """The background story of each pair at each level (the first the export holds)."""
    found: dict[tuple[frozenset[str], int], str] = {}
    for rel in export.relationships:
        if rel.story:
            found.setdefault((frozenset(rel.agents), rel.level), rel.story)
    return found


def _place(path: Path, text: str, force: bool, summary: Summary) -> str:
    """Write `path` unless it already holds `text` (unchanged) or something else (kept, unless `force`)."""
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        current = ""
    if current == text:
        return "unchanged"
    if current is not None and not force:
        summary.kept.append(path)
        return "kept"
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(path, text)
    return "written" if current is None else "replaced"


def _replace(path: Path, text: str) -> None:
    """Write `path` whole or not at all: a temporary file beside it, renamed over it (no sync per file:
    thousands of scene files are written in one import, and a crash leaves each old or new, never half)."""
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
