"""The parts a scene is made of: the base of every scene model, character slugs and texts, and the
sections nested in a scene file (`limits`, `events`, `cast`). `promptdesk.core.engine.scene` puts them
together; the formats' own sections build on `SceneModel` too.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt,
                      StringConstraints, model_validator)
from pydantic_core import PydanticCustomError

from promptdesk.core.characters.loading import validate_slug
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.providers.spec import Effort, Latency, ProtocolName, ProviderName, SchemaFormat, Timeout, WaitCap


def _slug(value: str) -> str:
    """A pydantic-friendly wrapper around `validate_slug`."""
    try:
        return validate_slug(value, "character")
    except InvalidConfig as exc:
        raise PydanticCustomError("slug", exc.message) from None


Slug = Annotated[str, AfterValidator(_slug)]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class SceneModel(BaseModel):
    """Base of every scene model: unknown keys are errors; numbers given for text are taken as text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, use_attribute_docstrings=True)


class Limits(SceneModel):
    """Safety limits: beats in the scene, spoken turns per character, silent beats before a stall."""

    max_beats: PositiveInt | None = None
    """Unset: enough beats for the caps to be reached (`beats_for`), so max beats never pre-empts them."""
    soft_cap_per_character: PositiveInt = 40
    """Spoken turns after which a character is asked to bring the scene to a close (timing, never topic)."""
    hard_cap_per_character: PositiveInt = 60
    """Spoken turns at which the scene closes at once (reason `hard-cap`): spec 000's safety net, never hit
    when the soft cap has done its work."""
    stall_beats: PositiveInt = 3
    """Beats in a row in which no one speaks before the scene is nudged, then closed as a stall."""
    min_turns_per_character: NonNegativeInt = 2
    """No natural close before every actor has spoken this many times (and never at beat 0); one whose latest
    line took leave is not waited for."""
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
    """The beat at (or after) which every actor receives it; the first beat is 0."""
    text: Text
    """What happens, in a line ("The phone rings")."""


class CastOverride(SceneModel):
    """A per-character provider override; unset fields come from the scene's `provider`."""

    name: ProviderName | None = Field(None, validation_alias=AliasChoices("name", "provider"))
    """This character's provider (`provider:` is the same key)."""
    model: str | None = None
    """This character's model id."""
    base_url: str | None = None
    """This character's server address."""
    latency_ms: Latency | None = None
    """offline: this character's simulated answer time range, in milliseconds."""
    timeout_s: Timeout | None = None
    """Seconds one attempt of this character's calls may take."""
    max_retries: NonNegativeInt | None = None
    """Retries of this character's failed calls."""
    retry_after_cap_s: WaitCap | None = None
    """The longest wait a response header may impose on this character's calls."""
    max_processes: PositiveInt | None = None
    """claude-code: at most this many CLI processes at once for this character's provider."""
    max_concurrency: PositiveInt | None = None
    """At most this many calls at once to this character's server."""
    journal_timeout_s: Timeout | None = None
    """Seconds one attempt of this character's journal call may take."""
    send_ahead: bool | None = None
    """anthropic, openai, openai-compatible: send this character's next request ahead (see `provider.send_ahead`)."""
    protocol: ProtocolName | None = None
    """How this character answers: `tags`, `json` or `auto` (see `provider.protocol`)."""
    schema_format: SchemaFormat | None = None
    """openai-compatible: how this character's server takes a JSON schema (see `provider.schema_format`)."""
    thinking_tokens: PositiveInt | None = None
    """claude-code: this character's budget for extended thinking."""
    effort: Effort | None = None
    """claude-code: this character's effort level."""

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        """`provider` is an alias of `name`: giving both is ambiguous."""
        if isinstance(data, dict) and "name" in data and "provider" in data:
            raise PydanticCustomError("alias", "give `provider` or `name`, not both")
        return data


class BenchmarkSource(SceneModel):
    """Where an imported scene comes from in a published benchmark (written by `promptdesk import sotopia`;
    for the record and for analysis: no actor is told any of it)."""

    name: str
    """The benchmark (`sotopia`)."""
    scenario: str = ""
    """The scenario's own name in the benchmark (Sotopia's environment `codename`)."""
    environment: str | None = None
    """The benchmark's id of the scenario (Sotopia's `EnvironmentProfile` pk)."""
    combo: str | None = None
    """The benchmark's id of this pairing of scenario and characters (Sotopia's `EnvAgentComboStorage` pk)."""
    agents: list[str] = Field(default_factory=list)
    """The benchmark's ids of the characters, in the scene's `characters` order (Sotopia's `AgentProfile` pks)."""
    relationship: str | None = None
    """The relationship the characters have (Sotopia's: stranger, know_by_name, acquaintance, friend,
    romantic_relationship, family_member), which decides what each is told of the other."""
    turn_order: str | None = None
    """How turns were taken when the scene was imported: `round-robin` (Sotopia's own runner, `turns:
    sequential`) or `parallel` (Promptdesk's beats)."""

