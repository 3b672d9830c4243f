"""Strategies with phases, defined in YAML files so that a user can add their own without code.

A strategy file (`<slug>.yaml`) holds a `name`, a `title`, a `description`, optional `roles`
(assigned round-robin to the participants, e.g. a debate's sides) and a list of `phases`, each with
a `name`, a `goal`, `min_rounds` (the facilitator cannot advance before them), `speakers` (`all`, or
a list of roles or participant slugs) and an `instruction` given to whoever speaks.

Files are searched, first hit wins, in the scene's `strategies_dirs`, then `./strategies/`, then the
scene file's own (`<its folder>/strategies/`, and `strategies/` beside a `scenes/` folder), then the
strategies shipped with Promptdesk.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from promptdesk.core.characters.loading import beside_scene, distinct, validate_slug
from promptdesk import resources
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.protocol.bounded import Unbounded, load_yaml



class Phase(BaseModel):
    """One phase of a strategy: what it is for and who speaks in it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """The phase's name, as the transcript and the console show it."""
    goal: str
    """What the phase is for; the facilitator steers toward it."""
    min_rounds: PositiveInt = 1
    """Rounds before the facilitator may move to the next phase."""
    speakers: str | list[str] = "all"
    """Who speaks in this phase: `all`, or a list of roles or participant slugs."""
    instruction: str = ""
    """What whoever speaks in this phase is told."""


class Strategy(BaseModel):
    """A named sequence of phases (a free discussion is a single phase)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """The strategy's name, as a scene's `roundtable.strategy` names it (its file is `<name>.yaml`)."""
    title: str = ""
    """The title shown in the console."""
    description: str = ""
    """What the strategy is for, in a sentence or two."""
    roles: dict[str, str] = Field(default_factory=dict)
    """Role name -> what a participant in that role argues; roles go round-robin to the participants."""
    phases: list[Phase] = Field(min_length=1)
    """The phases, in order (a free discussion is a single phase)."""

    def roles_for(self, slugs: Sequence[str]) -> dict[str, str]:
        """Each participant's role, round-robin over the strategy's roles ({} when it has none)."""
        names = list(self.roles)
        return {slug: names[i % len(names)] for i, slug in enumerate(slugs)} if names else {}

    def speakers(self, phase: Phase, slugs: Sequence[str]) -> list[str]:
        """The participants who speak in `phase`, in cast order (everyone when none match)."""
        if phase.speakers == "all":
            return list(slugs)
        wanted = [phase.speakers] if isinstance(phase.speakers, str) else phase.speakers
        roles = self.roles_for(slugs)
        chosen = [s for s in slugs if s in wanted or roles.get(s) in wanted]
        return chosen or list(slugs)


def search_dirs(extra: Sequence[str | Path] = (), cwd: Path | None = None,
                scene_folder: Path | None = None) -> list[Path]:
    """Where strategy files are looked for, in order: the scene's `strategies_dirs`, `./strategies/`,
    those the scene file brings (`beside_scene`), the shipped ones."""
    base = Path.cwd() if cwd is None else Path(cwd)
    ordered = [base / Path(d) for d in extra] + [base / "strategies", *beside_scene(scene_folder, "strategies"),
                                                 resources.strategies_dir()]
    return distinct(ordered)


def available(dirs: Sequence[Path]) -> list[str]:
    """Every strategy name found in `dirs`, sorted."""
    return sorted({p.stem for d in dirs if d.is_dir() for p in d.glob("*.yaml")})


def load_strategy(name: str, dirs: Sequence[Path]) -> Strategy:
    """The strategy `name` from the first folder that has `<name>.yaml`; InvalidConfig otherwise."""
    validate_slug(name, "strategy")
    for folder in dirs:
        path = folder / f"{name}.yaml"
        if path.is_file():
            return read_strategy(path)
    searched = ", ".join(str(d) for d in dirs)
    raise InvalidConfig(f"no strategy '{name}' (searched {searched}); available: {', '.join(available(dirs)) or 'none'}")


def read_strategy(path: Path) -> Strategy:
    """Parse and validate one strategy file; problems name the file and the field."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, Unbounded) as exc:
        raise InvalidConfig(f"{path}: invalid YAML: {exc}", file=str(path)) from None
    if not isinstance(data, dict):
        raise InvalidConfig(f"{path}: a strategy must be a mapping with `name` and `phases`", file=str(path))
    data.setdefault("name", path.stem)
    try:
        return Strategy.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InvalidConfig(f"{path}: {problems}", file=str(path)) from None
