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

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from promptdesk.core.protocol.yaml_lines import YamlLines
from promptdesk.core.characters.loading import beside_scene, distinct, validate_slug
from promptdesk import resources
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.protocol.bounded import Unbounded, load_yaml, read_capped



class Phase(BaseModel):
    """One phase of a strategy: what it is for and who speaks in it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """The phase's name, as the transcript and the console show it."""
    goal: str
    """What the phase is for; the facilitator steers toward it."""
    min_rounds: Annotated[int, Field(gt=0, strict=True)] = 1
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
    participation: Literal["parallel", "sequential"] | None = None
    """How the participants answer when the scene does not say (its `roundtable.participation` wins):
    `sequential` for a strategy that builds on each answer in turn (spec 002), giving up blind answers."""
    _source: str = PrivateAttr(default="")
    _speaker_lines: dict[int, int] = PrivateAttr(default_factory=dict)
    """Phase index -> the line of its `speakers` in the file (for the problems `check_speakers` names)."""

    @property
    def source(self) -> str:
        """The file the strategy was read from ('' when built in code)."""
        return self._source

    def check_speakers(self, slugs: Sequence[str]) -> None:
        """Every name in a phase's `speakers` is one of the strategy's roles or one of `slugs` (the
        table's participants): a name that matches no one is a mistake to name, never a silent
        'everyone speaks'."""
        known = [*self.roles, *slugs]
        for index, phase in enumerate(self.phases):
            wanted = [] if phase.speakers == "all" else [phase.speakers] if isinstance(phase.speakers, str) else phase.speakers
            for name in wanted:
                if name not in known:
                    close = difflib.get_close_matches(str(name), known, n=1)
                    hint = f" (did you mean '{close[0]}'?)" if close else ""
                    roles = ", ".join(self.roles) or "none"
                    line = self._speaker_lines.get(index)
                    where = (self.source or 'strategy ' + self.name) + (f":{line}" if line else "")
                    raise InvalidConfig(
                        f"{where}: phases[{index}] ({phase.name}).speakers: '{name}' is "
                        f"neither a role of the strategy (roles: {roles}) nor a participant at this table "
                        f"({', '.join(slugs)}){hint}: write `all`, a role or a participant's slug",
                        file=self.source or None, line=line)
            if not self.speakers_of(phase, slugs):
                line = self._speaker_lines.get(index)
                where = (self.source or 'strategy ' + self.name) + (f":{line}" if line else "")
                seats = ", ".join(f"{slug} {role}" for slug, role in self.roles_for(slugs).items())
                raise InvalidConfig(
                    f"{where}: phases[{index}] ({phase.name}).speakers: {wanted or '[]'} seats no one at this table "
                    f"(roles go round-robin: {seats or 'no roles'}): write `all`, or name a role someone holds or a "
                    f"participant's slug", file=self.source or None, line=line)

    def roles_for(self, slugs: Sequence[str]) -> dict[str, str]:
        """Each participant's role, round-robin over the strategy's roles ({} when it has none)."""
        names = list(self.roles)
        return {slug: names[i % len(names)] for i, slug in enumerate(slugs)} if names else {}

    def speakers_of(self, phase: Phase, slugs: Sequence[str]) -> list[str]:
        """The participants `phase` names, in cast order (none when its roles are held by no one)."""
        if phase.speakers == "all":
            return list(slugs)
        wanted = [phase.speakers] if isinstance(phase.speakers, str) else phase.speakers
        roles = self.roles_for(slugs)
        return [s for s in slugs if s in wanted or roles.get(s) in wanted]

    def speakers(self, phase: Phase, slugs: Sequence[str]) -> list[str]:
        """The participants who speak in `phase`, in cast order (everyone when none match: a table
        `check_speakers` refused is never played, so this is a safety net only)."""
        return self.speakers_of(phase, slugs) or list(slugs)


def search_dirs(extra: Sequence[str | Path] = (), cwd: Path | None = None,
                scene_folder: Path | None = None) -> list[Path]:
    """Where strategy files are looked for, in order: the scene's `strategies_dirs`, `./strategies/`,
    those the scene file brings (`beside_scene`), the shipped ones."""
    base = Path.cwd() if cwd is None else Path(cwd)
    ordered = [base / Path(d) for d in extra] + [base / "strategies", *beside_scene(scene_folder, "strategies"),
                                                 resources.strategies_dir()]
    return distinct(ordered)


STRATEGY_MAX_BYTES = 1_048_576
"""The largest strategy file read (a scene file's bound): a longer one is refused, naming it."""


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
    names = available(dirs)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise InvalidConfig(f"no strategy '{name}'{hint} (searched {searched}); available: {', '.join(names) or 'none'}")


