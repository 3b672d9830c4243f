"""Which model answers an actor, and how patiently: the `provider:` of a scene file (and its `judge:`).

`ProviderSpec` is what every backend is built from (`core.casting.pool`); it belongs to the providers
because nothing else decides what a provider needs to know.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, NonNegativeInt, PositiveInt
from pydantic_core import PydanticCustomError

ProviderName = Literal["offline", "anthropic", "openai", "openai-compatible", "claude-code"]


def _latency(value: tuple[int, int]) -> tuple[int, int]:
    """A latency range [lo, hi] in milliseconds must have lo <= hi."""
    if value[0] > value[1]:
        raise PydanticCustomError("latency", "latency_ms must be [lo, hi] with lo <= hi, got {value}",
                                  {"value": list(value)})
    return value


Latency = Annotated[tuple[NonNegativeInt, NonNegativeInt], AfterValidator(_latency)]
Timeout = Annotated[float, Field(gt=0, allow_inf_nan=False)]
"""Seconds a call may take: a finite amount (infinity would let a stalled server hang the run)."""
WaitCap = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""The longest wait a response header may impose: a finite amount (infinity would honour a reset in 2099)."""


class ProviderSpec(BaseModel):
    """Which model answers, and how patiently: timeouts, retries, and the offline latency range."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    name: ProviderName = "offline"
    model: str | None = None
    base_url: str | None = None
    latency_ms: Latency | None = None
    timeout_s: Timeout = 60.0
    max_retries: NonNegativeInt = 3
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

    @property
    def turn_timeout_s(self) -> float:
        """The engine's own guard around one turn: every retry's timeout, plus backoff headroom."""
        return self.timeout_s * (self.max_retries + 1) + self.retry_after_cap_s * self.max_retries + 5

    @property
    def journal_turn_timeout_s(self) -> float:
        """The engine's guard around one journal entry, as `turn_timeout_s` with the journal timeout."""
        timeout = self.journal_timeout_s or self.timeout_s
        return timeout * (self.max_retries + 1) + self.retry_after_cap_s * self.max_retries + 5
