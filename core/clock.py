"""Time as the engine sees it: the real clock for real models, a simulated one for the improviser.

Everything that waits (simulated model latency, backoff, a turn's time limit, pacing) goes through a
`Clock`, and every `t` and arrival time is read from one. When every call of a run goes to the
offline improviser, the run plays on a `VirtualClock`: simulated latency decides who arrives first,
in simulated time, so the same scene, choices and seed give the same record at any concurrency and
under any machine load. Real models keep real arrival order on the `RealClock`.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections.abc import Awaitable
from typing import Literal, Protocol, TypeVar

T = TypeVar("T")

Arrivals = Literal["simulated", "real"]
"""What decides arrival order in a run: simulated latency on a virtual clock, or the wall clock."""


class Clock(Protocol):
    """Monotonic seconds, an async sleep, and a time limit on an awaitable."""

    arrivals: Arrivals

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    async def wait_for(self, awaitable: Awaitable[T], timeout: float | None) -> T: ...


async def within(awaitable: Awaitable[T], timeout: float | None) -> T:
    """`awaitable`'s result, or `TimeoutError` once `timeout` wall seconds have passed (None: no limit).

    It runs in the calling task (`asyncio.timeout`), where `asyncio.wait_for` (Python 3.11) wraps it
    in a task of its own, which starts only after every task already queued has taken a step: in a
    crowd's parallel beat that made each actor's request wait until every other actor's had been
    built, before the first one could leave."""
    if timeout is None:
        return await awaitable
    async with asyncio.timeout(timeout):
        return await awaitable


class RealClock:
    """Wall-clock time (monotonic), `asyncio.sleep`, and time limits in wall time (`within`)."""

    arrivals: Arrivals = "real"

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    async def wait_for(self, awaitable: Awaitable[T], timeout: float | None) -> T:
        return await within(awaitable, timeout)


class VirtualClock:
    """Simulated time that advances only when every task is waiting on it.

    A sleeper is woken when all runnable work has settled (the loop has been yielded to a number
    of times since the last sleeper arrived, no wall time involved) and its deadline is the earliest:
    a time limit set just before the work it guards finishes is cancelled, never fired, however long
    the clock had already been settling. Wake-ups go by deadline, then
    by call order, so runs are the same on any machine at any load. A cancelled sleeper is dropped
    without moving time.

    `realtime=True` (the console) also waits each deadline out in wall time, from the moment the
    clock last started, so a watched scene keeps its rhythm; the order of wake-ups is still decided
    by simulated time alone. `timeouts=True` (a run on the improviser alone) also counts time limits
    in simulated time; otherwise a limit is wall time, as a real model behind it would need.

    Simulated time is kept as a whole number of ticks (`TICKS_PER_S`, a tenth of a millisecond: the
    resolution of every recorded `t`), so a time read back from the record is exactly the time the
    clock had: a take that starts at a recorded `t` (`promptdesk.core.casting.branch`) goes on at the very same
    instants as the run it was taken from.
    """

    SETTLE_YIELDS = 50
    TICKS_PER_S = 10_000
    arrivals: Arrivals = "simulated"

    def __init__(self, start: float = 0.0, *, realtime: bool = False, timeouts: bool = False) -> None:
        self._ticks = round(start * self.TICKS_PER_S)
        self.realtime, self.timeouts = realtime, timeouts
        self._heap: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._driver: asyncio.Task[None] | None = None
        self._pushes = 0
        self._anchor = (time.monotonic(), self._ticks)

    @classmethod
    def ticks(cls, seconds: float) -> int:
        """`seconds` as a whole number of ticks (to the nearest; at least one for any wait at all, so
        that a loop waiting out a remainder smaller than a tick still moves time)."""
        if seconds <= 0:
            return 0
        return max(1, round(seconds * cls.TICKS_PER_S))

    def now(self) -> float:
        return self._ticks / self.TICKS_PER_S

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._heap, (self._ticks + self.ticks(seconds), next(self._seq), future))
        self._pushes += 1
        if self._driver is None or self._driver.done():
            self._anchor = (time.monotonic(), self._ticks)
            self._driver = loop.create_task(self._drive())
        await future

    async def wait_for(self, awaitable: Awaitable[T], timeout: float | None) -> T:
        """`awaitable`'s result, or `TimeoutError` once `timeout` seconds have passed (simulated
        ones when the clock counts `timeouts`)."""
        if timeout is None or not self.timeouts:
            return await within(awaitable, timeout)
        task = asyncio.ensure_future(awaitable)
        timer = asyncio.ensure_future(self.sleep(timeout))
        try:
            await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            timer.cancel()
            raise
        if task.done():
            timer.cancel()
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise TimeoutError(f"no answer within {timeout:g} s (simulated)")

    async def _drive(self) -> None:
        while self._heap:
            settled = -1
            while settled != self._pushes:  # a sleeper that arrived meanwhile gets the whole settling too
                settled = self._pushes
                for _ in range(self.SETTLE_YIELDS):
                    await asyncio.sleep(0)
            while self._heap and self._heap[0][2].done():
                heapq.heappop(self._heap)
            if not self._heap:
                return
            deadline = self._heap[0][0]
            if self.realtime and (lag := self._wall_due(deadline) - time.monotonic()) > 0:
                await asyncio.sleep(lag)
                continue
            deadline, _, future = heapq.heappop(self._heap)
            self._ticks = max(self._ticks, deadline)
            future.set_result(None)

    def _wall_due(self, deadline: int) -> float:
        """The wall time at which `deadline` (in ticks) falls, counting from when the clock last started."""
        wall, virtual = self._anchor
        return wall + (deadline - virtual) / self.TICKS_PER_S
