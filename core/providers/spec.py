"""Which model answers an actor, and how patiently: the `provider:` of a scene file (and its `judge:`).

`ProviderSpec` is what every backend is built from (`promptdesk.core.casting.pool`); it belongs to the providers
because nothing else decides what a provider needs to know.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt, model_validator
from pydantic_core import PydanticCustomError

from promptdesk.core.providers.names import PROTOCOL_NAMES, PROVIDER_NAMES

ProviderName = Literal[PROVIDER_NAMES]  # type: ignore[valid-type]
ProtocolName = Literal[PROTOCOL_NAMES]  # type: ignore[valid-type]
Effort = Literal["low", "medium", "high", "xhigh", "max"]
SchemaFormat = Literal["json_schema", "json_object"]
CONSTRAINED = ("anthropic", "openai", "openai-compatible")
"""The providers that can constrain a reply to a JSON schema: OpenAI and compatible servers through
`response_format` (llama.cpp, llama-cpp-python, vLLM, SGLang, LM Studio, Ollama all take it),
Anthropic through a forced tool. `protocol: auto` picks `json` for these, `tags` for the others."""


def _latency(value: tuple[int, int]) -> tuple[int, int]:
    """A latency range [lo, hi] in milliseconds must have lo <= hi."""
    if value[0] > value[1]:
        raise PydanticCustomError("latency", "latency_ms must be [lo, hi] with lo <= hi, got {value}",
                                  {"value": list(value)})
    return value


OWN_SETTINGS: dict[str, tuple[str, ...]] = {
    "latency_ms": ("offline",), "max_processes": ("claude-code",), "first_byte_timeout_s": ("claude-code",),
    "thinking_tokens": ("claude-code",), "effort": ("claude-code",), "schema_format": ("openai", "openai-compatible")}
"""The settings only some providers read (`send_ahead` has its own notice, `unsent_ahead`): given to
another provider they do nothing, and the run says so (`idle_settings`)."""


def carried(settings: dict[str, object], name: str) -> dict[str, object]:
    """A provider's `settings` as another provider, `name`, takes them over (a `--provider` flag, a
    `cast:` entry that switches provider): without those only the first one reads, as its model is
    left behind too."""
    return {key: value for key, value in settings.items() if name in OWN_SETTINGS.get(key, (name,))}


def idle_settings(spec: ProviderSpec) -> list[str]:
    """The settings `spec` was given (in a scene file or by a flag) that its provider does not read."""
    return [key for key, readers in OWN_SETTINGS.items() if key in spec.model_fields_set and spec.name not in readers]


Latency = Annotated[tuple[NonNegativeInt, NonNegativeInt], AfterValidator(_latency)]
Timeout = Annotated[float, Field(gt=0, allow_inf_nan=False)]
"""Seconds a call may take: a finite amount (infinity would let a stalled server hang the run)."""
WaitCap = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""The longest wait a response header may impose: a finite amount (infinity would honour a reset in 2099)."""


class ProviderSpec(BaseModel):
    """Which model answers, and how patiently: timeouts, retries, and the offline latency range."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, use_attribute_docstrings=True)

    name: ProviderName = "offline"
    """Who answers: `offline` (the improviser: no key, no network, not a model), `anthropic`, `openai`,
    `openai-compatible` (any Chat Completions server: llama.cpp, vLLM, Ollama, LM Studio) or `claude-code`."""
    model: str | None = None
    """The model id (anthropic and openai have no default: give one)."""
    base_url: str | None = None
    """The server's address, `http(s)://host[:port][/path]`; unset: the provider's own (or
    `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`)."""
    latency_ms: Latency | None = None
    """offline: a simulated answer time, drawn per call from [lo, hi] milliseconds (it decides who
    arrives first in a parallel beat; batch runs do not wait it out)."""
    timeout_s: Timeout = 60.0
    """Seconds one attempt of a call may take (`--timeout` wins)."""
    max_retries: NonNegativeInt = 3
    """Retries after a failed attempt (429, 5xx, a timeout, a cut stream), with backoff; 401, 403
    and 404 are never retried."""
    retry_after_cap_s: WaitCap = 30.0
    """The longest wait a response header may impose (`retry-after`, a spent rate-limit budget's reset)."""
    max_processes: PositiveInt = 4
    """claude-code: at most this many Claude Code CLI processes at once."""
    first_byte_timeout_s: Timeout = 20.0
    """claude-code: an attempt with no sign of an answer after this long is failed and retried."""
    max_concurrency: PositiveInt | None = None
    """At most this many calls at once to this provider's server (the others queue in arrival
    order); None: no limit (the hosted APIs). 1 for a server that serves one request at a time."""
    journal_timeout_s: Timeout | None = None
    """Seconds one journal call's attempt may take; None: `timeout_s`."""
    send_ahead: bool = False
    """anthropic, openai, openai-compatible: in a parallel beat under isolation (b), open each actor's next
    request as soon as its turn is done and send the rest when the next beat asks it (its body in
    chunks: a crowd's beat no longer waits for every request to be built; the server must take a
    chunked request body, as the hosted APIs, vLLM, Ollama and llama.cpp do). Not with `max_concurrency`."""
    thinking_tokens: PositiveInt | None = None
    """claude-code: a budget for extended thinking; None (the default) turns it off."""
    effort: Effort | None = None
    """claude-code: the CLI's effort level; None (the default) sends none."""
    schema_format: SchemaFormat = "json_schema"
    """openai-compatible: how the server takes a JSON schema: `json_schema` (OpenAI's
    `{"type": "json_schema", "json_schema": {...}}`: llama.cpp's server, vLLM, SGLang, LM Studio,
    Ollama) or `json_object` (`{"type": "json_object", "schema": ...}`: llama-cpp-python's server)."""
    protocol: ProtocolName = "tags"
    """How an actor answers: `tags` (<thinking>/<speech>), `json` (one object constrained by a JSON
    schema, `promptdesk.core.protocol.structured`), or `auto` (`json` where the provider can constrain output)."""

    @model_validator(mode="after")
    def _protocol_fits(self) -> ProviderSpec:
        turn_protocol(self)
        return self

    @property
    def turn_timeout_s(self) -> float:
        """The engine's own guard around one turn: every retry's timeout, plus backoff headroom."""
        return self.timeout_s * (self.max_retries + 1) + self.retry_after_cap_s * self.max_retries + 5

    @property
    def journal_turn_timeout_s(self) -> float:
        """The engine's guard around one journal entry, as `turn_timeout_s` with the journal timeout."""
        timeout = self.journal_timeout_s or self.timeout_s
        return timeout * (self.max_retries + 1) + self.retry_after_cap_s * self.max_retries + 5


def turn_protocol(spec: object) -> Literal["tags", "json"]:
    """The protocol `spec`'s actors answer in (`auto` resolved); `json` on a provider that cannot
    constrain its output is refused (ValueError, with what to set instead)."""
    name, protocol = getattr(spec, "name", None) or "offline", getattr(spec, "protocol", None) or "tags"
    if protocol == "auto":
        return "json" if name in CONSTRAINED else "tags"
    if protocol == "json" and name not in CONSTRAINED:
        raise ValueError(f"protocol: json needs a provider that can constrain its output ({', '.join(CONSTRAINED)}); "
                         f"the {name} provider speaks tags only: set protocol to tags or auto")
    return "json" if protocol == "json" else "tags"
