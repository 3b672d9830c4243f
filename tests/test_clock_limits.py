"""A turn's time limit (`Clock.wait_for` in wall time): the guarded work runs in the caller's task.

In a parallel beat every actor's turn is a task: building its request, then sending it under the
turn's time limit. Had the limit wrapped the sending in a task of its own, no request could leave
before every actor's request had been built (a crowd's first request then waited for the whole
cast); run in place, each turn builds and sends before the next turn starts."""

from __future__ import annotations

import asyncio

import pytest

from promptdesk.core.clock import RealClock, VirtualClock, within


async def _turns(clock, n: int = 3) -> list[str]:
    order: list[str] = []

    async def send(i: int) -> None:
        order.append(f"sent {i}")
        await asyncio.sleep(0)

    async def turn(i: int) -> None:
        order.append(f"built {i}")
        await clock.wait_for(send(i), 30.0)

    await asyncio.gather(*(turn(i) for i in range(n)))
    return order


@pytest.mark.parametrize("clock", [RealClock(), VirtualClock(realtime=True)], ids=["real", "console"])
async def test_each_turn_sends_before_the_next_turn_builds(clock):
    assert await _turns(clock) == ["built 0", "sent 0", "built 1", "sent 1", "built 2", "sent 2"]


async def test_the_limit_still_ends_work_that_outlasts_it():
    with pytest.raises(TimeoutError):
        await within(asyncio.Event().wait(), 0.001)


async def test_no_limit_awaits_the_work_as_it_is():
    async def answer() -> int:
        return 42

    assert await within(answer(), None) == 42
