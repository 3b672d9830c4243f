"""Build a remote provider from a provider spec, importing only the backend it names.

Importing this module imports no SDK: each backend module is imported inside `make_remote`,
and the SDKs themselves only when a real provider builds its client.
"""

from __future__ import annotations

from typing import Any

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.providers.base import Provider
from promptdesk.core.providers.names import PROVIDER_NAMES



def make_remote(spec: Any, *, sleep: Any = None) -> Provider:
    """The remote provider `spec` names (`name`, `model`, `base_url`, `timeout_s`, `max_retries`,
    `retry_after_cap_s`, `max_concurrency`, `journal_timeout_s` (not claude-code's), `send_ahead`
    (openai's and openai-compatible's only); missing attributes
    take their defaults). The offline improviser is not
    built here: it is the improviser's (`promptdesk.core.improv.provider`), and `promptdesk.core.casting.pool` builds both.

    `sleep` replaces `asyncio.sleep` for retry waits (tests). Raises InvalidConfig for an unknown
    name or a missing model/base URL, ProviderError when a required API key is not set.
    """
    name = getattr(spec, "name", None) or "offline"
    if name not in PROVIDER_NAMES or name == "offline":
        raise InvalidConfig(f"unknown provider {name!r}; valid providers: {', '.join(PROVIDER_NAMES)}")
    options: dict[str, Any] = {
        "timeout_s": getattr(spec, "timeout_s", 60.0), "max_retries": getattr(spec, "max_retries", 3),
        "retry_after_cap_s": getattr(spec, "retry_after_cap_s", 30.0),
        "max_concurrency": getattr(spec, "max_concurrency", None),
        "journal_timeout_s": getattr(spec, "journal_timeout_s", None),
    }
    if sleep is not None:
        options["sleep"] = sleep
    model, base_url = getattr(spec, "model", None), getattr(spec, "base_url", None)
    if name == "claude-code":
        from promptdesk.core.providers.claude_code import ClaudeCodeProvider

        limit = options.pop("max_concurrency")
        options.pop("journal_timeout_s")
        provider = ClaudeCodeProvider(model, base_url=base_url, max_processes=getattr(spec, "max_processes", 4),
                                      first_byte_timeout_s=getattr(spec, "first_byte_timeout_s", 20.0),
                                      thinking_tokens=getattr(spec, "thinking_tokens", None),
                                      effort=getattr(spec, "effort", None), **options)
        provider.max_concurrency = limit
        return provider
    if name == "anthropic":
        from promptdesk.core.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(model, base_url=base_url, send_ahead=bool(getattr(spec, "send_ahead", False)), **options)
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    return OpenAIProvider(model, base_url=base_url, compatible=name == "openai-compatible",
                          schema_format=getattr(spec, "schema_format", "json_schema"),
                          send_ahead=bool(getattr(spec, "send_ahead", False)), **options)
