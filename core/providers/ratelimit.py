"""One rate limiter per provider and model, shared by every run of a sweep.

A limiter admits a request when the last minute holds fewer than `requests_per_min` requests and
fewer than `tokens_per_min` tokens, and never before a shared pause has ended. A pause starts
whenever any run's provider waits before a retry (the wait is the server's `retry-after` when it
sent one), so one 429 slows every run on that provider and model instead of each run hammering
on until it fails, and as soon as a response's rate-limit headers say a budget is spent.

Every wait a header asked for is capped by the provider's `retry_after_cap_s` before it gets here,
and said once to the operator through `say` (`promptdesk.core.providers.waits.Announcer`): the runs that queue
behind a pause do not repeat it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from promptdesk.core.clock import Clock, RealClock
from promptdesk.core.providers.base import Completion, DeltaCallback, Provider, Request, ResetCallback
from promptdesk.core.providers.waits import Announcer, Wait

WINDOW_S = 60.0


@dataclass(frozen=True)
class Limits:
    """Requests and tokens per minute for one provider and model; None is no limit."""

    requests_per_min: int | None = None
    tokens_per_min: int | None = None


class RateLimiter:
    """Sliding one-minute windows of requests and tokens, plus a shared pause."""

    def __init__(self, limits: Limits, clock: Clock | None = None, say: Callable[[str], None] | None = None,
                 label: str = "") -> None:
        self.limits, self.clock = limits, clock or RealClock()
        self._requests: deque[float] = deque()
        self._tokens: deque[tuple[float, int]] = deque()
        self.paused_until = 0.0
        self.waited_s = 0.0
        self.announce = Announcer(self.clock.now, say or (lambda line: None), label)
        """Says a header's wait to the operator, once (see `promptdesk.core.providers.waits`)."""

    def _expire(self, now: float) -> None:
        while self._requests and self._requests[0] <= now - WINDOW_S:
            self._requests.popleft()
        while self._tokens and self._tokens[0][0] <= now - WINDOW_S:
            self._tokens.popleft()

    def wait_s(self) -> float:
        """How long a request would have to wait now (0 when it may go)."""
        now = self.clock.now()
        self._expire(now)
        waits = [self.paused_until - now]
        rpm, tpm = self.limits.requests_per_min, self.limits.tokens_per_min
        if rpm is not None and len(self._requests) >= rpm:
            waits.append(self._requests[0] + WINDOW_S - now)
        if tpm is not None and self._tokens and sum(n for _, n in self._tokens) >= tpm:
            waits.append(self._tokens[0][0] + WINDOW_S - now)
        return max(0.0, *waits)

    async def acquire(self) -> None:
        """Wait until a request may go, then count it."""
        while (delay := self.wait_s()) > 0:
            self.waited_s += delay
            await self.clock.sleep(delay)
        self._requests.append(self.clock.now())

    def spent(self, tokens: int) -> None:
        """Count the tokens a finished request used."""
        self._tokens.append((self.clock.now(), tokens))

    def pause(self, seconds: float) -> None:
        """Hold every request on this limiter for `seconds` from now (the longest pause wins)."""
        self.paused_until = max(self.paused_until, self.clock.now() + seconds)

    def header_wait(self, wait: Wait) -> None:
        """A response header asks for `wait` (a spent budget's reset, a retry-after): hold every
        request on this limiter that long, and tell the operator once."""
        self.pause(wait.seconds)
        self.announce(wait)

    def pausing_sleep(self, sleep: Callable[[float], Awaitable[Any]]) -> Callable[[float], Awaitable[Any]]:
        """`sleep`, but each retry wait first pauses everyone sharing this limiter."""
        async def wait(seconds: float) -> Any:
            self.pause(seconds)
            return await sleep(seconds)
        return wait


class LimitedProvider(Provider):
    """A provider whose every call goes through a shared `RateLimiter`."""

    def __init__(self, inner: Provider, limiter: RateLimiter) -> None:
        self.inner, self.limiter = inner, limiter
        self.name, self.model, self.max_concurrency = inner.name, inner.model, inner.max_concurrency
        if hasattr(inner, "_sleep"):
            inner._sleep = limiter.pausing_sleep(inner._sleep)
        if hasattr(inner, "on_wait"):
            inner.on_wait = limiter.header_wait

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property  # type: ignore[override]
    def on_notice(self) -> Callable[[str], None] | None:
        """The inner provider's: it is the one that notices."""
        return self.inner.on_notice

    @on_notice.setter
    def on_notice(self, value: Callable[[str], None] | None) -> None:
        self.inner.on_notice = value

    async def complete(self, request: Request, on_delta: DeltaCallback | None = None,
                       on_reset: ResetCallback | None = None) -> Completion:
        await self.limiter.acquire()
        completion = await self.inner.complete(request, on_delta, on_reset)
        self.limiter.spent(completion.usage.total)
        return completion

    def as_sent(self, request: Request) -> Request:
        return self.inner.as_sent(request)

    @property
    def sends_ahead(self) -> bool:
        """The inner provider's: a request opened ahead is counted when it is asked (`complete`)."""
        return self.inner.sends_ahead

    def open_early(self, request: Request) -> None:
        self.inner.open_early(request)

    async def drop_early(self) -> None:
        await self.inner.drop_early()

    def prepare(self) -> None:
        self.inner.prepare()

    async def aclose(self) -> None:
        await self.inner.aclose()


class Limiters:
    """The limiters of one sweep, one per provider and model, created on first use."""

    def __init__(self, limits: Limits, clock: Clock | None = None, say: Callable[[str], None] | None = None) -> None:
        self.limits, self.clock, self.say = limits, clock, say
        self.by_key: dict[tuple[str, str | None], RateLimiter] = {}

    def for_provider(self, provider: Provider) -> RateLimiter:
        key = (provider.name, provider.model)
        if key not in self.by_key:
            label = f"{provider.name} {provider.model}" if provider.model else provider.name
            self.by_key[key] = RateLimiter(self.limits, self.clock, self.say, label)
        return self.by_key[key]

    def attach(self, session: Any) -> None:
        """Route every provider of a built session (actors and judge) through the shared limiters."""
        wrapped: dict[int, LimitedProvider] = {}

        def limited(provider: Provider) -> LimitedProvider:
            if id(provider) not in wrapped:
                wrapped[id(provider)] = LimitedProvider(provider, self.for_provider(provider))
            return wrapped[id(provider)]

        for actor in session.actors.values():
            actor.provider = limited(actor.provider)
        if session.judge_provider is not None:
            session.judge_provider = limited(session.judge_provider)
