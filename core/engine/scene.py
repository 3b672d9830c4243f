"""The scene as the engine plays it (DESIGN §4): the cast, the prompt, the limits, the providers.

A pydantic model whose unknown keys are errors, so that a typo is never a silently ignored setting.
Cross-references (speaker, perspectives, cast overrides) are checked against `characters`. The
formats' own sections (`collaborate:`, `roundtable:`) and the reading of YAML files with line
numbers are the scene file's, in `promptdesk.core.casting.scene_file`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt,
                      PrivateAttr, StringConstraints, ValidationError, ValidationInfo, field_validator,
                      model_validator)
from pydantic_core import PydanticCustomError

from promptdesk.core.characters.loading import validate_slug
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.providers.spec import (Effort, Latency, ProtocolName, ProviderName, ProviderSpec, SchemaFormat, Timeout,
                                 WaitCap, turn_protocol)

MAX_CAST = 50
"""The largest cast any format plays (a town meeting, a focus group); a format may allow fewer
(`Format.max_cast`: a collaboration is two assistants by design)."""


def _slug(value: str) -> str:
    """A pydantic-friendly wrapper around `validate_slug`."""
    try:
        return validate_slug(value, "character")
    except InvalidConfig as exc:
        raise PydanticCustomError("slug", exc.message) from None


Slug = Annotated[str, AfterValidator(_slug)]
CARD_SUFFIXES = (".png", ".webp", ".json", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".avif", ".heic", ".heif",
                 ".ico", ".jxl", ".svg")
"""File names in `characters` that are character cards cast directly (see `Scene.cards`): PNG, WebP or
JSON cards, and any other image, so that reading it says what it is rather than breaking the slug rule."""


def card_slug(path: str) -> str:
    """The slug a card file is cast as: its file name without the suffix, made a slug."""
    stem = Path(path).name.rsplit(".", 1)[0].removesuffix(".card")
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "card"
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class SceneModel(BaseModel):
    """Base of every scene model: unknown keys are errors; numbers given for text are taken as text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class Limits(SceneModel):
    """Safety limits: beats in the scene, spoken turns per character, silent beats before a stall."""

    max_beats: PositiveInt | None = None
    """Unset: enough beats for the caps to be reached (`beats_for`), so max beats never pre-empts them."""
    soft_cap_per_character: PositiveInt = 40
    hard_cap_per_character: PositiveInt = 60
    stall_beats: PositiveInt = 3
    min_turns_per_character: NonNegativeInt = 2
    """No natural close before every actor has spoken this many times (and never at beat 0)."""
    wind_down_at: float = Field(0.8, gt=0.0, le=1.0)
    """The share of `max_beats` after which the scene winds down (`promptdesk.core.engine.winding`): the nearing
    note, then the close note (spec 004's "80%")."""
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


class ScheduledEvent(SceneModel):
    """A world event delivered to every actor at (or after) beat `at_beat`."""

    at_beat: NonNegativeInt
    text: Text


class CastOverride(SceneModel):
    """A per-character provider override; unset fields come from the scene's `provider`."""

    name: ProviderName | None = Field(None, validation_alias=AliasChoices("name", "provider"))
    model: str | None = None
    base_url: str | None = None
    latency_ms: Latency | None = None
    timeout_s: Timeout | None = None
    max_retries: NonNegativeInt | None = None
    retry_after_cap_s: WaitCap | None = None
    max_processes: PositiveInt | None = None
    max_concurrency: PositiveInt | None = None
    journal_timeout_s: Timeout | None = None
    protocol: ProtocolName | None = None
    schema_format: SchemaFormat | None = None
    thinking_tokens: PositiveInt | None = None
    effort: Effort | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        """`provider` is an alias of `name`: giving both is ambiguous."""
        if isinstance(data, dict) and "name" in data and "provider" in data:
            raise PydanticCustomError("alias", "give `provider` or `name`, not both")
        return data


def _not_in_cast(slugs: list[str], info: ValidationInfo) -> Iterator[str]:
    """The slugs that are not in the (already validated) `characters` list."""
    cast = info.data.get("characters")
    if cast is not None:
        yield from (s for s in slugs if s not in cast)


