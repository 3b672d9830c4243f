"""The one price table: USD per million tokens, by model-name prefix, as of `PRICES_AS_OF`.

Every cost Promptdesk shows comes from `cost_usd`. A model is matched by its longest prefix in
`PRICES` (a gateway-style `vendor/` prefix is ignored). Anything unmatched (local models behind an
OpenAI-compatible server, a model newer than this table) costs 0 and `is_priced` says so, so a
report can flag the total as incomplete. The offline improviser always costs 0, and that price is
known (`is_priced` is True for it).

Anthropic bills `input_tokens` without the cached part; `cache_write` is the 5-minute cache write
price (1.25x input) and `cache_read` 0.1x input. OpenAI bills no cache-write surcharge (writes cost
the input price) and cached input at its own rate. Standard tier, short-context list prices.
"""

from __future__ import annotations

from typing import NamedTuple

from core.providers.base import Usage

PRICES_AS_OF = "2026-11-01"


class Price(NamedTuple):
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _openai(input_: float, output: float, cached: float) -> Price:
    return Price(input_, output, input_, cached)


def _claude(input_: float, output: float) -> Price:
    return Price(input_, output, round(input_ * 1.25, 4), round(input_ * 0.1, 4))


PRICES: dict[str, Price] = {
    # Anthropic: current families first, then the older generations they would otherwise shadow.
    "claude-opus": _claude(5.00, 25.00),          # Opus 4.5 and later
    "claude-opus-4-0": _claude(15.00, 75.00),
    "claude-opus-4-2025": _claude(15.00, 75.00),  # claude-opus-4-20250514
    "claude-opus-4-1": _claude(15.00, 75.00),
    "claude-3-opus": _claude(15.00, 75.00),
    "claude-sonnet": _claude(3.00, 15.00),        # Sonnet 4, 4.5 and later
    "claude-3-7-sonnet": _claude(3.00, 15.00),
    "claude-3-5-sonnet": _claude(3.00, 15.00),
    "claude-haiku": _claude(1.00, 5.00),          # Haiku 4.5 and later
    "claude-3-5-haiku": _claude(0.80, 4.00),
    "claude-3-haiku": Price(0.25, 1.25, 0.30, 0.03),
    # OpenAI
    "gpt-4o": _openai(2.50, 10.00, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
    "gpt-4.1": _openai(2.00, 8.00, 0.50),
    "gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
    "gpt-5": _openai(1.25, 10.00, 0.125),         # gpt-5, gpt-5.1 and their chat/codex variants
    "gpt-5-mini": _openai(0.25, 2.00, 0.025),
    "gpt-5-nano": _openai(0.05, 0.40, 0.005),
    "gpt-5-pro": _openai(15.00, 120.00, 15.00),
    "gpt-5.2": _openai(1.75, 14.00, 0.175),
    "o1": _openai(15.00, 60.00, 7.50),
    "o1-mini": _openai(1.10, 4.40, 0.55),
    "o1-pro": _openai(150.00, 600.00, 150.00),
    "o3": _openai(2.00, 8.00, 0.50),
    "o3-mini": _openai(1.10, 4.40, 0.55),
    "o3-pro": _openai(20.00, 80.00, 20.00),
    "o4-mini": _openai(1.10, 4.40, 0.275),
}

FREE = Price(0.0, 0.0, 0.0, 0.0)


def price_for(provider: str, model: str | None) -> Price | None:
    """The table row for `model` (longest matching prefix), FREE for offline, None when unknown."""
    if provider == "offline":
        return FREE
    if not model:
        return None
    name = model.strip().lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in PRICES if name.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def is_priced(provider: str, model: str | None) -> bool:
    """Whether `cost_usd` knows a price for this model (False: its cost shows as 0, unknown)."""
    return price_for(provider, model) is not None


def cost_usd(provider: str, model: str | None, usage: Usage) -> float:
    """What one call cost in USD; 0 for offline and for models the table does not know."""
    price = price_for(provider, model)
    if price is None:
        return 0.0
    total = (usage.input_tokens * price.input + usage.output_tokens * price.output
             + usage.cache_write_tokens * price.cache_write + usage.cache_read_tokens * price.cache_read)
    return total / 1_000_000
