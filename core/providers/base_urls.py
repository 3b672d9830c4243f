"""A provider's base URL: its form, checked before any call, and what a 404 suggests about it.

The OpenAI SDK posts to `<base URL>/chat/completions`, so an OpenAI-compatible server's base URL
ends in its API's prefix (`/v1` for Ollama, vLLM, llama.cpp, LM Studio; `/api/v1` for OpenRouter).
The Anthropic SDK posts to `<base URL>/v1/messages`: its base URL ends before `/v1`. A 404 from a
base URL that breaks that rule names the URL to try instead.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from promptdesk.core.errors import InvalidConfig


def check_base_url(url: str, provider: str, source: str) -> None:
    """Refuse a base URL that is not `http(s)://host[:port][/path]` (InvalidConfig, exit 2), before any call."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
        problem = ("the scheme must be http or https" if parts.scheme not in ("http", "https") else
                   "it names no host" if not parts.hostname else
                   "it contains spaces" if any(c.isspace() for c in url) else
                   f"it carries a query ({'?' + parts.query[:60]}), which the SDK would paste before the endpoint's "
                   f"path" + (AZURE if _azure(parts.path) or "api-version" in parts.query else "")
                   if parts.query or "?" in url else None)
    except ValueError as exc:
        problem = str(exc)
    if problem:
        raise InvalidConfig(f"invalid base URL {url!r} for {provider} (from {source}): {problem}; "
                            f"expected e.g. http://localhost:11434/v1")


AZURE = (": for Azure OpenAI give its v1 API, which takes no api-version, https://<resource>.openai.azure.com/openai/v1 "
         "(the model is the deployment's name)")
"""What to give instead of an Azure OpenAI deployment's URL (`/openai/deployments/<name>?api-version=…`)."""


def _azure(path: str) -> bool:
    """Whether a base URL's path is an Azure OpenAI deployment's (`/openai/deployments/<name>`)."""
    return "/openai/deployments/" in path.rstrip("/") + "/"


def not_found_hint(provider: str, base_url: str | None) -> str:
    """What a 404 suggests about `base_url` ("" when its form looks right, or it is the default):
    an OpenAI-style base URL with no `/v1` at its end, an Anthropic one that ends in `/v1`."""
    if not base_url:
        return ""
    root = base_url.rstrip("/")
    endpoint = "/v1/messages" if provider == "anthropic" else "/chat/completions"
    if urlsplit(root).path.endswith(endpoint):
        return (f"; the base URL {base_url} already ends in {endpoint}, which the SDK adds itself: try "
                f"{root[:-len(endpoint)]}")
    path = urlsplit(root).path
    if provider != "anthropic" and _azure(path):
        return f"; the base URL {base_url} is an Azure OpenAI deployment's{AZURE}"
    if provider == "anthropic" and path.endswith("/v1"):
        return (f"; the base URL {base_url} ends in /v1, which the Anthropic SDK adds itself (it posts to "
                f"{root}/v1/messages): try {root[:-3]}")
    if provider != "anthropic" and not path.endswith("/v1"):
        return (f"; requests went to {root}/chat/completions: an OpenAI-compatible server (Ollama, vLLM, "
                f"llama.cpp, LM Studio) serves them under /v1, so the base URL is most likely {root}/v1")
    return ""