class Scene(SceneModel):
    """A validated scene file. `title` and `initial_speaker` are always filled in after validation.

    This is what the engine plays: everything but the formats' own sections. The scene-file model
    of `promptdesk.core.casting.scene_file` subclasses it with one field per format section and the registry
    in `formats`; validated through it, the format's rules (`Format.check_scene`) apply too."""

    formats: ClassVar[Mapping[str, Any]] = {}
    """The formats whose rules this model checks, by name (set by the scene-file model)."""

    name: str
    title: str | None = None
    format: str = "scene"
    turns: Literal["parallel", "sequential"] = "parallel"
    setting: str = ""
    prompt: str = ""
    goal: str = ""
    goal_markers: list[str] = Field(default_factory=list)
    """Words that must each appear in some speech for role C to call the goal achieved."""
    suggested_events: Literal["inject", "ask", "off"] | None = None
    """What becomes of a world event the coordinator suggests (`--suggested-events` wins): `inject`,
    `ask` the operator, or `off`; unset: `ask` in the console, `off` headless."""
    closing_action: str = ""
    """The final action the close note asks for ("Please close the scene by …"); unset: a neutral one."""
    characters: list[Slug] = Field(min_length=1)
    cards: dict[Slug, str] = Field(default_factory=dict)
    """Character cards cast directly: slug -> card file (`.png`/`.webp`/`.json`, relative to the scene file).
    A `characters` entry that names a card file is moved here, cast as the slug of its file name."""
    card_scenario: bool = False
    """Offer the cast cards' scenario (as `setting` and `prompt`) and first message (as the card's
    character's perspective) where this scene leaves them unset; off, they are only reported."""
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
    number: int | None = Field(None, ge=0)
    """The scene's number in the transcript's title (`# Scene 001 — Title`); unset: the run's sequence
    among this scene's runs in the runs folder (`promptdesk.core.casting.build.scene_number`)."""
    system_prompt: str | None = None
    """The actor system prompt file for this scene (relative to the scene file); unset: the shipped
    `actor/system-prompt.md`."""
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
    journals: str | None = None
    character_fields: list[Literal["description", "examples"]] = Field(default_factory=list)
    """Front matter fields added to each actor's briefing with its profile (off by default)."""
    """Where the characters' journals live: a folder (relative to the scene file) or `none`."""
    _folder: Path | None = PrivateAttr(default=None)
    _file: str | None = PrivateAttr(default=None)

    @property
    def folder(self) -> Path | None:
        """The folder of the scene file this scene was read from (None when built in code)."""
        return self._folder

    @property
    def file_name(self) -> str | None:
        """The name of the scene file this scene was read from, without its folder (None when built in code)."""
        return self._file

    def __eq__(self, other: object) -> bool:
        """Two scenes are equal when their settings are (where the file was read from is not compared)."""
        if not isinstance(other, Scene):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    @field_validator("setting", "prompt", "goal", "coordinator_notes", "closing_action", mode="before")
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
        """No one twice; as many people as the format needs (a `scene` needs two to be a dialogue) and
        no more than it plays (`MAX_CAST`, or the format's own `max_cast`), the limit named when exceeded."""
        for index, slug in enumerate(slugs):
            if slug in slugs[:index]:
                raise PydanticCustomError("duplicate", "'{slug}' is listed twice", {"slug": slug, "key": index})
        fmt = cls.formats.get(info.data.get("format") or "")
        most = min(MAX_CAST, fmt.max_cast()) if fmt is not None else MAX_CAST
        if len(slugs) > most:
            reason = fmt.max_cast_reason if fmt is not None and most < MAX_CAST else "the cast limit, MAX_CAST"
            raise PydanticCustomError("too_long", "format {format} plays at most {most} characters ({why}), got {n}: "
                                      "remove {extra}", {"n": len(slugs), "most": most, "extra": len(slugs) - most,
                                                         "why": reason, "format": fmt.name if fmt else "scene"})
        if fmt is not None and len(slugs) < fmt.min_cast():
            raise PydanticCustomError("too_short", "a {format} needs at least {least} characters, got {n}",
                                      {"n": len(slugs), "least": fmt.min_cast(), "format": fmt.name})
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
    def _protocols_fit(self) -> Scene:
        """A cast entry's `protocol: json` needs a provider that can constrain its output."""
        for slug, override in self.cast.items():
            if override.protocol is not None:
                try:
                    turn_protocol(self.provider_for(slug))
                except (ValueError, ValidationError) as exc:
                    raise PydanticCustomError("protocol", "cast.{slug}: {problem}",
                                              {"slug": slug, "problem": _first_problem(exc)}) from None
        return self

    @model_validator(mode="after")
    def _sections_fit(self) -> Scene:
        """Each format's section belongs to its format, which checks its own rules (in registry order)."""
        for name, fmt in type(self).formats.items():
            if name == self.format:
                fmt.check_scene(self)
            elif fmt.section is not None and getattr(self, name, None) is not None:
                raise PydanticCustomError("format", "`{key}:` settings need `format: {key}`", {"key": name})
        return self

    def section(self, name: str) -> Any:
        """The format section `name` (None when the file has none, or this model knows no such section)."""
        return getattr(self, name, None)

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


def _first_problem(exc: Exception) -> str:
    """The message of a ValueError, or of a ValidationError's first error."""
    if isinstance(exc, ValidationError):
        return str(exc.errors()[0].get("msg", exc)).removeprefix("Value error, ")
    return str(exc)
