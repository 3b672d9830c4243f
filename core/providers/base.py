"""The one provider interface every model backend implements, and its request/response types.

A `Request` is exactly what is sent to a model (and what `prompts.jsonl` records): a system
prompt, the message thread, and a few routing facts (`to`, `purpose`) that a real provider ignores.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

Purpose = Literal["turn", "correct", "journal", "judge", "envelope", "facilitator", "participant", "evaluate"]


class ChatMessage(BaseModel):
    """One message of a thread, as the model sees it."""

    role: Literal["user", "assistant"]
    content: str


class Request(BaseModel):
    """Everything one call sends to a model. Never holds an API key."""

    to: str
    purpose: Purpose = "turn"
    system: str
    messages: list[ChatMessage]
    max_tokens: int = 1024
    temperature: float | None = None
    cache_prefix: bool = False
    """Mark the system prompt as a stable cached prefix (isolation b)."""
    cache_key: str | None = None
    """A per-actor cache routing key (OpenAI `prompt_cache_key`)."""
    json_schema: dict[str, Any] | None = None
    """When set, ask for output matching this JSON schema (structured outputs)."""
    beat: int | None = None
    thread_kept: int | None = None
    """How many leading characters of the last message the actor's thread keeps (isolation b): the
    next request re-sends them unchanged, so a cached prefix may end there. The rest of that message
    (the last private thought, the beat heading, the ask) is this request's alone."""


class Usage(BaseModel):
    """Tokens one call consumed, split the way providers bill them: every attempt of the call, a
    failed attempt's included when the provider billed it (a stream cut after its usage arrived).

    `reported` is False when the response carried no usage at all (many local servers send none
    on a stream): the counts are then unknown, not zero, and the call's record says so."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    reported: bool = True

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_write_tokens + self.cache_read_tokens

    def __add__(self, other: Usage) -> Usage:
        """Both together (a call's failed attempts and the one that answered are all billed)."""
        return Usage(input_tokens=self.input_tokens + other.input_tokens,
                     output_tokens=self.output_tokens + other.output_tokens,
                     cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
                     cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
                     reported=self.reported and other.reported)


class Completion(BaseModel):
    """What came back: the whole text, its usage and timing."""

    text: str
    usage: Usage = Field(default_factory=Usage)
    provider: str
    model: str | None = None
    latency_s: float = 0.0
    ttft_s: float | None = None
    truncated: bool = False
    """The reply stopped at its token limit (`max_tokens`: OpenAI's `finish_reason: length`,
    Anthropic's `stop_reason: max_tokens`): it may be cut short."""
    refusal: str | None = None
    """What the model said instead of answering, when it refused (OpenAI's `refusal`): private, like
    anything a model says outside a well-formed speech."""
    unoffered_tool: str | None = None
    """The stop reason (`tool_calls`, `function_call`, `tool_use`) by which the reply asked to call a
    tool when none was offered: the call is never read, `text` is only what text came with it."""
    reasoning_only: bool = False
    """The reply's text was empty and the server sent reasoning apart from it (`reasoning_content`,
    `reasoning`): a reasoning model that spent its turn thinking."""


DeltaCallback = Callable[[str], None]
ResetCallback = Callable[[], None]
"""Called when every fragment delivered so far is taken back (a failed attempt, before a retry)."""


class Provider(ABC):
    """An async model backend. `complete` streams when `on_delta` is given; `on_reset()` retracts
    every fragment delivered so far (the attempt that sent them failed)."""

    name: str = "provider"
    model: str | None = None
    max_concurrency: int | None = None
    """At most this many calls at once to this provider's server (`promptdesk.core.providers.concurrency`); None: no limit."""
    on_notice: Callable[[str], None] | None = None
    """Told, once, of what the operator should know about the server (a stream cut by another request)."""
    protocol: Literal["tags", "json"] = "tags"
    """How actors on this provider answer (`ProviderSpec.protocol`, resolved when it is built)."""

    @abstractmethod
    async def complete(self, request: Request, on_delta: DeltaCallback | None = None,
                       on_reset: ResetCallback | None = None) -> Completion:
        """Send one request; call `on_delta(fragment)` as text arrives when streaming."""

    def as_sent(self, request: Request) -> Request:
        """The request as the model will receive it (what `prompts.jsonl` records). Default: as is;
        a backend that adds text of its own (Claude Code's fixed system line) says so here."""
        return request

    def prepare(self) -> None:
        """Do the slow, blocking set-up (importing an SDK, building its client) now, so that no call
        has to. Called once before the first beat, in a worker thread. Default: nothing to do."""

    @property
    def sends_ahead(self) -> bool:
        """Whether `open_early` sends anything (a turn's request opened before it is asked)."""
        return False

    def open_early(self, request: Request) -> None:
        """Send ahead what is known of `request.to`'s next turn: `request` holds the messages it will
        start with (`promptdesk.core.providers.early`). Default: nothing is sent before it is asked."""

    async def drop_early(self) -> None:
        """Abandon what `open_early` sent that no turn took (the scene is over). Default: nothing sent."""

    async def aclose(self) -> None:
        """Release connections. Default: nothing to release."""
