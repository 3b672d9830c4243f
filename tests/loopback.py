"""A loopback HTTP server that speaks the Anthropic Messages and OpenAI Chat Completions APIs.

Tests drive the real SDKs against it: nothing is mocked above the HTTP boundary. Each request
takes the next scripted `Reply` from a queue (or the default reply when the queue is empty) and
is recorded (path, headers, parsed JSON body) for assertions.

Served paths: `POST /v1/messages` (Anthropic) and `POST /v1/chat/completions` or
`POST /chat/completions` (OpenAI, for base URLs that already end in `/v1`), and `GET /v1/models`
when `models` is set. Plain replies carry
a `Content-Length`; streamed replies (SSE) use chunked transfer encoding, so a stream cut short
(an error event, a stall, a dropped connection) is visible to the client as what it is.

Anthropic prompt caching is modelled the way the API bills it: a cached prefix ends at a
`cache_control` block (at most 4 per request); a prefix under the model's minimum (1024 tokens,
2048 for Haiku 3.x, 4096 for Haiku 4.5 and Opus 4.5/4.6) is not cached at all; a request reads
the longest of its breakpoint prefixes already cached (`cache_read_input_tokens`), writes the rest
up to its last breakpoint (`cache_creation_input_tokens`), and is billed `input_tokens` for what
follows. Tokens are counted as about four characters each. The cache is per server and model.

Import the `loopback` fixture from this module in a test module (`from loopback import loopback`).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["CANARY", "FakeSleep", "LoopbackServer", "Recorded", "Reply", "assert_no_leak", "loopback", "split_text"]

CANARY = "sk-canary-DO-NOT-LEAK-1234"
"""An API key that must never show up in an exception, a log line or any output."""


@dataclass
class Reply:
    """One scripted answer. `usage` entries are merged verbatim into the wire usage object."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    text: str = "Hello from the loopback."
    deltas: int = 3
    """How many text deltas a streamed reply is split into."""
    usage: dict[str, Any] = field(default_factory=dict)
    delay_s: float = 0.0
    """Wait before sending the status line (use it to provoke client timeouts)."""
    gap_s: float = 0.0
    """Wait between SSE events."""
    error_after_deltas: int | None = None
    """Streamed: send an error event after this many deltas, then end the stream."""
    stall_after_deltas: int | None = None
    """Streamed: after this many deltas stop sending and hold the connection (see `hold_s`)."""
    drop_after_deltas: int | None = None
    """Streamed: after this many deltas close the connection abruptly."""
    truncate_after_deltas: int | None = None
    """Streamed: after this many deltas end the stream cleanly, without its finish marker."""
    omit_marker: bool = False
    """Streamed: send everything (stop reason, usage) except the finish marker (`message_stop`, `[DONE]`),
    and end the body cleanly."""
    drop_at_marker: bool = False
    """Streamed: send everything (stop reason, usage) and close the connection abruptly where the
    finish marker would come (a connection dropped at the very end)."""
    hold_s: float = 2.0
    """How long a stall holds the connection at most (shutdown releases it earlier)."""
    error_type: str | None = None
    """The error `type` in error bodies and error events (defaults per status and API)."""
    error_message: str = "scripted failure"
    body: dict[str, Any] | None = None
    """A raw JSON body that replaces the generated one (plain replies only)."""
    no_usage: bool = False
    """OpenAI: send no usage at all (no usage chunk on a stream, no `usage` in a plain body), as
    llama.cpp's and many local servers' streams do."""
    cut_on_arrival: bool = False
    """Streamed: between events wait up to `gap_s` for another request; when one arrives, close the
    connection abruptly (llama-cpp-python's server does this unless started with --interrupt_requests False)."""
    raw: bytes | list[bytes] | None = None
    """Sent as it is with `status` and `content_type`, whatever the request asked for: bytes as a
    body with a `Content-Length`, a list as chunks of a chunked body (hand-written SSE frames, or a
    200 whose body is an error or an HTML page)."""
    content_type: str = "text/event-stream"
    """The `Content-Type` of a `raw` reply."""
    raw_drop: bool = False
    """A `raw` reply in chunks: close the connection after the last one, without the body's end (a dropped connection)."""
    at_limit: bool = False
    """The reply stopped at its token limit: Anthropic `stop_reason: max_tokens`, OpenAI
    `finish_reason: length` (plain and streamed)."""
    tool_call: str | None = None
    """The reply calls this tool, `text` its arguments (JSON), as a model does that calls a tool it was
    never offered: OpenAI `tool_calls` with no content (`finish_reason: tool_calls`), Anthropic a
    `tool_use` block (`stop_reason: tool_use`), plain and streamed."""


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    cache_usage: dict[str, int] | None = None
    """Anthropic requests that mark a cache breakpoint: the usage the cache semantics give."""
    size: int = 0
    """The body's length in bytes, however it was sent (sized, or in chunks)."""

    @property
    def api_key(self) -> str | None:
        """The key the client sent, as `x-api-key` or as a bearer token."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[len("Bearer "):] if auth.startswith("Bearer ") else None

    @property
    def api(self) -> str:
        return "anthropic" if self.path.endswith("/messages") else "openai"


ReplySource = Reply | Callable[[Recorded], Reply]


def split_text(text: str, n: int) -> list[str]:
    """`text` cut into at most `n` non-empty consecutive pieces that join back to it."""
    n = max(1, min(n, len(text))) if text else 1
    size, extra = divmod(len(text), n)
    pieces, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return [p for p in pieces if p] or [""]


class LoopbackServer:
    """A scripted, recording HTTP server on 127.0.0.1 (a context manager)."""

    def __init__(self, default: ReplySource | None = None) -> None:
        self.default: ReplySource = default or Reply()
        self.queue: deque[ReplySource] = deque()
        self.requests: list[Recorded] = []
        self.closing = threading.Event()
        self.cache: set[str] = set()
        """Anthropic: fingerprints of the prompt prefixes cached so far (see the module docstring)."""
        self._lock = threading.Lock()
        self.arrival = threading.Condition(self._lock)
        self.in_flight = self.most_in_flight = 0
        """Requests being answered now, and the most at once so far."""
        self.refuse_chunked = False
        """Answer every request whose body comes in chunks 411 Length Required (a server that takes none)."""
        self.opened = 0
        """Requests whose headers said their body comes in chunks (counted as the headers arrive)."""
        self.abandoned = 0
        """Requests whose connection closed before their body was whole (never answered, never in `requests`)."""
        self.models: list[str] | None = None
        """OpenAI: the model ids `GET /v1/models` lists (None: that path is a 404, as on a server without it)."""
        self.model_lists = 0
        """How many times the model list was asked for."""
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------
    def script(self, *replies: ReplySource) -> LoopbackServer:
        """Queue replies, served in order to the next requests."""
        with self._lock:
            self.queue.extend(replies)
        return self

    @property
    def hits(self) -> int:
        return len(self.requests)

    def opened_at_least(self, count: int, within_s: float = 5.0) -> int:
        """How many requests with a body in chunks have begun to arrive, once at least `count` have
        (or `within_s` passed): call it in a thread (`asyncio.to_thread`) while the client sends."""
        with self.arrival:
            self.arrival.wait_for(lambda: self.opened >= count, timeout=within_s)
            return self.opened

    def abandoned_at_least(self, count: int, within_s: float = 5.0) -> int:
        """How many requests were abandoned unfinished, once at least `count` were (or `within_s` passed:
        the server reads a closed connection in its own thread, a moment after the client closed it)."""
        with self.arrival:
            self.arrival.wait_for(lambda: self.abandoned >= count, timeout=within_s)
            return self.abandoned

    def url(self, suffix: str = "") -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{suffix}"

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> LoopbackServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="loopback", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)

    # -- used by the handler ---------------------------------------------------------------
    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            self.arrival.notify_all()
            source = self.queue.popleft() if self.queue else self.default
            if recorded.api == "anthropic" and isinstance(recorded.body, dict):
                recorded.cache_usage = anthropic_cache_usage(recorded.body, self.cache)
        return source(recorded) if callable(source) else source


class _Server(ThreadingHTTPServer):
    """The stdlib server with a listen backlog a crowd's beat fits in: at its default of 5, fifty actors'
    connections opened at once overflowed it, and each dropped one was only retried by the client's TCP
    stack a second later (then three), so a crowd's calls took seconds however their replies were scripted."""

    request_queue_size = 256


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the stdlib's per-request stderr log."""

    @property
    def owner(self) -> LoopbackServer:
        return self.server.owner  # type: ignore[attr-defined]

    def _body(self) -> bytes | None:
        """The request's body: sized, or sent in chunks (a request opened ahead of its turn); None when
        the connection closed before the body was whole (a request abandoned: no server acts on it)."""
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""
        parts = []
        while (line := self.rfile.readline()).strip():
            size = int(line.split(b";")[0], 16)
            if size == 0:
                self.rfile.readline()  # the blank line that ends a chunked body (no trailers)
                return b"".join(parts)
            data = self.rfile.read(size + 2)
            if len(data) < size + 2:
                break
            parts.append(data[:size])
        return None

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """`GET /v1/models` (or `/models`): the scripted model list, as Ollama, vLLM and LM Studio serve it."""
        path = self.path.split("?", 1)[0]
        with self.owner._lock:
            self.owner.model_lists += path.endswith("/models")
        if not path.endswith("/models") or self.owner.models is None:
            self._send_json(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
            return
        self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "me"}
                                                         for m in self.owner.models]})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        chunked = "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()
        if chunked:
            with self.owner._lock:
                self.owner.opened += 1
                self.owner.arrival.notify_all()
        raw = self._body()
        if chunked and self.owner.refuse_chunked and raw is not None:
            self._send_json(411, {"error": {"type": "invalid_request_error", "message": "Length Required"}})
            return
        if raw is None:
            with self.owner._lock:
                self.owner.abandoned += 1
                self.owner.arrival.notify_all()
            self.close_connection = True
            return
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?", 1)[0]
        recorded = Recorded("POST", path, {k.lower(): v for k, v in self.headers.items()}, body, size=len(raw))
        if not (path.endswith("/messages") or path.endswith("/chat/completions")):
            self._send_json(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
            return
        reply = self.owner._next(recorded)
        with self.owner._lock:
            self.owner.in_flight += 1
            self.owner.most_in_flight = max(self.owner.most_in_flight, self.owner.in_flight)
        try:
            if reply.delay_s and self.owner.closing.wait(reply.delay_s):
                return
            if reply.raw is not None:
                self._send_raw(reply)
            elif reply.status != 200:
                self._send_json(reply.status, reply.body or _error_body(recorded.api, reply), reply.headers)
            elif isinstance(body, dict) and body.get("stream"):
                self._stream(recorded, reply)
            else:
                self._send_json(200, reply.body or _plain_body(recorded, reply), reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            with self.owner._lock:
                self.owner.in_flight -= 1

    # -- writing ---------------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_raw(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if isinstance(reply.raw, bytes):
            self.send_header("Content-Length", str(len(reply.raw)))
            self.end_headers()
            self.wfile.write(reply.raw)
            self.wfile.flush()
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for frame in reply.raw or ():
            self._chunk(frame)
        if reply.raw_drop:
            self.close_connection = True
            return
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, recorded: Recorded, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        frames = _anthropic_frames if recorded.api == "anthropic" else _openai_frames
        closing = self.owner.closing
        seen = next(i for i, r in enumerate(self.owner.requests) if r is recorded) + 1
        for index, frame in enumerate(frames(recorded, reply)):
            if index and reply.cut_on_arrival and self._another_arrives(seen, reply.gap_s):
                self.close_connection = True
                return
            if frame == _STALL:
                closing.wait(reply.hold_s)
                self.close_connection = True
                return
            if frame == _DROP:
                self.close_connection = True
                return
            if frame == _TRUNCATE:
                break
            if index and reply.gap_s and not reply.cut_on_arrival and closing.wait(reply.gap_s):
                return
            self._chunk(frame)
        self._chunk(b"")

    def _another_arrives(self, seen: int, within_s: float) -> bool:
        """Whether a request beyond the first `seen` arrives within `within_s` seconds."""
        with self.owner.arrival:
            return self.owner.arrival.wait_for(lambda: self.owner.hits > seen, timeout=within_s)


_STALL, _DROP, _TRUNCATE = b"<stall>", b"<drop>", b"<truncate>"


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def _cut(reply: Reply, delivered: int) -> bytes | None:
    """The marker that interrupts a stream after `delivered` deltas, if the reply asks for one."""
    if reply.stall_after_deltas == delivered:
        return _STALL
    if reply.drop_after_deltas == delivered:
        return _DROP
    if reply.truncate_after_deltas == delivered:
        return _TRUNCATE
    return None


def _prompt_words(body: Any) -> int:
    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("system", "")) if isinstance(body, dict) else ""
    return max(1, len(text.split()))


def _model(body: Any) -> str:
    return body.get("model", "unknown") if isinstance(body, dict) else "unknown"


def _error_type(api: str, reply: Reply) -> str:
    if reply.error_type:
        return reply.error_type
    by_status = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                 404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}
    return by_status.get(reply.status, "api_error" if api == "anthropic" else "server_error")


