"""Usage as Chat Completions servers report it (`promptdesk.core.providers.openai_provider`).

`prompt_tokens` minus cached (and reported cache-write) tokens is input, `completion_tokens` output,
`prompt_tokens_details.cached_tokens` (DeepSeek: `prompt_cache_hit_tokens`) cache reads; a stream's
usage may come in a field of the server's own (Groq's `x_groq.usage`) instead of `usage`.
"""

from __future__ import annotations

from typing import Any

from promptdesk.core.providers.base import Usage


def extra_usage(chunk: Any) -> Any:
    """Usage a server sends in a field of its own instead of `usage` (Groq's `x_groq.usage`, on the last
    chunk), else None."""
    extra = getattr(chunk, "x_groq", None)
    return extra.get("usage") if isinstance(extra, dict) and isinstance(extra.get("usage"), dict) else None


def _field(raw: Any, name: str) -> Any:
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def _count(value: Any) -> int:
    return 0 if value is None else int(value)  # a count that is no number fails the call, never counts as 0


def usage_of(raw: Any) -> Usage:
    """Usage from an SDK usage object (or its JSON); unknown (`reported` False) when it is absent or counts
    nothing (a server that sends `usage` with every count null). Cached prompt tokens are read from
    `prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens`."""
    if raw is None or (_field(raw, "prompt_tokens") is None and _field(raw, "completion_tokens") is None):
        return Usage(reported=False)
    details = _field(raw, "prompt_tokens_details")
    cached = _count(_field(details, "cached_tokens") if details is not None else None) \
        or _count(_field(raw, "prompt_cache_hit_tokens"))
    written = _count(_field(details, "cache_write_tokens") if details is not None else None)
    prompt = _count(_field(raw, "prompt_tokens"))
    return Usage(input_tokens=max(0, prompt - cached - written), output_tokens=_count(_field(raw, "completion_tokens")),
                 cache_write_tokens=written, cache_read_tokens=cached)
