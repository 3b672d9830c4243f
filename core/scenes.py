"""Scene files (DESIGN §4): YAML validated by pydantic, every error naming file, field and line.

`load_scene(path)` is the entry point. Models forbid unknown keys so that a typo is an error, not a
silently ignored setting. Cross-references (speaker, perspectives, cast overrides) are checked
against `characters`; the line of each problem is found by walking the composed YAML node tree.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt,
                      PositiveFloat, PositiveInt, StringConstraints, ValidationError, ValidationInfo,
                      field_validator, model_validator)
from pydantic_core import PydanticCustomError

from core.characters import validate_slug
from core.errors import InvalidConfig

MAX_CAST = 8
ProviderName = Literal["offline", "anthropic", "openai", "openai-compatible"]


def _slug(value: str) -> str:
    """A pydantic-friendly wrapper around `validate_slug`."""
    try:
        return validate_slug(value, "character")
    except InvalidConfig as exc:
        raise PydanticCustomError("slug", exc.message) from None


def _latency(value: tuple[int, int]) -> tuple[int, int]:
    """A latency range [lo, hi] in milliseconds must have lo <= hi."""
    if value[0] > value[1]:
        raise PydanticCustomError("latency", "latency_ms must be [lo, hi] with lo <= hi, got {value}",
                                  {"value": list(value)})
    return value


Slug = Annotated[str, AfterValidator(_slug)]
Latency = Annotated[tuple[NonNegativeInt, NonNegativeInt], AfterValidator(_latency)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Model(BaseModel):
    """Base of every scene model: unknown keys are errors; numbers given for text are taken as text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class Limits(_Model):
    """Safety limits: beats in the scene, spoken turns per character, silent beats before a stall."""

    max_beats: PositiveInt = 50
    soft_cap_per_character: PositiveInt = 40
    hard_cap_per_character: PositiveInt = 60
    stall_beats: PositiveInt = 3

    @model_validator(mode="after")
    def _soft_not_above_hard(self) -> Limits:
        """The hard cap is a safety net behind the soft cap, never in front of it."""
        if self.soft_cap_per_character > self.hard_cap_per_character:
            raise PydanticCustomError("caps", "soft_cap_per_character ({soft}) must not exceed "
                                      "hard_cap_per_character ({hard})",
                                      {"soft": self.soft_cap_per_character, "hard": self.hard_cap_per_character,
                                       "key": "soft_cap_per_character"})
        return self


class ScheduledEvent(_Model):
    """A world event delivered to every actor at (or after) beat `at_beat`."""

    at_beat: NonNegativeInt
    text: Text


class ProviderSpec(_Model):
    """Which model answers, and how patiently: timeouts, retries, and the offline latency range."""

    name: ProviderName = "offline"
    model: str | None = None
    base_url: str | None = None
    latency_ms: Latency | None = None
    timeout_s: PositiveFloat = 60.0
    max_retries: NonNegativeInt = 3
    retry_after_cap_s: NonNegativeFloat = 30.0


class CastOverride(_Model):
    """A per-character provider override; unset fields come from the scene's `provider`."""

    name: ProviderName | None = Field(None, validation_alias=AliasChoices("name", "provider"))
    model: str | None = None
    base_url: str | None = None
    latency_ms: Latency | None = None
    timeout_s: PositiveFloat | None = None
    max_retries: NonNegativeInt | None = None
    retry_after_cap_s: NonNegativeFloat | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        """`provider` is an alias of `name`: giving both is ambiguous."""
        if isinstance(data, dict) and "name" in data and "provider" in data:
            raise PydanticCustomError("alias", "give `provider` or `name`, not both")
        return data


class Collaborate(_Model):
    """Settings of the `collaborate` format (spec 001): the round cap, who speaks first, the session id
    and the transcript window passed to each call. `first` overrides `initial_speaker`."""

    max_rounds: PositiveInt = 6
    first: Slug | None = None
    session_id: str | None = None
    window_items: PositiveInt = 8
    window_tokens: PositiveInt = 2500