def _error_body(api: str, reply: Reply) -> dict[str, Any]:
    error = {"type": _error_type(api, reply), "message": reply.error_message}
    return {"type": "error", "error": error} if api == "anthropic" else {"error": {**error, "code": None}}


# -- Anthropic -------------------------------------------------------------------------------
def cache_minimum(model: str) -> int:
    """The API's minimum cacheable prefix, in tokens, for a model."""
    if any(family in model for family in ("haiku-4", "opus-4-5", "opus-4-6")):
        return 4096
    return 2048 if "haiku" in model else 1024


def _tokens(block: Any) -> int:
    text = block.get("text", "") if isinstance(block, dict) else str(block)
    return math.ceil(len(text) / 4)


def _blocks(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    """The prompt as (block without its mark, marked?) in API order: system, then each message's content."""
    system = body.get("system") or []
    blocks: list[Any] = [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    for message in body.get("messages", []):
        content = message.get("content")
        blocks += [{"role": message["role"], "type": "text", "text": content}] if isinstance(content, str) else [
            {"role": message["role"], **block} for block in content]
    return [({k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b,
             isinstance(b, dict) and "cache_control" in b) for b in blocks]


def anthropic_cache_usage(body: dict[str, Any], cache: set[str]) -> dict[str, int] | None:
    """Input, cache-write and cache-read tokens of one request under the API's cache semantics
    (None when it marks no breakpoint); records the prefixes it writes in `cache`."""
    blocks = _blocks(body)
    marks = [i for i, (_, marked) in enumerate(blocks) if marked]
    if not marks:
        return None
    total, minimum, model = sum(_tokens(b) for b, _ in blocks), cache_minimum(str(body.get("model"))), body.get("model")
    sizes = {i: sum(_tokens(b) for b, _ in blocks[:i + 1]) for i in marks}
    keys = {i: hashlib.sha256(json.dumps([model, [b for b, _ in blocks[:i + 1]]]).encode()).hexdigest() for i in marks}
    read = max((sizes[i] for i in marks if keys[i] in cache), default=0)
    cacheable = [i for i in marks if sizes[i] >= minimum]
    written = max(0, max((sizes[i] for i in cacheable), default=0) - read)
    cache.update(keys[i] for i in cacheable)
    return {"input_tokens": total - read - written, "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read}


def _anthropic_usage(recorded: Recorded, reply: Reply, output: int) -> dict[str, Any]:
    usage = recorded.cache_usage or {"input_tokens": _prompt_words(recorded.body), "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": 0}
    return {**usage, "output_tokens": output, **reply.usage}


def _plain_body(recorded: Recorded, reply: Reply) -> dict[str, Any]:
    pieces = split_text(reply.text, reply.deltas)
    if recorded.api == "anthropic":
        tool = _forced_tool(recorded) or reply.tool_call
        content = {"type": "text", "text": reply.text} if tool is None else {
            "type": "tool_use", "id": "toolu_loopback", "name": tool, "input": json.loads(reply.text)}
        return {"id": "msg_loopback", "type": "message", "role": "assistant", "model": _model(recorded.body),
                "content": [content], "stop_reason": "max_tokens" if reply.at_limit else
                "end_turn" if tool is None else "tool_use",
                "stop_sequence": None, "usage": _anthropic_usage(recorded, reply, len(pieces))}
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_call:
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_loopback", "type": "function", "function": {"name": reply.tool_call, "arguments": reply.text}}]}
    finish = "length" if reply.at_limit else "tool_calls" if reply.tool_call else "stop"
    return {"id": "chatcmpl-loopback", "object": "chat.completion", "created": 0, "model": _model(recorded.body),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            **({} if reply.no_usage else {"usage": _openai_usage(recorded, reply, len(pieces))})}


def _forced_tool(recorded: Recorded) -> str | None:
    """The tool an Anthropic request forces (`tool_choice: {type: tool}`): the reply text is its
    input, as JSON (a plain reply's text must then be JSON; a streamed one is sent as it is)."""
    choice = recorded.body.get("tool_choice") if isinstance(recorded.body, dict) else None
    return choice.get("name") if isinstance(choice, dict) and choice.get("type") == "tool" else None


def _anthropic_frames(recorded: Recorded, reply: Reply):
    pieces = split_text(reply.text, reply.deltas)
    usage = _anthropic_usage(recorded, reply, len(pieces))
    start_usage = {**usage, "output_tokens": 1}
    yield _sse({"type": "message_start", "message": {
        "id": "msg_loopback", "type": "message", "role": "assistant", "model": _model(recorded.body),
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}, "message_start")
    tool = _forced_tool(recorded) or reply.tool_call
    block = {"type": "text", "text": ""} if tool is None else {"type": "tool_use", "id": "toolu_loopback",
                                                               "name": tool, "input": {}}
    yield _sse({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start")
    yield _sse({"type": "ping"}, "ping")
    for delivered, piece in enumerate(pieces):
        if (cut := _cut(reply, delivered)) is not None:
            yield cut
        if reply.error_after_deltas == delivered:
            yield _sse({"type": "error", "error": {"type": reply.error_type or "overloaded_error",
                                                   "message": reply.error_message}}, "error")
            return
        delta = {"type": "text_delta", "text": piece} if tool is None else {"type": "input_json_delta",
                                                                            "partial_json": piece}
        yield _sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta")
    if (cut := _cut(reply, len(pieces))) is not None:
        yield cut
    yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    stop = "max_tokens" if reply.at_limit else "end_turn" if tool is None else "tool_use"
    yield _sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]}}, "message_delta")
    if reply.drop_at_marker:
        yield _DROP
    elif not reply.omit_marker:
        yield _sse({"type": "message_stop"}, "message_stop")


# -- OpenAI ----------------------------------------------------------------------------------
def _openai_usage(recorded: Recorded, reply: Reply, output: int) -> dict[str, Any]:
    prompt = _prompt_words(recorded.body)
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": output,
                             "prompt_tokens_details": {"cached_tokens": 0}, **reply.usage}
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return usage


def _openai_frames(recorded: Recorded, reply: Reply):
    pieces = split_text(reply.text, reply.deltas)
    base = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk", "created": 0,
            "model": _model(recorded.body)}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": None if reply.tool_call else ""})
    if reply.tool_call:
        yield chunk({"tool_calls": [{"index": 0, "id": "call_loopback", "type": "function",
                                     "function": {"name": reply.tool_call, "arguments": ""}}]})
    for delivered, piece in enumerate(pieces):
        if (cut := _cut(reply, delivered)) is not None:
            yield cut
        if reply.error_after_deltas == delivered:
            yield _sse({"error": {"type": reply.error_type or "server_error", "message": reply.error_message}})
            return
        yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]} if reply.tool_call
                    else {"content": piece})
    if (cut := _cut(reply, len(pieces))) is not None:
        yield cut
    yield chunk({}, "length" if reply.at_limit else "tool_calls" if reply.tool_call else "stop")
    options = recorded.body.get("stream_options") or {} if isinstance(recorded.body, dict) else {}
    if options.get("include_usage") and not reply.no_usage:
        yield _sse({**base, "choices": [], "usage": _openai_usage(recorded, reply, len(pieces))})
    if reply.drop_at_marker:
        yield _DROP
    elif not reply.omit_marker:
        yield _sse("[DONE]")


class FakeSleep:
    """An injectable `sleep` that records the delays asked for and returns at once."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.calls.append(delay)


def assert_no_leak(*things: Any, logs: str = "") -> None:
    """Neither the things (exceptions included: str, repr, context) nor the logs contain the canary key."""
    for thing in things:
        texts = [str(thing), repr(thing)]
        texts += [repr(getattr(thing, "context", "")), repr(getattr(thing, "args", ""))]
        if isinstance(thing, BaseException):
            texts.append("".join(traceback.format_exception(thing)))
        for text in texts:
            assert CANARY not in text, f"API key leaked in {text!r}"
    assert CANARY not in logs, "API key leaked in the logs"


@pytest.fixture
def loopback():
    """A started `LoopbackServer`, shut down (releasing any stalled stream) after the test."""
    with LoopbackServer() as server:
        yield server
