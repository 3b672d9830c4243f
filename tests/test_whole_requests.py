"""A request leaves in one write, head and body together (`core/providers/whole_requests.py`).

Through each real SDK to the loopback server, the bytes each connection writes are watched just
above the socket: one write per request, the head followed by its whole body. Then the stream's
rules on a real loopback socket: a head is held until its body, a read or `start_tls` releases it,
a close drops it, anything that is not a request head goes out at once.
"""

from __future__ import annotations

import json
import socket

import pytest

from promptdesk.core.providers.anthropic_provider import AnthropicProvider
from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.providers.openai_provider import OpenAIProvider
from promptdesk.core.providers.whole_requests import WholeRequests, WholeWrites, is_request_head, pool_backend, send_whole
from loopback import CANARY, FakeSleep, Reply, loopback  # noqa: F401 - fixture


class Watched:
    """A network backend that passes everything to the real one and keeps what each stream writes."""

    def __init__(self, inner) -> None:
        self.inner, self.writes = inner, []

    async def connect_tcp(self, *args, **kwargs):
        return _WatchedStream(await self.inner.connect_tcp(*args, **kwargs), self.writes)


class _WatchedStream:
    def __init__(self, inner, writes: list[bytes]) -> None:
        self.inner, self.writes = inner, writes

    async def write(self, buffer: bytes, timeout=None) -> None:
        self.writes.append(bytes(buffer))
        await self.inner.write(buffer, timeout=timeout)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def _request(to: str, line: str) -> Request:
    return Request(to=to, system="You are Bob, a ferryman. " * 40,
                   messages=[ChatMessage(role="user", content=line * 200)], max_tokens=200)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_each_request_reaches_the_socket_in_one_write(loopback, kind):
    make = OpenAIProvider if kind == "openai" else AnthropicProvider
    base = loopback.url("/v1") if kind == "openai" else loopback.url()
    provider = make("gpt-4.1-mini" if kind == "openai" else "claude-sonnet-4-6", api_key=CANARY, base_url=base,
                    sleep=FakeSleep(), timeout_s=5.0)
    loopback.script(Reply(text="First."), Reply(text="Second."))
    try:
        backend = pool_backend(provider.client_for("bob")._client)
        assert isinstance(backend, WholeRequests), "the recipient's client does not send requests whole"
        backend.inner = watched = Watched(backend.inner)
        first = await provider.complete(_request("bob", "Who crosses tonight? "), on_delta=lambda piece: None)
        second = await provider.complete(_request("bob", "Look again. "), on_delta=lambda piece: None)
    finally:
        await provider.aclose()

    assert (first.text, second.text) == ("First.", "Second.")
    assert len(watched.writes) == 2, [w[:60] for w in watched.writes]
    for sent, line in zip(watched.writes, ("Who crosses tonight? ", "Look again. ")):
        head, _, body = sent.partition(b"\r\n\r\n")
        headers = dict(line.lower().split(b": ", 1) for line in head.split(b"\r\n")[1:])
        assert head.startswith(b"POST ") and int(headers[b"content-length"]) == len(body)
        assert line * 200 in json.loads(body)["messages"][-1]["content"] if kind == "openai" else \
            line * 200 in json.dumps(json.loads(body)["messages"])
    assert [r.body["stream"] for r in loopback.requests] == [True, True]


def test_only_a_whole_request_head_is_held():
    assert is_request_head(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n")
    assert not is_request_head(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
    assert not is_request_head(b'{"text": "a body that ends like a head"}\r\n\r\n')
    assert not is_request_head(b"0\r\n\r\n")


def test_a_client_built_otherwise_is_left_as_it_is():
    class Elsewhere:
        _transport = object()

    assert send_whole(Elsewhere()) is False and send_whole(object()) is False


@pytest.fixture
def peer():
    """A listening loopback socket; yields (port, accept) where accept() gives the server side."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> socket.socket:
        conn, _ = listener.accept()
        conn.setblocking(False)
        accepted.append(conn)
        return conn

    yield listener.getsockname()[1], accept
    for conn in accepted:
        conn.close()
    listener.close()


def _arrived(conn: socket.socket) -> bytes:
    """What the peer has received so far (a loopback send lands in its buffer before it returns)."""
    try:
        return conn.recv(1 << 20)
    except BlockingIOError:
        return b""


async def test_a_head_waits_for_its_body_and_leaves_with_it(peer):
    from httpcore2 import AnyIOBackend

    port, accept = peer
    stream = await WholeRequests(AnyIOBackend()).connect_tcp("127.0.0.1", port)
    server = accept()
    head = b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"
    await stream.write(head)
    assert _arrived(server) == b""
    await stream.write(b"hello")
    assert _arrived(server) == head + b"hello"
    await stream.write(b"")  # the end of a message whose length was given: nothing to send
    await stream.write(b"0\r\n\r\n")  # not a head: at once
    assert _arrived(server) == b"0\r\n\r\n"
    await stream.aclose()


async def test_a_read_releases_a_held_head_and_a_close_drops_it(peer):
    from httpcore2 import AnyIOBackend

    port, accept = peer
    backend = WholeRequests(AnyIOBackend())
    stream = await backend.connect_tcp("127.0.0.1", port)
    server = accept()
    head = b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n"
    await stream.write(head)
    server.sendall(b"reply")
    assert await stream.read(100) == b"reply"
    assert _arrived(server) == head
    await stream.write(head)
    await stream.aclose()
    assert _arrived(server) == b""
    assert isinstance(stream, WholeWrites)


async def test_a_body_in_chunks_leaves_its_first_chunk_with_its_head_and_its_last_with_the_end(peer):
    """A request opened ahead of its turn: head and first chunk at once, so the server has them
    while the beat is played; the last chunk only with the chunk that ends the body."""
    from httpcore2 import AnyIOBackend

    port, accept = peer
    stream = await WholeRequests(AnyIOBackend()).connect_tcp("127.0.0.1", port)
    server = accept()
    head = b"POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    await stream.write(head)
    await stream.write(b"5\r\nfirst\r\n")
    assert _arrived(server) == head + b"5\r\nfirst\r\n"
    await stream.write(b"4\r\nlast\r\n")
    assert _arrived(server) == b""
    await stream.write(b"0\r\n\r\n")
    assert _arrived(server) == b"4\r\nlast\r\n0\r\n\r\n"
    sized = b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n"  # the next request on the connection
    await stream.write(sized)
    await stream.write(b"hello")
    assert _arrived(server) == sized + b"hello"
    await stream.aclose()