class Roundtable(_Model):
    """Settings of the `roundtable` format (spec 002): the topic, the strategy and its phases, blind or
    sequential participation, the limits, the escalation triggers and the facilitator's provider."""

    topic: str = ""
    strategy: Slug = "free"
    strategies_dirs: list[str] = Field(default_factory=list)
    participation: Literal["parallel", "sequential"] = "parallel"
    max_rounds: PositiveInt = 20
    max_rounds_per_conflict: PositiveInt = 3
    confidence_threshold: float = Field(0.3, ge=0.0, le=1.0)
    critical_keywords: list[str] = Field(default_factory=lambda: ["security", "legal", "blocking", "must-have"])
    facilitator: ProviderSpec | None = None
    context: str = ""


def _not_in_cast(slugs: list[str], info: ValidationInfo) -> Iterator[str]:
    """The slugs that are not in the (already validated) `characters` list."""
    cast = info.data.get("characters")
    if cast is not None:
        yield from (s for s in slugs if s not in cast)


class Scene(_Model):
    """A validated scene file. `title` and `initial_speaker` are always filled in after validation."""

    name: str
    title: str | None = None
    format: Literal["scene", "collaborate", "roundtable"] = "scene"
    turns: Literal["parallel", "sequential"] = "parallel"
    setting: str = ""
    prompt: str = ""
    goal: str = ""
    characters: list[Slug] = Field(min_length=1, max_length=MAX_CAST)
    perspectives: dict[str, str] = Field(default_factory=dict)
    initial_speaker: str | None = None
    coordinator_notes: str = ""
    events: list[ScheduledEvent] = Field(default_factory=list)
    limits: Limits = Field(default_factory=Limits)
    isolation: Literal["a", "b"] | None = None
    coordinator: Literal["A", "B", "C"] | None = None
    provider: ProviderSpec = Field(default_factory=ProviderSpec)
    cast: dict[str, CastOverride] = Field(default_factory=dict)
    judge: ProviderSpec | None = None
    seed: int | None = None
    pace: float | None = Field(None, ge=0.0, le=60.0)
    """Minimum seconds per beat (`--pace` wins); unset: 0, or 1.5 s in the console on the offline improviser."""
    collaborate: Collaborate | None = None
    roundtable: Roundtable | None = None

    @field_validator("setting", "prompt", "goal", "coordinator_notes", mode="before")
    @classmethod
    def _empty_is_blank(cls, value: Any) -> Any:
        """A key given with no value (`goal:`) means no text."""
        return "" if value is None else value

    @field_validator("name")
    @classmethod
    def _name_is_slug(cls, value: str) -> str:
        """The scene name names the run folder, so it is a slug too."""
        try:
            return validate_slug(value, "scene name")
        except InvalidConfig as exc:
            raise PydanticCustomError("slug", exc.message) from None

    @field_validator("characters")
    @classmethod
    def _cast_is_sound(cls, slugs: list[str], info: ValidationInfo) -> list[str]:
        """No one twice; a `scene` needs at least two people to be a dialogue."""
        for index, slug in enumerate(slugs):
            if slug in slugs[:index]:
                raise PydanticCustomError("duplicate", "'{slug}' is listed twice", {"slug": slug, "key": index})
        if info.data.get("format") == "scene" and len(slugs) < 2:
            raise PydanticCustomError("too_short", "a scene needs at least 2 characters, got {n}", {"n": len(slugs)})
        return slugs

    @field_validator("initial_speaker")
    @classmethod
    def _speaker_in_cast(cls, slug: str | None, info: ValidationInfo) -> str | None:
        """The first speaker must be one of the characters."""
        if slug is not None and any(_not_in_cast([slug], info)):
            raise PydanticCustomError("not_in_cast", "'{slug}' is not in characters ({cast})",
                                      {"slug": slug, "cast": ", ".join(info.data["characters"])})
        return slug

    @field_validator("perspectives", "cast")
    @classmethod
    def _keys_in_cast(cls, mapping: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Private perspectives and provider overrides may only name characters of this scene."""
        unknown = next(_not_in_cast(list(mapping), info), None)
        if unknown is not None:
            raise PydanticCustomError("not_in_cast", "'{slug}' is not in characters ({cast})",
                                      {"slug": unknown, "cast": ", ".join(info.data["characters"]), "key": unknown})
        return mapping

    @model_validator(mode="after")
    def _fill_defaults(self) -> Scene:
        """Title from the name; first speaker is the first character."""
        if self.title is None or not self.title.strip():
            self.title = self.name.replace("-", " ").title()
        if self.initial_speaker is None:
            self.initial_speaker = self.characters[0]
        return self

    @model_validator(mode="after")
    def _collaboration_is_sound(self) -> Scene:
        """`collaborate:` settings belong to `format: collaborate`; its first speaker is a participant.
        (The goal is checked when a collaboration is built to run: see `core.collab.personas`.)"""
        if self.format != "collaborate":
            if self.collaborate is not None:
                raise PydanticCustomError("format", "`collaborate:` settings need `format: collaborate`",
                                          {"key": "collaborate"})
            return self
        first = self.collaborate.first if self.collaborate else None
        if first is not None:
            if first not in self.characters:
                raise PydanticCustomError("not_in_cast", "collaborate.first '{slug}' is not in characters ({cast})",
                                          {"slug": first, "cast": ", ".join(self.characters), "key": "collaborate"})
            self.initial_speaker = first
        return self

    @model_validator(mode="after")
    def _roundtable_is_sound(self) -> Scene:
        """`roundtable:` settings belong to `format: roundtable`, which needs a topic (or a prompt or goal)."""
        if self.format != "roundtable":
            if self.roundtable is not None:
                raise PydanticCustomError("format", "`roundtable:` settings need `format: roundtable`",
                                          {"key": "roundtable"})
            return self
        if not (self.table.topic or self.prompt or self.goal).strip():
            raise PydanticCustomError("missing", "a roundtable needs `roundtable.topic` (or a `prompt` or `goal`)",
                                      {"key": "roundtable"})
        return self

    @property
    def table(self) -> Roundtable:
        """The roundtable settings, defaults filled in."""
        return self.roundtable or Roundtable()

    @property
    def collab(self) -> Collaborate:
        """The collaboration settings, defaults filled in."""
        return self.collaborate or Collaborate()

    def provider_for(self, slug: str) -> ProviderSpec:
        """The provider for one character: its `cast` override merged over the scene's `provider`.

        When the override switches to another provider, the scene's `model` and `base_url` are not
        carried over (they belong to the other provider) unless the override gives its own.
        """
        override = self.cast.get(slug)
        if override is None:
            return self.provider
        update = override.model_dump(exclude_none=True)
        if update.get("name", self.provider.name) != self.provider.name:
            update = {"model": None, "base_url": None, **update}
        return ProviderSpec.model_validate({**self.provider.model_dump(), **update})

    def perspective_for(self, slug: str) -> str:
        """This character's private perspective, or "" (never anyone else's)."""
        return self.perspectives.get(slug, "")


_NESTED: dict[str, type[BaseModel]] = {"limits": Limits, "provider": ProviderSpec, "judge": ProviderSpec,
                                       "events": ScheduledEvent, "cast": CastOverride, "collaborate": Collaborate,
                                       "roundtable": Roundtable}
_WITHOUT_GOT = {"slug", "latency", "caps", "alias", "not_in_cast", "duplicate", "too_short",
                "missing", "extra_forbidden", "format"}


def _dotted(loc: tuple[Any, ...]) -> str:
    """`("events", 1, "text")` -> `events[1].text`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the node at `loc`, or of the nearest existing parent (a key's own line for mappings).

    None when there is no YAML behind the data (`scene_from_dict`).
    """
    if root is None:
        return None
    node, line = root, root.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            hit = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)), None)
            if hit is None:
                break
            line, node = hit[0].start_mark.line + 1, hit[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _message(error: Any, loc: tuple[Any, ...]) -> str:
    """Pydantic's message, plus the offending value and, for a typo'd key, the nearest known key."""
    kind, msg = error["type"], error["msg"].removeprefix("Value error, ")
    if kind == "extra_forbidden" and loc:
        model = Scene if len(loc) == 1 else _NESTED.get(str(loc[0]))
        if model is not None:
            known = list(model.model_fields) + (["provider"] if model is CastOverride else [])
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            msg = f"unknown key '{loc[-1]}'" + (f" (did you mean '{close[0]}'?)" if close else
                                                 f" (allowed: {', '.join(known)})")
    elif kind not in _WITHOUT_GOT and isinstance(error.get("input"), (str, int, float, bool)):
        msg += f" (got {error['input']!r})"
    return msg


def _where(source: str, line: int | None) -> str:
    """`file:line` or just `file` when the line is unknown."""
    return source if line is None else f"{source}:{line}"


def _problems(exc: ValidationError, root: yaml.Node | None, source: str) -> list[str]:
    """One `file:line: field: message` line per validation error, in file order.

    Our own errors may carry a `key` in their context: the entry inside the field that is wrong
    (a perspectives key, a duplicate's index); it is appended to the location to find its line.
    """
    rows = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        key = (error.get("ctx") or {}).get("key")
        if key is not None:
            loc += (key,)
        rows.append((_line_of(root, loc), f"{_dotted(loc)}: {_message(error, loc)}"))
    rows.sort(key=lambda row: row[0] or 0)
    return [f"{_where(source, line)}: {text}" for line, text in rows]


def _validate(data: Any, root: yaml.Node | None, source: str) -> Scene:
    """Validate raw data into a Scene, or raise InvalidConfig listing every problem with its line."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise InvalidConfig(f"{_where(source, _line_of(root, ()))}: (top level): a scene must be a mapping of keys "
                            f"(name, characters, ...), but this file is {kind}.", file=source)
    try:
        return Scene.model_validate(data)
    except ValidationError as exc:
        problems = _problems(exc, root, source)
        raise InvalidConfig("\n".join(problems), file=source, problems=problems) from None


def scene_from_dict(data: dict, source: str = "<scene>") -> Scene:
    """Validate an already-parsed scene; problems name `source` and the field (there are no lines)."""
    return _validate(data, None, source)


def _near_key(text: str, line: int) -> str:
    """The top-level key at or above a (1-based) line, to say where a syntax error is."""
    for raw in reversed(text.splitlines()[:line]):
        match = re.match(r"([A-Za-z_][\w-]*)\s*:", raw)
        if match:
            return match.group(1)
    return "(top level)"


def _compose(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """Parse YAML once, keeping both the node tree (for lines) and the data."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        return (loader.construct_document(root) if root is not None else None), root
    except yaml.MarkedYAMLError as exc:
        mark, began = exc.problem_mark or exc.context_mark, exc.context_mark or exc.problem_mark
        line = mark.line + 1 if mark else 1
        where = f":{mark.column + 1}" if mark else ""
        opened = f" (line {began.line + 1})" if began and mark and began.line != mark.line else ""
        problem = ", ".join(p for p in (f"{exc.context}{opened}" if exc.context else "", exc.problem) if p)
        near = _near_key(text, began.line + 1 if began else line)
        raise InvalidConfig(f"{source}:{line}{where}: {near}: invalid YAML: {problem}",
                            file=source, line=line) from None
    except yaml.YAMLError as exc:
        raise InvalidConfig(f"{source}:1: (top level): invalid YAML: {exc}", file=source) from None
    finally:
        loader.dispose()


def load_scene(path: Path) -> Scene:
    """Read and validate a scene file; every InvalidConfig names the file, the field and the line."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InvalidConfig(f"Scene file {source} not found.", file=source) from None
    except UnicodeDecodeError as exc:
        raise InvalidConfig(f"Scene file {source} is not valid UTF-8 (byte {exc.start}).", file=source) from None
    except OSError as exc:
        raise InvalidConfig(f"Cannot read scene file {source}: {exc.strerror or exc}.", file=source) from None
    data, root = _compose(text, source)
    return _validate(data, root, source)
