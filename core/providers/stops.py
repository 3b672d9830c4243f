"""How a reply ended, by the reason its server gave (OpenAI's `finish_reason`, Anthropic's
`stop_reason`), and what that makes of the reply.

- At the token limit (`length`, `max_tokens`): an answer, said to be cut (`Stream.truncated`).
- Stopped by the server's content filter (`content_filter`, Azure's and OpenAI's): a failed call,
  not retried; the part delivered is never taken for the whole.
- Ended in error (`error`, OpenRouter's when the upstream provider fails mid-answer): a failed call,
  retried like a cut stream.
- Stopped when the context window was full (Anthropic's `model_context_window_exceeded`): a failed
  call, not retried (the same request would fill it again), naming what to shorten.
- Refused (Anthropic's `refusal`, a safety classifier stopping the reply): the model's answer is a
  refusal, as OpenAI's `refusal` is: the text delivered goes to `Stream.refusal` (debug.log only),
  is taken back from the console, and the reply's text is empty.
- Asked to call a tool (OpenAI's `tool_calls` and older `function_call`, Anthropic's `tool_use`
  when the request forced no tool of ours): Promptdesk offers none, so the call is never read; the
  reply is whatever text came with it (usually none), and the reason goes to
  `Stream.unoffered_tool`, so the turn can say why it holds no answer.
Any other reason (`stop`, `end_turn`, `stop_sequence`...) leaves the reply as it is.
"""

from __future__ import annotations

from typing import Any

from promptdesk.core.errors import ProviderError

TRUNCATED = frozenset({"length", "max_tokens"})
REFUSED = frozenset({"refusal"})
TOOL_CALLS = frozenset({"tool_calls", "function_call", "tool_use"})


def failed_stop(provider: str, reason: str | None, field: str) -> ProviderError | None:
    """The failure a stop reason means, or None when the reply stands (`field` names where the
    server said it: `finish_reason` or `stop_reason`). Its context holds `stop_reason`: the server
    ended the reply, nothing cut the stream."""
    if reason == "content_filter":
        return ProviderError(f"{provider}: the server's content filter stopped the reply ({field}: content_filter); "
                             "the part it let through is not used as the answer", status=None, retryable=False,
                             stop_reason=reason)
    if reason == "error":
        return ProviderError(f"{provider}: the server ended the reply in error ({field}: error; an upstream "
                             "provider failed mid-answer): the answer may be cut short", status=None, retryable=True,
                             stop_reason=reason)
    if reason == "model_context_window_exceeded":
        return ProviderError(f"{provider}: the reply stopped when the model's context window was full ({field}: "
                             "model_context_window_exceeded): shorten what each request carries (a smaller "
                             "limits.window, a shorter briefing)", status=None, retryable=False,
                             stop_reason=reason)
    return None


def outcome(provider: str, reason: str | None, field: str, text: str) -> tuple[str, bool, str | None]:
    """(the reply's text, whether it stopped at its token limit, the refusal's words or None) for a
    reply that ended with `reason`; raises the failure the reason means."""
    if (failure := failed_stop(provider, reason, field)) is not None:
        raise failure
    if reason not in REFUSED:
        return text, reason in TRUNCATED, None
    return "", False, text.strip() or f"(no words: the reply ended with {field}: {reason})"


def settle(provider: str, reason: str | None, field: str, stream: Any, text: str, *, tool_offered: bool = False) -> str:
    """Apply the stop `reason` to `stream` and return the reply's text (`outcome`): sets
    `truncated`, and `unoffered_tool` for a tool call when no tool was offered (`tool_offered`:
    the request forced a tool of ours, whose input is the answer); a refusal's words go to
    `stream.refusal`, taken back from the listener."""
    text, truncated, refusal = outcome(provider, reason, field, text)
    stream.truncated = stream.truncated or truncated
    if reason in TOOL_CALLS and not tool_offered:
        stream.unoffered_tool = reason
    if refusal is not None:
        stream.retract()
        stream.refusal.append(refusal)
    return text
