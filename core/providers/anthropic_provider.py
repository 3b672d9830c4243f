"""Claude through the Anthropic Messages API (`AsyncAnthropic`, imported on first use).

When the request asks for a cached prefix, cache breakpoints (`cache_control: ephemeral`) mark
the system prompt (the briefing) and the end of what the next request will re-send: the newest
update's kept part, in a text block of its own (see `trailing_breakpoints`); the trailing marks
move every turn. A prefix
shorter than the model's minimum (`min_cacheable_tokens`) is not cached by the API: debug.log says
so once per actor. Usage maps `cache_creation_input_tokens` to cache writes and
`cache_read_input_tokens` to cache reads. Streaming uses raw `create(stream=True)` events; a stream
is complete only once `message_stop` came (an event sent without its `event:` line is named by its
data's `type`: `_client_class`). The `message_start` usage (input and cache tokens, billed
from then on) is noted at once, so a stream cut later still counts it (`promptdesk.core.providers.remote`).
Errors: HTTP statuses, an `event: error` inside the stream (an `APIStatusError` with status 200,
mapped to the status its error type implies), and raw `httpx2` transport errors on a stalled or
dropped stream all become `ProviderError`s the shared retry loop understands.
How the reply ended is read from its `stop_reason` (`promptdesk.core.providers.stops`: `refusal` is a
refusal, `model_context_window_exceeded` a failed call); thinking and redacted_thinking blocks are
never text; a JSON `message` sent for a streamed request is taken whole.
A request with a JSON schema (`Request.json_schema`) forces one tool (`ANSWER_TOOL`) whose input
schema it is: the answer is that tool's input, as JSON text (streamed as its `input_json_delta`
fragments); any text block beside it is not part of the answer.
A turn's request sent ahead (`send_ahead`: `promptdesk.core.providers.early`) is opened with the thread
marked as the turn's request will mark it (`_begun`), and its body is written by Promptdesk
(`promptdesk.core.providers.wire`) and posted through the SDK's `post`, its events read as `create`'s.
"""

from __future__ import annotations

import json
from typing import Any

from promptdesk.core.errors import ProviderError
from promptdesk.core.providers.base import ChatMessage, Request, Usage
from promptdesk.core.providers.remote import ERROR_TYPE_STATUS, RemoteProvider, Stream, error_detail, log
from promptdesk.core.providers.stops import settle

DEFAULT_BASE_URL = "https://api.anthropic.com"
ANSWER_TOOL = "answer"
"""The one tool a request with a JSON schema forces: its input is the answer (the text is ignored)."""
EPHEMERAL = {"type": "ephemeral"}

MIN_CACHEABLE_TOKENS = (("claude-opus-4-5", 4096), ("claude-opus-4-6", 4096), ("claude-haiku-4", 4096),
                        ("claude-3-5-haiku", 2048), ("claude-3-haiku", 2048), ("claude-haiku", 4096))
"""The shortest prefix the API caches, by model-name prefix (first match); 1024 for every other
model (Sonnet 3.7 to 4.6, Opus 4 and 4.1). From Anthropic's prompt-caching documentation."""


