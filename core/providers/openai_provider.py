"""OpenAI and any OpenAI-compatible server through Chat Completions (`AsyncOpenAI`, imported on first use).

`openai`: key from `api_key` or OPENAI_API_KEY (required), base URL from `base_url` or
OPENAI_BASE_URL; sends `prompt_cache_key` and `max_completion_tokens`.
`openai-compatible` (Ollama, vLLM, llama.cpp, LM Studio...): `base_url` required, key optional, from
OPENAI_COMPATIBLE_API_KEY ("not-needed" when absent; OpenAI's own key is never sent to another
server), `max_tokens`, no `prompt_cache_key`.
A JSON schema (`Request.json_schema`) goes as a strict `response_format` of type `json_schema`, or for
a compatible server with `schema_format="json_object"` as `{"type": "json_object", "schema": ...}`
(the only form llama-cpp-python's server takes).
A stream asks for its usage (`stream_options`) unless the server refused that argument once
(`_open_stream`). A stream is complete once its `finish_reason` came and the body ended (a server that
sends no `[DONE]`: text-generation-webui), or with its `[DONE]` (see `_client_class`) when text came but no
`finish_reason` (a server that leaves it null), how it ended unknown (each said once in debug.log); a
connection dropped mid-body is a failed call. A usage chunk
that arrived before the stream broke is still counted (`promptdesk.core.providers.remote`).
A response without usage (a local server that sends none) has unknown usage (`Usage.reported` False).
How the reply ended is read from its `finish_reason` (`promptdesk.core.providers.stops`); a `content`
sent as a list of parts is its text parts; reasoning sent apart (`reasoning_content`, `reasoning`) is
never read, only counted in debug.log; a JSON answer to a streamed request is taken whole.
Usage maps `prompt_tokens` minus cached (and reported cache-write) tokens to input,
`completion_tokens` to output, `prompt_tokens_details.cached_tokens` (DeepSeek: `prompt_cache_hit_tokens`)
to cache reads; a stream's usage may come in Groq's `x_groq.usage` instead of `usage`.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from promptdesk.core.errors import InvalidConfig, ProviderError
from promptdesk.core.protocol.sanitize import strip_controls
from promptdesk.core.providers.base import Request, Usage
from promptdesk.core.providers.bodies import error_status
from promptdesk.core.providers.chat_usage import extra_usage as _extra_usage, usage_of as _usage
from promptdesk.core.providers.remote import RemoteProvider, Stream, error_detail, log, redact
from promptdesk.core.providers.stops import settle
from promptdesk.core.providers.wire import wire_body

_OTHER_CAUSE = re.compile(r"context|maximum|too (long|large|many)|exceed", re.IGNORECASE)
"""Words by which a refused request names a cause other than its response_format."""

_OPENAI_ONLY = re.compile(r"prompt_cache_key|max_completion_tokens")
"""The arguments only OpenAI's own API takes, named by another server's refusal."""

NO_KEY = "not-needed"


class OpenAIProvider(RemoteProvider):
    """OpenAI Chat Completions, or a compatible server when `compatible=True`."""

    def __init__(self, model: str | None, api_key: str | None = None, base_url: str | None = None,
                 compatible: bool = False, schema_format: str = "json_schema", send_ahead: bool = False,
                 **options: Any) -> None:
        self.compatible = compatible
        self.schema_format = schema_format if compatible else "json_schema"
        self.name = "openai-compatible" if compatible else "openai"
        self.key_env = "OPENAI_COMPATIBLE_API_KEY" if compatible else "OPENAI_API_KEY"
        self.base_url_env = "" if compatible else "OPENAI_BASE_URL"
        self.key_required = not compatible
        if compatible and not base_url:
            raise InvalidConfig("the openai-compatible provider needs a base URL (--base-url or `base_url` in the "
                                "scene's provider), e.g. http://localhost:11434/v1 for Ollama")
        super().__init__(model, api_key, base_url, send_ahead=send_ahead, **options)
        self.stream_usage = True
        """Whether streams ask for their usage (`stream_options`); off once the server refused it."""
        self._said_no_finish = False  # whether debug.log was told of a stream ended without a finish_reason
        self._served: list[str] | None = None  # the model ids the server lists, once asked (`_served_models`)

    async def complete(self, request: Request, on_delta: Any = None, on_reset: Any = None) -> Any:
        """`RemoteProvider.complete`; a model the server does not know (a 404, or a 400 naming the
        model) fails naming the models the server lists (`_served_models`)."""
        try:
            return await super().complete(request, on_delta, on_reset)
        except ProviderError as exc:
            if not self.compatible and exc.status in (400, 422) and _OPENAI_ONLY.search(exc.message):
                raise ProviderError(f"{exc.message} — the openai provider sends arguments only OpenAI's API takes "
                                    f"(prompt_cache_key, max_completion_tokens): for another server give --provider "
                                    f"openai-compatible", status=exc.status, retryable=False, usage=exc.usage,
                                    **exc.context) from None
            if exc.status == 404 or (exc.status == 400 and "model" in exc.message.lower()):
                if (served := await self._served_models()) and self.model not in served:
                    shown = ", ".join(served[:15]) + (f" and {len(served) - 15} more" if len(served) > 15 else "")
                    raise ProviderError(f"{exc.message}; the server lists no model {self.model!r}: it serves {shown} "
                                        f"(give one of them as --model or `model:`)", status=exc.status,
                                        retryable=exc.retryable, usage=exc.usage, **exc.context) from None
            raise

    async def _served_models(self) -> list[str]:
        """The model ids the server lists (`GET /models`, asked once; a server without the list, or one
        that fails, gives none), each cleaned of control characters and cut to 80 characters."""
        if self._served is None:
            self._served = []
            try:
                page = await asyncio.wait_for(self.client.models.list(), timeout=min(self.timeout_s, 10.0))
                self._served = [redact(strip_controls(str(m.id)), self._api_key)[:80] for m in page.data[:500] if m.id]
            except Exception:  # noqa: BLE001 - the list only helps name the fix; the call's failure stands
                log.info("%s: the server at %s gave no model list", self.name, self.base_url or self.default_url)
        return self._served

    finish_marker = "a finish_reason, or [DONE]"
    default_url = "https://api.openai.com/v1"

    def _build_client(self, http_client: Any = None) -> Any:
        return _client_class()(api_key=self._api_key or NO_KEY, base_url=self.base_url or self.default_url,
                               timeout=self.timeout_s, max_retries=0, http_client=http_client)

    def _http_client_class(self) -> type | None:
        import openai

        return getattr(openai, "DefaultAsyncHttpxClient", None)

    def as_sent(self, request: Request) -> Request:
        """OpenAI's strict mode takes no `maxLength`: the schema goes without it (and is recorded so)."""
        if request.json_schema is None or self.compatible:
            return request
        return request.model_copy(update={"json_schema": _without_lengths(request.json_schema)})

    def params(self, request: Request) -> dict[str, Any]:
        """The Chat Completions arguments for `request`."""
        request = self.as_sent(request)
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        params["max_tokens" if self.compatible else "max_completion_tokens"] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.cache_key and not self.compatible:
            params["prompt_cache_key"] = request.cache_key
        if request.json_schema is not None and self.schema_format == "json_object":
            params["response_format"] = {"type": "json_object", "schema": request.json_schema}
        elif request.json_schema is not None:
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "envelope", "schema": request.json_schema, "strict": True}}
        return params

    async def _plain(self, client: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        try:
            raw = await client.chat.completions.with_raw_response.create(**untransformed(self.params(request)))
        except Exception as exc:  # noqa: BLE001 - a schema refusal is named, anything else goes on as it was
            raise self._schema_refused(exc, request) from None
        self.saw_headers(raw.headers)
        return self._read_whole(await self._answer_body(raw, _holds_a_message), stream)

    def _read_whole(self, response: Any, stream: Stream) -> tuple[str, Usage]:
        """The text and usage of a whole `ChatCompletion` (its finish reason applied, `stops`)."""
        choice = response.choices[0]
        self._note_reasoning(len(_reasoning_of(choice.message)), _text_of(choice.message.content), stream)
        if refusal := getattr(choice.message, "refusal", None):
            stream.refusal.append(refusal)
        usage = stream.observed = _usage(getattr(response, "usage", None))  # billed, even when the reply fails
        return settle(self.name, choice.finish_reason, "finish_reason", stream, _text_of(choice.message.content)), usage

    def _whole_instead(self, body: dict[str, Any]) -> Any:
        """A JSON body sent for a streamed request, as a `ChatCompletion` when it holds an answer."""
        response = _types()[0].construct(**body)
        return response if _holds_a_message(response) and response.choices[0].finish_reason else None

    async def _stream(self, client: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        usage = Usage(reported=False)
        chunks = await self._open_stream(client, request)
        self.saw_headers(chunks.response.headers)
        if (whole := await self._expect_events(chunks.response, self._whole_instead)) is not None:
            await chunks.close()
            return stream.whole(*self._read_whole(whole, stream))
        finish, reasoning = None, 0
        async with chunks:
            async for chunk in chunks:
                for choice in chunk.choices or ():
                    if getattr(choice, "index", 0) not in (0, None):
                        continue  # a server that answers more than the one choice asked for: the first is the answer
                    stream.emit(_text_of(choice.delta.content) if choice.delta else None)
                    reasoning += len(_reasoning_of(choice.delta))
                    finish = choice.finish_reason or finish
                    if refusal := getattr(choice.delta, "refusal", None):
                        stream.refusal.append(refusal)
                if (raw := chunk.usage or _extra_usage(chunk)) is not None:
                    usage = stream.observed = _usage(raw)
        done = getattr(getattr(chunks, "_decoder", None), "done", False)  # [DONE] with no text nor finish: no answer
        stream.finished = finish is not None or (done and any(piece.strip() for piece in stream.pieces))
        stream.ended_with = finish
        if stream.finished and (finish is None or not done) and not self._said_no_finish:
            self._said_no_finish = True
            log.warning("%s %s: the server ended a stream %s: the reply is taken as whole", self.name, self.model,
                        "with [DONE] but gave no finish_reason (how it ended, a token limit?, is unknown)" if finish
                        is None else f"after its finish_reason ({finish}) without [DONE], as text-generation-webui does")
        self._note_reasoning(reasoning, "".join(stream.pieces), stream)
        return settle(self.name, finish, "finish_reason", stream, "".join(stream.pieces)), usage

    async def _open_stream(self, client: Any, request: Request) -> Any:
        """Send the streamed request, asking for its usage (`stream_options`). A server that refuses
        that option (400 or 422 naming it: older Azure API versions, some gateways) is asked again
        without it, and so is every later stream of this provider (said once in debug.log): their
        usage is then unknown unless the server sends it anyway."""
        early = self.early.take(request.to) if request.purpose == "turn" else None
        while True:
            params = self.params(request)
            if self.stream_usage:
                params["stream_options"] = {"include_usage": True}
            try:
                known = self._encoded.setdefault(request.to, {}) if request.to else {}
                return await self.early.send(early, params, known, lambda: _post(client, wire_body(params, True, known)),
                                             self.base_url or self.default_url)
            except Exception as exc:  # noqa: BLE001 - a schema refusal is named, anything else goes on as it was
                early = None
                if "stream_options" not in params or not _refuses_stream_options(exc):
                    raise self._schema_refused(exc, request) from None
            if self.stream_usage:
                self.stream_usage = False
                log.warning("%s at %s refused stream_options: streams are asked without them from now on, and "
                            "their usage is unknown unless the server sends it anyway", self.name,
                            self.base_url or self.default_url)

    def _streamed_post(self, client: Any) -> Any:
        return lambda content: _post(client, content)

    def _note_reasoning(self, length: int, text: str, stream: Stream) -> None:
        """Say in debug.log how much reasoning the server sent apart from the reply (`reasoning_content`,
        `reasoning`: never read, never part of the reply), and when the reply itself was empty (`reasoning_only`)."""
        stream.reasoning_only = bool(length) and not text.strip()
        if length:
            log.warning("%s %s: the server sent %d characters of reasoning apart from the reply (reasoning_content "
                        "or reasoning): not part of the reply%s", self.name, self.model, length,
                        "" if text.strip() else ", whose text was empty (the reasoning may have taken every token "
                        "the reply may have: serve the model with its reasoning off)")

    def _schema_refused(self, exc: Exception, request: Request) -> Exception:
        """A refusal of the request's form (400 or 422) answering a request that carried a JSON schema
        names the setting to change (`--schema-format`, `schema_format:`, or, for an actor's turn, the tag
        protocol), unless it names another cause (the context window, the token limit); any other error
        is returned as it is."""
        import openai

        if request.json_schema is None or not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422):
            return exc
        error = self._translate(exc)
        if error is None or _OTHER_CAUSE.search(error.message):
            return exc
        other = "json_object" if self.schema_format == "json_schema" else "json_schema"
        how = (f"give --schema-format {other} (llama-cpp-python's server takes only json_object), or schema_format: "
               f"{other} in the scene's provider:" if self.compatible else "the model may not take structured output")
        tags = "; or answer in tags (--protocol tags)" if request.purpose == "turn" else ""  # the actors' way only
        return ProviderError(f"{error.message} — the request carried a JSON schema as response_format "
                             f"{self.schema_format}: {how}{tags}",
                             status=error.status, retryable=error.retryable, **error.context)

    def _translate(self, exc: Exception) -> ProviderError | None:
        import httpx2
        import openai

        if isinstance(exc, openai.APIStatusError):
            _, detail = error_detail(exc.body, str(exc))
            return self._status_error(exc.status_code, detail, exc.response.headers,
                                      request_id=getattr(exc, "request_id", None))
        if isinstance(exc, (openai.APIConnectionError, httpx2.TransportError)):
            return self._transport_error(exc)
        if isinstance(exc, openai.APIResponseValidationError):
            return self._status_error(exc.status_code, "the response did not match the API schema")
        if isinstance(exc, openai.APIError):  # an error object inside the stream
            kind, detail = error_detail(exc.body, str(exc))
            return self._status_error(error_status(kind, exc.body), f"error in stream: {detail}")
        return None


def _refuses_stream_options(exc: Exception) -> bool:
    """Whether `exc` is a server's refusal of the `stream_options` argument (400 or 422 naming it)."""
    import openai

    return isinstance(exc, openai.APIStatusError) and exc.status_code in (400, 422) and \
        "stream_options" in f"{exc.body} {exc.message}"


def _text_of(content: Any) -> str:
    """A message's or a delta's content as text: a string as it is; a list of parts (Mistral's
    reasoning models, some gateways) as its `text` parts joined, its `thinking` parts left out
    (private, as reasoning sent apart is); anything else, nothing."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text") or "" for part in content
                       if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str))
    return ""


def _reasoning_of(part: Any) -> str:
    """The reasoning a message or a delta carries apart from its content (vLLM's and llama.cpp's
    `reasoning_content`, Ollama's and OpenRouter's `reasoning`), "" when none."""
    value = getattr(part, "reasoning_content", None) or getattr(part, "reasoning", None)
    return value if isinstance(value, str) else ""


def _holds_a_message(body: Any) -> bool:
    """Whether a Chat Completions body holds an answer: a first choice with a `message` (a
    completions-shaped `text` choice, an error object or an empty `choices` does not)."""
    choices = getattr(body, "choices", None)
    return bool(choices) and getattr(choices[0], "message", None) is not None


async def _post(client: Any, content: Any) -> Any:
    """A streamed Chat Completions request with the body `content` (bytes, or chunks to stream)."""
    return await client.post("/chat/completions", content=content, cast_to=_types()[0], stream=True,
                             stream_cls=_types()[1])


def _types() -> tuple[type, type]:
    """`ChatCompletion` and `AsyncStream[ChatCompletionChunk]`, the types `post` parses into
    (the SDK's, imported on first use; the generic alias is built once)."""
    global _TYPES
    if _TYPES is None:
        from openai import AsyncStream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        _TYPES = (ChatCompletion, AsyncStream[ChatCompletionChunk])
    return _TYPES


_TYPES: tuple[type, type] | None = None


def untransformed(params: dict[str, Any]) -> dict[str, Any]:
    """`params` for `create`: the model as an argument, everything else as `extra_body`, which the
    SDK sends as it is.

    The SDK otherwise runs every argument through its type-directed transform (for aliases and
    formats), a recursive walk of every message of every request: for a thread of forty messages
    it costs more than the rest of sending the request, and a crowd's beat pays it once per actor
    before the last request can leave. The arguments here are plain JSON (strings, numbers, a
    schema), which that transform leaves as they are, so the body on the wire is the same (the SDK
    merges `extra_body` over its own arguments, each keeping its place)."""
    rest = {key: value for key, value in params.items() if key not in ("model", "messages")}
    return {"model": params["model"], "messages": [], "extra_body": {"messages": params["messages"], **rest}}


def _client_class() -> type:
    """`AsyncOpenAI`, with an SSE decoder that notes whether the stream's `[DONE]` arrived.

    The SDK ends a stream silently both at `[DONE]` and when the connection just closes; only the
    decoder (one per stream) sees the difference."""
    global _CLIENT
    if _CLIENT is None:
        from openai import AsyncOpenAI
        from openai._streaming import SSEDecoder

        class MarkedDecoder(SSEDecoder):
            done = False

            async def aiter_bytes(self, iterator):  # type: ignore[no-untyped-def]
                async for sse in super().aiter_bytes(iterator):
                    if sse.data.startswith("[DONE]"):
                        self.done = True
                    yield sse

        class Client(AsyncOpenAI):
            def _make_sse_decoder(self) -> MarkedDecoder:
                return MarkedDecoder()

        _CLIENT = Client
    return _CLIENT


_CLIENT: type | None = None


def _without_lengths(schema: Any) -> Any:
    """A JSON schema without its `maxLength`/`minLength` keywords, at every depth."""
    if isinstance(schema, dict):
        return {k: _without_lengths(v) for k, v in schema.items() if k not in ("maxLength", "minLength")}
    if isinstance(schema, list):
        return [_without_lengths(v) for v in schema]
    return schema

