"""Each request leaves in one write: its head is held until its body follows.

The SDKs' HTTP library writes a request's head, then yields to the event loop (its socket layer
takes a checkpoint after every write), then writes the body. In a crowd's beat the loop spends that
gap building the other actors' requests, so a server that has a request's head waits for its body
while fifty other requests are built: measured at 50 actors, the body of the beat's slowest call
reached the server 40-50 ms after its head. Holding the head until the body's write (or the next
read, or an empty write, which is how the library ends a message whose body it has already sent)
puts both on the wire in one piece and costs nothing: the bytes and their order are the same.

A body sent in chunks (`Transfer-Encoding: chunked`: a request opened ahead of its turn,
`promptdesk.core.providers.early`) leaves its first chunk with the head; each later chunk is held
until the next write, so that the last part of the body and the chunk that ends it (`0\r\n\r\n`,
which the library writes at once after it) leave in one write too.

`send_whole` applies this to an SDK's HTTP client (an `httpx2.AsyncClient`): it wraps the network
backend of the client's connection pool, reached through attributes the pinned library versions
have (`_transport._pool._network_backend`). When they are missing (another version), it changes
nothing and says so by returning False; `tests/test_whole_requests.py` fails if it stops applying.
"""

from __future__ import annotations

from typing import Any

HEAD_END = b"\r\n\r\n"
LAST_CHUNK = b"0\r\n\r\n"


def is_request_head(buffer: bytes) -> bool:
    """Whether `buffer` is a whole HTTP/1.x request head: a request line, headers, the blank line."""
    return buffer.endswith(HEAD_END) and buffer[:buffer.find(b"\r\n")].endswith((b" HTTP/1.1", b" HTTP/1.0"))


class WholeWrites:
    """A network stream that holds a write of a whole request head (`is_request_head`) until the
    next write, read or `start_tls`, and sends the two together; closing drops a head that no
    body followed (the request was abandoned). In a body sent in chunks, each chunk after the first
    is held the same way, and leaves with the chunk after it (at last, the one that ends the body)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._held = b""
        self._chunks: int | None = None
        """The chunks written of the body in chunks under way (None: no such body)."""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not self._held and is_request_head(buffer):
            self._held = buffer
            self._chunks = 0 if b"transfer-encoding: chunked" in buffer.lower() else None
            return
        if self._chunks is not None:
            self._chunks = None if buffer == LAST_CHUNK else self._chunks + 1
            if self._chunks is not None and self._chunks > 1 and not self._held:
                self._held = buffer
                return
        data, self._held = self._held + buffer, b""
        if data:
            await self._inner.write(data, timeout=timeout)

    async def _release(self, timeout: float | None) -> None:
        if self._held:
            data, self._held = self._held, b""
            await self._inner.write(data, timeout=timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._release(timeout)
        return await self._inner.read(max_bytes, timeout=timeout)

    async def aclose(self) -> None:
        self._held = b""
        await self._inner.aclose()

    async def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                        timeout: float | None = None) -> WholeWrites:
        await self._release(timeout)
        return WholeWrites(await self._inner.start_tls(ssl_context, server_hostname=server_hostname, timeout=timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class WholeRequests:
    """A network backend whose streams are `WholeWrites` over those of `inner`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> WholeWrites:
        return WholeWrites(await self.inner.connect_tcp(*args, **kwargs))

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> WholeWrites:
        return WholeWrites(await self.inner.connect_unix_socket(*args, **kwargs))

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def pool_backend(http_client: Any) -> Any:
    """The network backend of `http_client`'s connection pool, or None when it has none this
    module knows how to reach."""
    return getattr(getattr(getattr(http_client, "_transport", None), "_pool", None), "_network_backend", None)


def send_whole(http_client: Any) -> bool:
    """Make `http_client`'s new connections send each request whole; True when it applied (or
    already had), False when the client is not built the way this module knows."""
    backend = pool_backend(http_client)
    if backend is None:
        return False
    if not isinstance(backend, WholeRequests):
        http_client._transport._pool._network_backend = WholeRequests(backend)
    return True