def min_cacheable_tokens(model: str | None) -> int:
    """The shortest prompt prefix, in tokens, that the API caches for `model`."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    return next((tokens for prefix, tokens in MIN_CACHEABLE_TOKENS if name.startswith(prefix)), 1024)


def estimate_tokens(text: str) -> int:
    """About four characters a token: enough to tell a prefix far from the minimum."""
    return -(-len(text) // 4)


def trailing_breakpoints(request: Request) -> list[int]:
    """The messages that carry a cache breakpoint besides the system prompt (at most 3 of the API's 4).

    An actor's thread (isolation b) re-sends every message of its previous request, the newest
    update as far as the thread keeps it (`Request.thread_kept`: what happened, without the last
    private thought, the beat heading and the ask, which follow it). So when the last message says
    where its kept part ends (`kept_part`), that part is marked, where the next request will read
    from; the previous user message, marked there by the previous request, reads what it wrote; and
    the last assistant message is marked too, so that a correction's request (whose last assistant
    message is the answer it corrects) still reads it. Otherwise the last two assistant messages,
    newest last, and the last user message when no assistant message follows the briefing yet.
    A window drop changes the thread from its first message on: the first request after it writes
    the kept thread anew, and the next ones read it again."""
    replies = [i for i, m in enumerate(request.messages) if m.role == "assistant"]
    users = [i for i, m in enumerate(request.messages) if m.role == "user"]
    if kept_part(request) is not None:
        return sorted({*users[-2:-1], *replies[-1:]})
    return replies[-2:] if replies else users[-1:]


def kept_part(request: Request) -> int | None:
    """Where the last message's kept part ends, when it is a user message whose kept part and rest
    both hold text (`Request.thread_kept`); None otherwise."""
    kept, last = request.thread_kept, request.messages[-1] if request.messages else None
    if not kept or last is None or last.role != "user" or not last.content[:kept].strip() or not last.content[kept:].strip():
        return None
    return kept


class AnthropicProvider(RemoteProvider):
    """Anthropic Messages API; key from `api_key` or ANTHROPIC_API_KEY, base URL from ANTHROPIC_BASE_URL."""

    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    finish_marker = "message_stop"
    default_url = DEFAULT_BASE_URL

    def __init__(self, model: str | None, api_key: str | None = None, base_url: str | None = None,
                 send_ahead: bool = False, **options: Any) -> None:
        super().__init__(model, api_key, base_url, send_ahead=send_ahead, **options)
        self._prefix_checked: set[str] = set()
        """The actors whose cached prefix was checked against the minimum (once each)."""
        self._under: dict[str, tuple[int, int]] = {}
        """Actors whose prefix is still under the minimum: (its largest estimate, its last message count),
        watched until it reaches the minimum or a window drop shows it never will."""

    def _build_client(self, http_client: Any = None) -> Any:
        return _client_class()(api_key=self._api_key, base_url=self.base_url or DEFAULT_BASE_URL,
                              timeout=self.timeout_s, max_retries=0, http_client=http_client)

    def _http_client_class(self) -> type | None:
        import anthropic

        return getattr(anthropic, "DefaultAsyncHttpxClient", None)

    def params(self, request: Request) -> dict[str, Any]:
        """The Messages API arguments for `request`.

        `temperature` is not sent: this API version (SDK 2.x) no longer takes sampling parameters.
        """
        messages: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in request.messages]
        params: dict[str, Any] = {"model": self.model, "max_tokens": request.max_tokens, "messages": messages}
        if request.system:
            block: dict[str, Any] = {"type": "text", "text": request.system}
            if request.cache_prefix:
                block["cache_control"] = EPHEMERAL
            params["system"] = [block]
        if request.cache_prefix:
            self._note_short_prefix(request)
            for index in trailing_breakpoints(request):
                messages[index]["content"] = [{"type": "text", "text": messages[index]["content"],
                                               "cache_control": EPHEMERAL}]
            if (kept := kept_part(request)) is not None:
                text = messages[-1]["content"]
                messages[-1]["content"] = [{"type": "text", "text": text[:kept], "cache_control": EPHEMERAL},
                                           {"type": "text", "text": text[kept:]}]
        if request.json_schema is not None:
            params["tools"] = [{"name": ANSWER_TOOL, "description": "Give your whole answer through this tool.",
                                "input_schema": request.json_schema}]
            params["tool_choice"] = {"type": "tool", "name": ANSWER_TOOL}
        return params

    def _note_short_prefix(self, request: Request) -> None:
        """Say in debug.log, once per actor, that its cached prefix is too short for the API to cache; and once
        more if its thread's window then drops old turns before the prefix ever reached the minimum."""
        first = request.to not in self._prefix_checked
        if not first and request.to not in self._under:
            return
        minimum = min_cacheable_tokens(self.model)
        kept, last = kept_part(request), request.messages[-1:]
        tokens = estimate_tokens(request.system) + sum(estimate_tokens(m.content) for m in request.messages[:-1]) + \
            sum(estimate_tokens(m.content[:kept] if kept else m.content) for m in last)
        self._prefix_checked.add(request.to)
        largest, count = self._under.pop(request.to, (0, 0))
        if tokens >= minimum:
            return
        if first:
            log.warning("%s: the cacheable prefix (about %d tokens) is under %s's minimum of %d tokens, so the API "
                        "caches nothing for it until the conversation grows past that", request.to, tokens,
                        self.model, minimum)
        elif len(request.messages) < count:  # the thread's window dropped old turns before the minimum
            log.warning("%s: its thread's window dropped old turns while its prefix (at most about %d tokens) was "
                        "still under %s's minimum of %d tokens, so the API caches nothing for it in this scene; "
                        "a larger window (`limits.window`, or a collaboration's `window_tokens`) lets it grow past that",
                        request.to, largest, self.model, minimum)
            return
        self._under[request.to] = (max(largest, tokens), len(request.messages))

    async def _plain(self, client: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        raw = await client.messages.with_raw_response.create(**self.params(request))
        self.saw_headers(raw.headers)
        return self._read_whole(await self._answer_body(raw, _holds_content), request, stream)

    def _read_whole(self, message: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        """The text (or the answer tool's input, as JSON) and usage of a whole `Message`, its stop
        reason applied (`promptdesk.core.providers.stops`); thinking blocks are never text."""
        usage = stream.observed = _usage(getattr(message, "usage", None))  # billed, even when the reply fails
        if request.json_schema is not None:
            inputs = [block.input for block in message.content if getattr(block, "type", "") == "tool_use"]
            text = json.dumps(inputs[0], ensure_ascii=False) if inputs else ""
        else:
            text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
        return settle(self.name, getattr(message, "stop_reason", None), "stop_reason", stream, text,
                      tool_offered=request.json_schema is not None), usage

    def _whole_instead(self, body: dict[str, Any]) -> Any:
        """A JSON body sent for a streamed request, as a `Message` when it holds a finished answer."""
        from anthropic.types import Message

        message = Message.construct(**body)
        return message if body.get("type") == "message" and _holds_content(message) and message.stop_reason else None

    def _begun(self, request: Request) -> dict[str, Any]:
        """The arguments a turn's request begins with: `request`'s thread as the turn's request will
        mark it for the cache, an update after it kept in part as every turn's is (so its previous
        update and last reply carry the marks: `trailing_breakpoints`)."""
        update = ChatMessage(role="user", content="-\n\n-")
        params = self.params(request.model_copy(update={"messages": [*request.messages, update], "thread_kept": 1}))
        return {**params, "messages": params["messages"][:-1]}

    def _streamed_post(self, client: Any) -> Any:
        from anthropic import AsyncStream
        from anthropic.types import Message, RawMessageStreamEvent

        return lambda content: client.post("/v1/messages", content=content, cast_to=Message, stream=True,
                                           stream_cls=AsyncStream[RawMessageStreamEvent])

    async def _stream(self, client: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        usage = Usage(reported=False)
        wanted = "text_delta" if request.json_schema is None else "input_json_delta"
        params = self.params(request)
        early = self.early.take(request.to) if request.purpose == "turn" else None
        events = await self.early.send(early, params, self._encoded.setdefault(request.to, {}) if request.to else {},
                                       lambda: client.messages.create(**params, stream=True), self.base_url or DEFAULT_BASE_URL)
        self.saw_headers(events.response.headers)
        if (whole := await self._expect_events(events.response, self._whole_instead)) is not None:
            await events.close()
            return stream.whole(*self._read_whole(whole, request, stream))
        stop = None
        async with events:
            async for event in events:
                if event.type == "message_start":
                    usage = stream.observed = _usage(getattr(event.message, "usage", None))
                elif event.type == "content_block_delta" and getattr(event.delta, "type", "") == wanted:
                    stream.emit(event.delta.text if wanted == "text_delta" else event.delta.partial_json)
                elif event.type == "message_delta":
                    stop = stream.ended_with = getattr(event.delta, "stop_reason", None) or stop
                    if event.usage is not None:
                        usage = stream.observed = _usage(event.usage, usage)
                elif event.type == "message_stop":
                    stream.finished = True
        return settle(self.name, stop, "stop_reason", stream, "".join(stream.pieces),
                      tool_offered=request.json_schema is not None), usage

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


def _client_class() -> type:
    """`AsyncAnthropic`, with an SSE decoder that names an event by its data's `type` when the server
    wrote no `event:` line (some Anthropic-compatible gateways send `data:` lines alone): the SDK
    skips every unnamed event, so such a stream read as one without its `message_stop`."""
    global _CLIENT
    if _CLIENT is None:
        from anthropic import AsyncAnthropic
        from anthropic._streaming import ServerSentEvent, SSEDecoder

        class NamingDecoder(SSEDecoder):
            async def aiter_bytes(self, iterator):  # type: ignore[no-untyped-def]
                async for sse in super().aiter_bytes(iterator):
                    if sse.event is None and sse.data.lstrip().startswith("{"):
                        try:
                            kind = json.loads(sse.data).get("type")
                        except (ValueError, AttributeError):
                            kind = None
                        if isinstance(kind, str) and kind:
                            sse = ServerSentEvent(event=kind, data=sse.data, id=sse.id, retry=sse.retry)
                    yield sse

        class Client(AsyncAnthropic):
            def _make_sse_decoder(self) -> NamingDecoder:
                return NamingDecoder()

        _CLIENT = Client
    return _CLIENT


_CLIENT: type | None = None


def _holds_content(body: Any) -> bool:
    """Whether a Messages body holds an answer: a `content` list (an error object does not)."""
    return isinstance(getattr(body, "content", None), list)


def _usage(raw: Any, base: Usage | None = None) -> Usage:
    """Usage from an SDK usage object; fields it leaves unset keep their value from `base`. Unknown
    (`reported` False) until some usage gives `input_tokens` (a compatible server that sends no
    usage, or every count null, reports nothing, not zero)."""
    reported = getattr(raw, "input_tokens", None) is not None or (base is not None and base.reported)
    base = base or Usage()

    def pick(field: str, current: int) -> int:
        value = getattr(raw, field, None)
        return current if value is None else int(value)

    return Usage(input_tokens=pick("input_tokens", base.input_tokens),
                 output_tokens=pick("output_tokens", base.output_tokens),
                 cache_write_tokens=pick("cache_creation_input_tokens", base.cache_write_tokens),
                 cache_read_tokens=pick("cache_read_input_tokens", base.cache_read_tokens), reported=reported)
