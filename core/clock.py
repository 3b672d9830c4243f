"""Time as the engine sees it: a real clock for runs, a virtual one for deterministic tests.

Everything that waits (simulated model latency, backoff) sleeps through a `Clock`, and every `t`
and arrival time is read from one, so a test can run a scene with latencies in virtual time.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic seconds and an async sleep."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    """Wall-clock time (monotonic) and `asyncio.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class VirtualClock:
    """Time that advances only when every task is waiting on it.

    A sleeper is woken when all runnable work has settled (the loop has been yielded to a number
    of times) and its deadline is the earliest. Order of wake-ups is deadline, then call order,
    so runs are deterministic regardless of machine speed.
    """

    SETTLE_YIELDS = 50

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._driver: asyncio.Task[None] | None = None

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._heap, (self._now + max(0.0, seconds), next(self._seq), future))
        if self._driver is None or self._driver.done():
            self._driver = loop.create_task(self._drive())
        await future

    async def _drive(self) -> None:
        while self._heap:
            for _ in range(self.SETTLE_YIELDS):
                await asyncio.sleep(0)
            if not self._heap:
                return
            deadline, _, future = heapq.heappop(self._heap)
            self._now = max(self._now, deadline)
            if not future.done():
                future.set_result(None)
