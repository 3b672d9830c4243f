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
from typing import Any, ClassVar, Literal

from pydantic import (Field, PrivateAttr, ValidationError, ValidationInfo, field_validator,
                      model_validator)
from pydantic_core import PydanticCustomError

from promptdesk.core.characters.loading import validate_slug
from promptdesk.core.characters.search import ascii_spelling
from promptdesk.core.engine.scene_parts import BenchmarkSource, CastOverride, Limits, SceneModel, ScheduledEvent, Slug
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.protocol.rubrics import RUBRICS
from promptdesk.core.providers.spec import ProviderSpec, carried, turn_protocol

MAX_CAST = 50
"""The largest cast any format plays (a town meeting, a focus group); a format may allow fewer
(`Format.max_cast`: a collaboration is two assistants by design)."""


CARD_SUFFIXES = (".png", ".webp", ".json", ".charx", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".avif", ".heic", ".heif",
                 ".ico", ".jxl", ".svg")
"""File names in `characters` that are character cards cast directly (see `Scene.cards`): PNG, WebP,
JSON or CharX cards, and any other image, so that reading it says what it is rather than breaking the slug rule."""


def card_slug(path: str) -> str:
    """The slug a card file is cast as: its file name without the suffix, made a slug, its accents
    dropped as a character's name is (`Zoë Sørensen.png` is `zoe-sorensen`)."""
    stem = Path(path).name.rsplit(".", 1)[0].removesuffix(".card")
    return re.sub(r"[^a-z0-9]+", "-", (ascii_spelling(stem) or stem).lower()).strip("-") or "card"


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
    """The scene's slug (`[a-z0-9][a-z0-9-]*`), which names its run folders (`runs/<name>-<stamp>/`)."""
    title: str | None = None
    """The title the console and the transcripts show; unset: made from `name`."""
    format: str = "scene"
    """How the scene is played: `scene` (actors in beats), `collaborate` (two assistants, bounded
    rounds) or `roundtable` (a facilitator asks, participants answer)."""
    turns: Literal["parallel", "sequential"] = "parallel"
    """`scene` format: `parallel` beats (every actor answers each update; answers ordered by arrival)
    or `sequential` (one speaker at a time: the one addressed, else the next in the cast)."""
    setting: str = ""
    """Where and when the scene happens; every actor is told (a roundtable's participants and facilitator
    in its project context; a collaboration sends only its goal, and its notes.md says the setting is unsent)."""
    prompt: str = ""
    """The shared situation and what is at stake; every actor is told (a `scene` needs one; a roundtable
    takes it as its topic, or as context beside `roundtable.topic`; a collaboration leaves it unsent, said in notes.md)."""
    goal: str = ""
    """What the scene is for; every actor is told, and the coordinator judges it at the close."""
    goal_markers: list[str] = Field(default_factory=list)
    """Words that must each appear in some speech for role C to call the goal achieved (a marker in a clause of the goal that names who does it, `Bob apologises`, only in that person's speech). They check the scene's `goal:`: without one, no role gives a verdict."""
    suggested_events: Literal["inject", "ask", "off"] | None = None
    """What becomes of a world event the coordinator suggests (`--suggested-events` wins): `inject`,
    `ask` the operator, or `off`; unset: `ask` in the console, `off` headless."""
    closing_action: str = ""
    """The final action the close note asks for ("Please close the scene by …"); unset: a neutral one."""
    wind_down: Literal["timing", "action", "off"] | None = Field(None, description=(
        "How the coordinator winds the scene down (`limits.wind_down_at` of `max_beats`, or once the goal is "
        "met): `timing` sends two notes that say only when the scene ends (\"The scene is nearing its natural "
        "end.\", then \"The scene is ending now. Bring it to a close in your own way.\"), as spec 000 lets the "
        "coordinator nudge timing but never topic; `action` sends spec 004's \"Scene is nearing natural "
        "conclusion. Begin wrapping up.\" then \"Please close the scene by <closing_action>.\"; `off` sends no "
        "note and never closes with `goal`. Unset: `action` when `closing_action:` is given, else `timing`. "
        "`closing_action:` with `timing` or `off` is refused."))
    """How the scene winds down; see `promptdesk.core.protocol.notes` and `promptdesk.core.engine.winding`."""
    characters: list[Slug] = Field(min_length=1)
    """The cast by slug, in order, each found in the characters folders (`promptdesk paths`); a card
    file (`.png`, `.webp`, `.json`) is cast directly."""
    cards: dict[Slug, str] = Field(default_factory=dict)
    """Character cards cast directly: slug -> card file (`.png`/`.webp`/`.json`, relative to the scene file).
    A `characters` entry that names a card file is moved here, cast as the slug of its file name."""
    card_scenario: bool = False
    """Offer the cast cards' scenario (as `setting` and `prompt`) and first message (as the card's
    character's perspective) where this scene leaves them unset; off, they are only reported."""
    perspectives: dict[str, str] = Field(default_factory=dict)
    """Private to each actor: slug -> what only that character knows or wants. No other actor, and
    no transcript, ever carries it (the audit checks)."""
    initial_speaker: str | None = None
    """The slug of who speaks first; unset: the first of `characters`."""
    coordinator_notes: str = ""
    """For the coordinator only (what to watch for, how it should end): never in any actor's request."""
    events: list[ScheduledEvent] = Field(default_factory=list)
    """World events at a beat, delivered to every actor."""
    limits: Limits = Field(default_factory=Limits)
    """How long the scene may run: beats, caps on each character's turns, stalls, winding down."""
    isolation: Literal["a", "b"] | None = None
    """Choice 1, how actors are isolated: `a` (a fresh stateless call per turn) or `b` (one
    conversation per actor); unset: the wizard or `--isolation` must give it (never defaulted)."""
    coordinator: Literal["A", "B", "C"] | None = None
    """Choice 2, who decides when the scene ends: `A` (an LLM judge that also sees your notes), `B`
    (a dedicated LLM judge) or `C` (pure code); unset: the wizard or `--coordinator` must give it."""
    provider: ProviderSpec = Field(default_factory=ProviderSpec)
    """The model every actor plays with, unless `cast` says otherwise (default: the offline improviser)."""
    cast: dict[str, CastOverride] = Field(default_factory=dict)
    """Per-character provider settings: slug -> the `provider` fields that differ for that actor."""
    judge: ProviderSpec | None = None
    """The coordinator's judge (roles A and B) when it is not the scene's `provider`."""
    seed: int | None = None
    """The run's seed (`--seed` wins); unset: a random one, recorded in `notes.md`."""
    number: int | None = Field(None, ge=0)
    """The scene's number in the transcript's title (`# Scene 001 — Title`); unset: the run's sequence
    among this scene's runs in the runs folder (`promptdesk.core.casting.build.scene_number`)."""
    system_prompt: str | None = None
    """The actor system prompt file for this scene, relative to the scene file and inside its folder
    (a file elsewhere is refused); unset: the shipped `actor/system-prompt.md`."""
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
                if slug in cast or slug in data["characters"]:
                    other = f"the card '{cards[slug]}'" if slug in cards else f"the character '{slug}'"
                    raise PydanticCustomError(
                        "duplicate", "'{entry}' is cast as '{slug}' (a card is cast under its file name), as "
                        "{other} is: rename the card's file, or import it (promptdesk import) under another name",
                        {"entry": entry, "slug": slug, "other": other})
                cards[slug] = entry
                cast.append(slug)
            else:
                cast.append(entry)
        return {**data, "characters": cast, "cards": cards} if cards else data
    pace: float | None = Field(None, ge=0.0, le=60.0)
    """Minimum seconds per beat (`--pace` wins); unset: 0, or 1.5 s in the console on the offline improviser."""
    journals: str | None = None
    """Where the characters' journals live: a folder (relative to the scene file and inside its folder;
    `--journals DIR` may name one elsewhere) or `none`."""
    character_fields: list[Literal["description", "examples"]] = Field(default_factory=list)
    """Front matter fields added to each actor's briefing with its profile (off by default)."""
    evaluate: Literal[tuple(RUBRICS)] | None = None  # type: ignore[valid-type]
    """After the close (and the journal step), have an evaluator score every actor on this rubric:
    `sotopia`, SOTOPIA-EVAL's seven dimensions (believability, relationship, knowledge, secret,
    social_rules, financial_and_material_benefits, goal). The scores go to `evaluation.json`; unset: no
    evaluation (`promptdesk evaluate RUN` can score a run later)."""
    evaluator: ProviderSpec | None = None
    """The evaluator's model (`evaluate:`), priced and budgeted like any call; unset: the `judge`, else
    the scene's `provider` (so set it to keep the models under test apart from the one scoring them)."""
    benchmark: BenchmarkSource | None = None
    """Where the scene comes from in a published benchmark (`promptdesk import sotopia` writes it)."""
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

    @field_validator("goal_markers", "events", "character_fields", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        """A list key given with no items (`events:` with every item commented out) means none."""
        return [] if value is None else value

    @field_validator("cards", "perspectives", "cast", mode="before")
    @classmethod
    def _empty_is_no_entries(cls, value: Any) -> Any:
        """A mapping key given with no entries (`cast:` with every line commented out) means none."""
        return {} if value is None else value

    @field_validator("goal_markers")
    @classmethod
    def _markers_are_words(cls, markers: list[str]) -> list[str]:
        """A blank marker is in every speech (or in none): it would decide the goal on nothing."""
        for index, marker in enumerate(markers):
            if not marker.strip():
                raise PydanticCustomError("blank", "a goal marker is a word some speech must hold, and this one is "
                                          "blank: remove it", {"key": index})
        return markers

    @field_validator("suggested_events", "wind_down", mode="before")
    @classmethod
    def _off_is_off(cls, value: Any) -> Any:
        """`off` unquoted, as the docs write it, is YAML 1.1's false: it means the choice `off`."""
        return "off" if value is False else value

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

    @property
    def winding(self) -> str:
        """`wind_down:` as played: the value given, else `action` with a `closing_action:`, else `timing`."""
        return self.wind_down or ("action" if self.closing_action.strip() else "timing")

    @model_validator(mode="after")
    def _closing_action_needs_a_close_note(self) -> Scene:
        """A `closing_action:` is the final action spec 004's close note names: `wind_down: timing`
        never names one and `off` sends no note, so either with it is a contradiction, refused."""
        if self.closing_action.strip() and self.wind_down in ("timing", "off"):
            sends = "no close note" if self.wind_down == "off" else "a close note that names no action"
            raise PydanticCustomError("wind_down", "closing_action: is the action the close note names, but "
                                      "wind_down: {mode} sends {sends}: remove closing_action:, or set "
                                      "wind_down: action", {"mode": self.wind_down, "sends": sends,
                                                             "key": "wind_down"})
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
        carried over (they belong to the other provider) unless the override gives its own, nor the
        settings only the scene's provider reads (`latency_ms`, `effort`: `carried`).
        """
        override = self.cast.get(slug)
        if override is None:
            return self.provider
        update, base = override.model_dump(exclude_none=True), self.provider.model_dump(exclude_unset=True)
        if update.get("name", self.provider.name) != self.provider.name:
            update, base = {"model": None, "base_url": None, **update}, carried(base, update["name"])
        return ProviderSpec.model_validate({**base, **update})

    def perspective_for(self, slug: str) -> str:
        """This character's private perspective, or "" (never anyone else's)."""
        return self.perspectives.get(slug, "")


def _first_problem(exc: Exception) -> str:
    """The message of a ValueError, or of a ValidationError's first error."""
    if isinstance(exc, ValidationError):
        return str(exc.errors()[0].get("msg", exc)).removeprefix("Value error, ")
    return str(exc)
