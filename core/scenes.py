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
                      PositiveFloat, PositiveInt, PrivateAttr, StringConstraints, ValidationError, ValidationInfo,
                      field_validator, model_validator)
from pydantic_core import PydanticCustomError

from core.characters import validate_slug
from core.errors import InvalidConfig

MAX_CAST = 8
SCENE_MAX_BYTES = 1_048_576
"""A scene file larger than 1 MB is refused before it is parsed."""
TEXT_MAX = 20_000
"""The longest text a scene field may hold, in characters (a long setting is a page or two)."""
LIST_MAX = 1_000
"""The most entries a list or mapping in a scene may hold."""
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader when installed (several times faster on big files), else PyYAML's own."""
PROBLEMS_SHOWN = 20
"""At most this many validation problems are listed; the rest are counted."""
ProviderName = Literal["offline", "anthropic", "openai", "openai-compatible", "claude-code"]


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
CARD_SUFFIXES = (".png", ".json")
"""File names in `characters` that are character cards cast directly (see `Scene.cards`)."""


def card_slug(path: str) -> str:
    """The slug a card file is cast as: its file name without the suffix, made a slug."""
    stem = Path(path).name.rsplit(".", 1)[0].removesuffix(".card")
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "card"
Latency = Annotated[tuple[NonNegativeInt, NonNegativeInt], AfterValidator(_latency)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Model(BaseModel):
    """Base of every scene model: unknown keys are errors; numbers given for text are taken as text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class Limits(_Model):
    """Safety limits: beats in the scene, spoken turns per character, silent beats before a stall."""

    max_beats: PositiveInt | None = None
    """Unset: enough beats for the caps to be reached (`beats_for`), so max beats never pre-empts them."""
    soft_cap_per_character: PositiveInt = 40
    hard_cap_per_character: PositiveInt = 60
    stall_beats: PositiveInt = 3
    min_turns_per_character: NonNegativeInt = 2
    """No natural close before every actor has spoken this many times (and never at beat 0)."""
    window: PositiveInt = 10
    """Recent context: the exchanges an actor's request carries (isolation a), or the turns its
    thread keeps before older ones are dropped in blocks of this size (isolation b)."""

    def beats_for(self, cast_size: int) -> int:
        """The scene's beat limit: `max_beats` when given, else one beat per turn up to every hard cap."""
        return self.max_beats or self.hard_cap_per_character * max(1, cast_size)

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
    max_processes: PositiveInt = 4
    """claude-code: at most this many Claude Code CLI processes at once."""


class CastOverride(_Model):
    """A per-character provider override; unset fields come from the scene's `provider`."""

    name: ProviderName | None = Field(None, validation_alias=AliasChoices("name", "provider"))
    model: str | None = None
    base_url: str | None = None
    latency_ms: Latency | None = None
    timeout_s: PositiveFloat | None = None
    max_retries: NonNegativeInt | None = None
    retry_after_cap_s: NonNegativeFloat | None = None
    max_processes: PositiveInt | None = None

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
    goal_markers: list[str] = Field(default_factory=list)
    """Words that must each appear in some speech for role C to call the goal achieved."""
    characters: list[Slug] = Field(min_length=1, max_length=MAX_CAST)
    cards: dict[Slug, str] = Field(default_factory=dict)
    """Character cards cast directly: slug -> card file (`.png`/`.json`, relative to the scene file).
    A `characters` entry that names a card file is moved here, cast as the slug of its file name."""
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
    thread_thinking: Literal["keep", "last", "drop"] = "last"
    """Isolation (b): which of an actor's own past thoughts its thread re-sends."""

    @model_validator(mode="before")
    @classmethod
    def _cards_in_cast(cls, data: Any) -> Any:
        """`characters: [cards/Seraphina.png, alice]`: a card file is cast as `seraphina`."""
        if not isinstance(data, dict) or not isinstance(data.get("characters"), list):
            return data
        if not isinstance(data.get("cards") or {}, dict):
            return data
        cards = dict(data.get("cards") or {})
        cast = []
        for entry in data["characters"]:
            if isinstance(entry, str) and entry.lower().endswith(CARD_SUFFIXES):
                slug = card_slug(entry)
                cards[slug] = entry
                cast.append(slug)
            else:
                cast.append(entry)
        return {**data, "characters": cast, "cards": cards} if cards else data
    pace: float | None = Field(None, ge=0.0, le=60.0)
    """Minimum seconds per beat (`--pace` wins); unset: 0, or 1.5 s in the console on the offline improviser."""
    collaborate: Collaborate | None = None
    roundtable: Roundtable | None = None
    journals: str | None = None
    character_fields: list[Literal["description"]] = Field(default_factory=list)
    """Front matter fields added to each actor's briefing with its profile (off by default)."""
    """Where the characters' journals live: a folder (relative to the scene file) or `none`."""
    _folder: Path | None = PrivateAttr(default=None)

    @property
    def folder(self) -> Path | None:
        """The folder of the scene file this scene was read from (None when built in code)."""
        return self._folder

    def __eq__(self, other: object) -> bool:
        """Two scenes are equal when their settings are (where the file was read from is not compared)."""
        if not isinstance(other, Scene):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

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


class _Lines:
    """Finds the 1-based line of a location in the composed YAML, each mapping indexed once (so that
    a file with thousands of keys is validated in linear time)."""

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root
        self._index: dict[int, dict[str, tuple[yaml.Node, yaml.Node]]] = {}

    def _entries(self, node: yaml.MappingNode) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if id(node) not in self._index:
            entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    entries.setdefault(key.value, (key, value))
            self._index[id(node)] = entries
        return self._index[id(node)]

    def of(self, loc: tuple[Any, ...]) -> int | None:
        """The line of the node at `loc`, or of the nearest existing parent (a key's own line for
        mappings); None when there is no YAML behind the data (`scene_from_dict`)."""
        if self.root is None:
            return None
        node, line = self.root, self.root.start_mark.line + 1
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                hit = self._entries(node).get(str(part))
                if hit is None:
                    break
                line, node = hit[0].start_mark.line + 1, hit[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the node at `loc` (see `_Lines.of`)."""
    return _Lines(root).of(loc)


def _capped(problems: list[str]) -> list[str]:
    """The first `PROBLEMS_SHOWN` problems, and how many more there are."""
    if len(problems) <= PROBLEMS_SHOWN:
        return problems
    return problems[:PROBLEMS_SHOWN] + [f"... and {len(problems) - PROBLEMS_SHOWN:,} more problems"]


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
    rows, lines = [], _Lines(root)
    for error in exc.errors():
        loc = tuple(error["loc"])
        key = (error.get("ctx") or {}).get("key")
        if key is not None:
            loc += (key,)
        rows.append((lines.of(loc), f"{_dotted(loc)}: {_message(error, loc)}"))
    rows.sort(key=lambda row: row[0] or 0)
    return [f"{_where(source, line)}: {text}" for line, text in rows]


def _oversized(data: Any, loc: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(location, what) of every text over `TEXT_MAX` and every list or mapping over `LIST_MAX`."""
    if isinstance(data, str):
        if len(data) > TEXT_MAX:
            yield loc, f"text of {len(data):,} characters is over the limit of {TEXT_MAX:,}"
    elif isinstance(data, (list, dict)):
        if len(data) > LIST_MAX:
            yield loc, f"{len(data):,} entries is over the limit of {LIST_MAX:,}"
            return
        items = data.items() if isinstance(data, dict) else enumerate(data)
        for key, value in items:
            if isinstance(key, str) and len(key) > TEXT_MAX:
                yield loc, f"a key of {len(key):,} characters is over the limit of {TEXT_MAX:,}"
            yield from _oversized(value, loc + (key,))


def _validate(data: Any, root: yaml.Node | None, source: str) -> Scene:
    """Validate raw data into a Scene, or raise InvalidConfig listing every problem with its line."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise InvalidConfig(f"{_where(source, _line_of(root, ()))}: (top level): a scene must be a mapping of keys "
                            f"(name, characters, ...), but this file is {kind}.", file=source)
    lines = _Lines(root)
    too_big = [f"{_where(source, lines.of(loc))}: {_dotted(loc)}: {what}" for loc, what in _oversized(data)]
    if too_big:
        raise InvalidConfig("\n".join(_capped(too_big)), file=source, problems=too_big)
    try:
        return Scene.model_validate(data)
    except ValidationError as exc:
        problems = _problems(exc, root, source)
        raise InvalidConfig("\n".join(_capped(problems)), file=source, problems=problems) from None


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
    loader = _LOADER(text)
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
        size = Path(path).stat().st_size
        if size > SCENE_MAX_BYTES:
            raise InvalidConfig(f"Scene file {source} is {size:,} bytes, over the limit of 1 MB "
                                f"({SCENE_MAX_BYTES:,} bytes).", file=source)
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InvalidConfig(f"Scene file {source} not found.", file=source) from None
    except UnicodeDecodeError as exc:
        raise InvalidConfig(f"Scene file {source} is not valid UTF-8 (byte {exc.start}).", file=source) from None
    except OSError as exc:
        raise InvalidConfig(f"Cannot read scene file {source}: {exc.strerror or exc}.", file=source) from None
    data, root = _compose(text, source)
    scene = _validate(data, root, source)
    scene._folder = Path(path).resolve().parent
    return scene
