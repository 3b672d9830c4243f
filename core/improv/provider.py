"""The offline provider: Promptdesk with no API key and no network, through the improviser.

It is not a language model (see `promptdesk.core.improv.DISCLAIMER`). Answers depend only on the seed and
the request. Usage is counted honestly (about four characters a token); cost is always zero.
Simulated latency, when asked for, is waited through the injected clock.
"""

from __future__ import annotations

import math
import re

from promptdesk.core.clock import Clock, RealClock
from promptdesk.core.improv import DISCLAIMER, improvise, request_rng
from promptdesk.core.providers.base import Completion, DeltaCallback, Provider, Request, ResetCallback, Usage

__all__ = ["DISCLAIMER", "OfflineProvider"]


class OfflineProvider(Provider):
    """A deterministic, seeded improviser behind the provider interface."""

    name = "offline"
    model = "improviser"

    def __init__(self, seed: int = 0, latency_ms: tuple[int, int] | None = None, clock: Clock | None = None,
                 malformed_rate: float = 0.0) -> None:
        self.seed = seed
        self.latency_ms = latency_ms
        self.clock = clock or RealClock()
        self.malformed_rate = malformed_rate

    async def complete(self, request: Request, on_delta: DeltaCallback | None = None,
                       on_reset: ResetCallback | None = None) -> Completion:
        """Improvise the answer; stream it in word-boundary fragments when `on_delta` is given
        (it never fails, so it never retracts)."""
        text = improvise(request, self.seed, self.malformed_rate)
        rng = request_rng(request, self.seed, "delivery")
        total = rng.uniform(*self.latency_ms) / 1000 if self.latency_ms else 0.0
        pieces = fragments(text, rng.randint(5, 12)) if on_delta else [text]
        waited, ttft = 0.0, None
        for piece in pieces:
            if total:
                await self.clock.sleep(total / len(pieces))
                waited += total / len(pieces)
            ttft = waited if ttft is None else ttft
            if on_delta:
                on_delta(piece)
        prompt = request.system + "".join(m.content for m in request.messages)
        usage = Usage(input_tokens=_tokens(prompt), output_tokens=_tokens(text))
        return Completion(text=text, usage=usage, provider=self.name, model=self.model,
                          latency_s=waited, ttft_s=ttft if on_delta else None)


def fragments(text: str, count: int) -> list[str]:
    """`text` cut on word boundaries into about `count` pieces that concatenate back to it."""
    words = re.findall(r"\s*\S+\s*", text) or [text]
    count = max(1, min(count, len(words)))
    size = math.ceil(len(words) / count)
    pieces = ["".join(words[i:i + size]) for i in range(0, len(words), size)]
    consumed = sum(map(len, pieces))
    if consumed < len(text):
        pieces[-1] += text[consumed:]
    return pieces


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0
