"""The providers of one run: one instance per distinct spec, shared by the actors that use it."""

from __future__ import annotations

from typing import Any

from promptdesk.core.clock import Clock
from promptdesk.core.improv.provider import OfflineProvider
from promptdesk.core.providers.base import Provider
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.providers.registry import make_remote
from promptdesk.core.providers.spec import turn_protocol
from promptdesk.core.providers.spec import ProviderSpec


class ProviderPool:
    """One provider instance per distinct spec; the offline improviser keeps the run's seed and clock."""

    def __init__(self, seed: int, clock: Clock) -> None:
        self.seed, self.clock = seed, clock
        self._made: dict[str, Provider] = {}

    def get(self, spec: ProviderSpec) -> Provider:
        """The run's provider for `spec` (built on first use)."""
        key = spec.model_dump_json()
        if key not in self._made:
            self._made[key] = self._make(spec)
        return self._made[key]

    def _make(self, spec: ProviderSpec) -> Provider:
        protocol = protocol_of(spec)
        if spec.name == "offline":
            provider = OfflineProvider(seed=self.seed, latency_ms=spec.latency_ms, clock=self.clock)
            provider.max_concurrency = spec.max_concurrency
            return provider
        provider = make_remote(spec, sleep=self.clock.sleep)
        provider.protocol = protocol
        return provider


def make_provider(spec: Any, *, seed: int = 0, sleep: Any = None) -> Provider:
    """The provider `spec` names: the offline improviser (seeded), or a remote backend (`make_remote`).
    `sleep` replaces `asyncio.sleep` for retry waits (tests)."""
    protocol = protocol_of(spec)
    if (getattr(spec, "name", None) or "offline") == "offline":
        return OfflineProvider(seed=seed, latency_ms=getattr(spec, "latency_ms", None))
    provider = make_remote(spec, sleep=sleep)
    provider.protocol = protocol
    return provider


def protocol_of(spec: Any) -> str:
    """The protocol `spec`'s actors answer in (`auto` resolved); a `json` the provider cannot keep
    is refused as InvalidConfig (exit 2), before any provider is built."""
    try:
        return turn_protocol(spec)
    except ValueError as exc:
        raise InvalidConfig(str(exc)) from None
