"""Claude through the Anthropic Messages API (`AsyncAnthropic`, imported on first use).

The system prompt goes as one text block, marked `cache_control: ephemeral` when the request asks
for a cached prefix. Usage maps `cache_creation_input_tokens` to cache writes and
`cache_read_input_tokens` to cache reads. Streaming uses raw `create(stream=True)` events; a stream is complete only once `message_stop` came.
Errors: HTTP statuses, an `event: error` inside the stream (an `APIStatusError` with status 200,
mapped to the status its error type implies), and raw `httpx2` transport errors on a stalled or
dropped stream all become `ProviderError`s the shared retry loop understands.
"""

from __future__ import annotations

from typing import Any

from core.errors import ProviderError
from core.providers.base import Request, Usage
from core.providers.remote import ERROR_TYPE_STATUS, RemoteProvider, Stream, error_detail

DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicProvider(RemoteProvider):
    """Anthropic Messages API; key from `api_key` or ANTHROPIC_API_KEY, base URL from ANTHROPIC_BASE_URL."""

    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    finish_marker = "message_stop"

    def _build_client(self) -> Any:
        from anthropic import AsyncAnthropic

        return AsyncAnthropic(api_key=self._api_key, base_url=self.base_url or DEFAULT_BASE_URL,
                              timeout=self.timeout_s, max_retries=0)

    def params(self, request: Request) -> dict[str, Any]:
        """The Messages API arguments for `request`.

        `temperature` is not sent: this API version (SDK 2.x) no longer takes sampling parameters.
        """
        params: dict[str, Any] = {
            "model": self.model, "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if request.system:
            block: dict[str, Any] = {"type": "text", "text": request.system}
            if request.cache_prefix:
                block["cache_control"] = {"type": "ephemeral"}
            params["system"] = [block]
        if request.json_schema is not None:
            params["output_config"] = {"format": {"type": "json_schema", "schema": request.json_schema}}
        return params

    async def _plain(self, client: Any, request: Request) -> tuple[str, Usage]:
        message = await client.messages.create(**self.params(request))
        text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
        return text, _usage(message.usage)

    async def _stream(self, client: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        usage = Usage()
        events = await client.messages.create(**self.params(request), stream=True)
        async with events:
            async for event in events:
                if event.type == "message_start":
                    usage = _usage(event.message.usage)
                elif event.type == "content_block_delta" and getattr(event.delta, "type", "") == "text_delta":
                    stream.emit(event.delta.text)
                elif event.type == "message_delta" and event.usage is not None:
                    usage = _usage(event.usage, usage)
                elif event.type == "message_stop":
                    stream.finished = True
        return "".join(stream.pieces), usage

    def _translate(self, exc: Exception) -> ProviderError | None:
        import anthropic
        import httpx2

        if isinstance(exc, anthropic.APIStatusError):
            kind, detail = error_detail(exc.body, str(exc))
            status = exc.status_code
            if status == 200:  # an `event: error` inside a stream
                status = ERROR_TYPE_STATUS.get(kind or "", 500)
                detail = f"error event in stream: {detail}"
            return self._status_error(status, detail, exc.response.headers,
                                      request_id=getattr(exc, "request_id", None))
        if isinstance(exc, (anthropic.APIConnectionError, httpx2.TransportError)):
            return self._transport_error(exc)
        if isinstance(exc, anthropic.APIResponseValidationError):
            return self._status_error(exc.status_code, "the response did not match the API schema")
        return None


def _usage(raw: Any, base: Usage | None = None) -> Usage:
    """Usage from an SDK usage object; fields it leaves unset keep their value from `base`."""
    base = base or Usage()

    def pick(field: str, current: int) -> int:
        value = getattr(raw, field, None)
        return current if value is None else int(value)

    return Usage(input_tokens=pick("input_tokens", base.input_tokens),
                 output_tokens=pick("output_tokens", base.output_tokens),
                 cache_write_tokens=pick("cache_creation_input_tokens", base.cache_write_tokens),
                 cache_read_tokens=pick("cache_read_input_tokens", base.cache_read_tokens))