def read_strategy(path: Path) -> Strategy:
    """Parse and validate one strategy file; problems name the file and the field."""
    try:
        with open(path, "rb") as handle:
            raw = read_capped(handle, STRATEGY_MAX_BYTES)
        if raw is None:
            raise InvalidConfig(f"{path}: a strategy file is at most {STRATEGY_MAX_BYTES:,} bytes; this one is more",
                                file=str(path))
        text = raw.decode("utf-8-sig")
        data = load_yaml(text, unique_keys=True)
    except UnicodeDecodeError as exc:
        raise InvalidConfig(f"{path}: not valid UTF-8 (byte {exc.start})", file=str(path)) from None
    except OSError as exc:
        raise InvalidConfig(f"{path}: cannot read it ({exc.strerror or exc})", file=str(path)) from None
    except (yaml.YAMLError, Unbounded) as exc:
        line = getattr(exc, "line", None)
        where = f"{path}:{line}" if line else str(path)
        raise InvalidConfig(f"{where}: invalid YAML: {exc}", file=str(path), line=line) from None
    if not isinstance(data, dict):
        raise InvalidConfig(f"{path}: a strategy must be a mapping with `name` and `phases`", file=str(path))
    data.setdefault("name", path.stem)
    if data["name"] != path.stem:
        raise InvalidConfig(f"{path}: name: '{data['name']}' is not the file's name ('{path.stem}'): a scene names a "
                            f"strategy by its file, so the record would call it otherwise; remove `name:` or set it to "
                            f"'{path.stem}'", file=str(path))
    lines = YamlLines(yaml.compose(text, Loader=yaml.SafeLoader))
    try:
        strategy = Strategy.model_validate(data)
    except ValidationError as exc:
        seen: dict[str, tuple[int, str]] = {}
        for error in exc.errors():
            loc = tuple(part for part in error["loc"] if part not in ("str", "list[str]"))
            if len(loc) < len(error["loc"]) and loc[-1:] == ("speakers",):  # `all` or a list, both refused
                error = {**error, "type": "speakers", "msg": "write `all` or a list of roles or participants' slugs"}
            seen.setdefault(_field(loc, data), (lines.of(loc) or 0, _message(error)))
        rows = sorted(((line, name, what) for name, (line, what) in seen.items()), key=lambda row: row[0])
        problems = "\n".join(f"{path}{f':{line}' if line else ''}: {name}: {what}" for line, name, what in rows)
        raise InvalidConfig(problems, file=str(path), line=rows[0][0] or None) from None
    names = [phase.name.strip().casefold() for phase in strategy.phases]
    twice = next((i for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        line = lines.of(("phases", twice, "name"))
        raise InvalidConfig(f"{path}{f':{line}' if line else ''}: phases[{twice}].name: '{strategy.phases[twice].name}' "
                            f"names phase {names.index(names[twice]) + 1} too: the record, the console and `current_phase` "
                            f"tell phases by name; give each its own", file=str(path), line=line)
    strategy._source = str(path)
    strategy._speaker_lines = {i: line for i in range(len(strategy.phases))
                               if (line := lines.of(("phases", i, "speakers")))}
    return strategy


def _field(loc: tuple[Any, ...], data: Any) -> str:
    """`phases[1] (realist).min_rounds` for pydantic's `phases.1.min_rounds`: the phase named as the
    speakers' problems name it."""
    if len(loc) >= 2 and loc[0] == "phases" and isinstance(loc[1], int):
        phases = data.get("phases") if isinstance(data, dict) else None
        phase = phases[loc[1]] if isinstance(phases, list) and loc[1] < len(phases) else None
        name = f" ({phase['name']})" if isinstance(phase, dict) and isinstance(phase.get("name"), str) else ""
        return f"phases[{loc[1]}]{name}" + "".join(f".{part}" for part in loc[2:])
    return ".".join(map(str, loc))


def _message(error: Any) -> str:
    """Pydantic's message; for an unknown key, the nearest known one (or every key allowed there)."""
    loc = error["loc"]
    if error["type"] != "extra_forbidden" or not loc:
        got = error.get("input")
        shown = f" (got {got!r})" if error["type"] != "missing" and isinstance(got, (str, int, float, bool)) else ""
        told = "; YAML reads it as true/false" if isinstance(got, bool) and error["type"] != "missing" else ""
        return error["msg"] + shown + told
    model = Phase if len(loc) > 2 and loc[0] == "phases" else Strategy
    known = [k for k in model.model_fields]
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    return f"unknown key '{loc[-1]}'" + (f" (did you mean '{close[0]}'?)" if close else f" (allowed: {', '.join(known)})")
