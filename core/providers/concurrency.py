"""How many calls go to one server at once, and the one thing worth saying when a server cuts streams.

`gate(provider)` is the queue every call to a provider's server waits in (`promptdesk.core.engine.turn.call`
enters it): at most the provider's `max_concurrency` calls at once, the others waiting in arrival
order (first come, first served, so a beat's lines still arrive in the order the server answers
them, and the simulated clock's offline runs stay the same run to run). One gate per server (its
base URL, or the provider's name) per event loop: the actors and journal calls of a run, and the
runs of a sweep, share it. Two settings for one server: the smaller limit wins. No limit (None):
calls go straight through.

`Server` watches the attempts in flight to one server so that a stream cut while another request
to the same server had started can be told for what it most likely is (llama-cpp-python's server,
`python -m llama_cpp.server`, cuts a stream whenever a new request arrives; llama.cpp's own `llama-server`
queues what its slots cannot take): `CUT_NOTICE`, said once per server and event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator
from typing import Any

CUT_NOTICE = ("the server at {server} cut a stream when another request arrived: llama-cpp-python's server "
              "(python -m llama_cpp.server) does this unless started with --interrupt_requests False; or set "
              "max_concurrency: 1")
"""What is said once when a stream was cut while another request to the same server had started."""
CUT_WITHIN_S = 1.0
"""How soon after another request's start a cut stream is blamed on it: such a server cuts at the arrival. A
stream that broke later (the server went down under a parallel beat, every stream at once) was not cut by it."""


class Gate:
    """At most `limit` holders at once; the others wait in arrival order."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self.waiting: list[asyncio.Future[None]] = []

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the gate's places for the body (a cancelled waiter leaves the queue)."""
        if self.active >= self.limit or self.waiting:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiting.append(future)
            try:
                await future
            except BaseException:
                if future in self.waiting:
                    self.waiting.remove(future)
                elif not future.cancelled():  # the place was handed over just as the wait was cancelled
                    self._release()
                raise
        else:
            self.active += 1
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        """Hand the place to the first waiter still waiting, or free it."""
        while self.waiting:
            future = self.waiting.pop(0)
            if not future.done():
                future.set_result(None)
                return
        self.active -= 1


class Server:
    """The attempts in flight to one server: a counter of attempts started, and whether the cut
    notice was said."""

    def __init__(self) -> None:
        self.started = 0
        self.told = False
        self.last_start = 0.0

    def begin(self) -> int:
        """An attempt starts: its number (the attempts started after it have higher numbers)."""
        self.started += 1
        self.last_start = time.monotonic()
        return self.started

    def another_since(self, mark: int) -> bool:
        """Whether another attempt to this server started after the attempt numbered `mark`, and lately
        (within `CUT_WITHIN_S`: a server that cuts a stream for another request does so as it arrives)."""
        return self.started > mark and time.monotonic() - self.last_start <= CUT_WITHIN_S

    def tell_once(self) -> bool:
        """True the first time only: the cut notice is said once per server."""
        told, self.told = self.told, True
        return not told


_LOOPS: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _registry(kind: str) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    return _LOOPS.setdefault(loop, {}).setdefault(kind, {})


def server_key(provider: Any) -> str:
    """Which server a provider's calls go to: its base URL, else its name."""
    return str(getattr(provider, "base_url", None) or getattr(provider, "name", "provider"))


def gate(provider: Any) -> Gate | None:
    """The queue of `provider`'s server, or None when its `max_concurrency` sets no limit."""
    limit = getattr(provider, "max_concurrency", None)
    if not limit:
        return None
    gates = _registry("gates")
    key = server_key(provider)
    if key not in gates:
        gates[key] = Gate(limit)
    gates[key].limit = min(gates[key].limit, limit)
    return gates[key]


def server(key: str) -> Server:
    """The attempt watch of the server `key` in the running event loop."""
    servers = _registry("servers")
    return servers.setdefault(key, Server())


@contextlib.asynccontextmanager
async def one_call(provider: Any) -> AsyncIterator[None]:
    """Wait for a place at `provider`'s server (nothing to wait for without a limit)."""
    queue = gate(provider)
    if queue is None:
        yield
        return
    async with queue.slot():
        yield
