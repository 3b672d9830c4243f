"""The one price table: USD per million tokens, by model-name prefix, as of `PRICES_AS_OF`.

Every cost Promptdesk shows comes from `cost_usd`. A model is matched by its longest prefix in
`PRICES` (a gateway-style `vendor/` prefix is ignored), so dated snapshots (`...-20251001`) take
their model's price, and a newer version of a known family falls back to the family row. Anything
unmatched (local models behind an OpenAI-compatible server, a family newer than this table) costs
0 and `is_priced` says so, so a report can flag the total as incomplete. The offline improviser
always costs 0, and that price is known (`is_priced` is True for it).

Standard tier, short-context list prices (Haiku 5.5 above 100K prompt tokens and OpenAI above
272K input tokens bill more; not modelled). Anthropic bills `input_tokens` without the cached part;
`cache_write` is the 5-minute write price. OpenAI bills cache writes only from GPT-5.6 on (1.25x
input); before that a write costs the input price. Update this table, and only this table, when
prices change; keep `PRICES_AS_OF` in step.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from promptdesk.core.providers.base import Usage

PRICES_AS_OF = "2026-11-01"


class Price(NamedTuple):
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _claude(input_: float, output: float, cache_read: float | None = None) -> Price:
    """Anthropic: 5-minute cache writes at 1.25x input; reads at 0.1x input unless stated."""
    return Price(input_, output, round(input_ * 1.25, 6), round(input_ * 0.1, 6) if cache_read is None else cache_read)


def _openai(input_: float, output: float, cached: float, write_surcharge: bool = False) -> Price:
    """OpenAI: cached input at its own rate; writes at 1.25x input from GPT-5.6 on, else at input."""
    return Price(input_, output, round(input_ * 1.25, 6) if write_surcharge else input_, cached)


PRICES: dict[str, Price] = {
    # -- Anthropic ---------------------------------------------------------------------------
    "claude-fable": _claude(10.00, 50.00, 0.25),       # family fallback: Fable 5.1
    "claude-fable-5-1": _claude(10.00, 50.00, 0.25),
    "claude-fable-5": _claude(10.00, 50.00, 1.00),
    "claude-mythos": _claude(10.00, 50.00, 0.25),      # Mythos shares Fable's prices
    "claude-mythos-5-1": _claude(10.00, 50.00, 0.25),
    "claude-mythos-5": _claude(10.00, 50.00, 1.00),
    "claude-opus": _claude(5.00, 25.00),               # family fallback
    "claude-opus-5-5": _claude(4.00, 20.00, 0.20),
    "claude-opus-5": _claude(5.00, 25.00),
    "claude-opus-4-5": _claude(5.00, 25.00),            # 4.5 to 4.8
    "claude-opus-4-6": _claude(5.00, 25.00),
    "claude-opus-4-7": _claude(5.00, 25.00),
    "claude-opus-4-8": _claude(5.00, 25.00),
    "claude-opus-4-1": _claude(15.00, 75.00),
    "claude-opus-4-0": _claude(15.00, 75.00),
    "claude-opus-4-2025": _claude(15.00, 75.00),       # claude-opus-4-20250514
    "claude-3-opus": _claude(15.00, 75.00),
    "claude-sonnet": _claude(3.00, 15.00),             # family fallback; Sonnet 4 to 4.6
    "claude-sonnet-5-5": _claude(2.00, 10.00),
    "claude-sonnet-5": _claude(2.00, 10.00),
    "claude-3-7-sonnet": _claude(3.00, 15.00),
    "claude-3-5-sonnet": _claude(3.00, 15.00),
    "claude-haiku": _claude(1.00, 5.00),               # family fallback; Haiku 4.5
    "claude-haiku-5-5": _claude(0.10, 0.50, 0.01),      # prompts up to 100K tokens
    "claude-3-5-haiku": _claude(0.80, 4.00),
    "claude-3-haiku": Price(0.25, 1.25, 0.30, 0.03),
    # -- OpenAI ------------------------------------------------------------------------------
    "gpt-6-astra": _openai(10.00, 50.00, 1.00, True),
    "gpt-6-sol": _openai(2.00, 10.00, 0.20, True),
    "gpt-6-luna": _openai(0.10, 0.50, 0.01, True),
    "gpt-6.1-sol": _openai(2.00, 10.00, 0.10, True),
    "gpt-6.1-terra": _openai(1.00, 5.00, 0.05, True),
    "gpt-5.6-sol": _openai(4.00, 20.00, 0.40, True),    # promotional price, through 2026-11-21 at least
    "gpt-5.6-terra": _openai(2.00, 12.00, 0.20, True),
    "gpt-5.6-luna": _openai(0.20, 1.20, 0.02, True),
    "gpt-5.5": _openai(5.00, 30.00, 0.50),
    "gpt-5.5-pro": _openai(30.00, 180.00, 30.00),
    "gpt-5.4": _openai(2.50, 15.00, 0.25),
    "gpt-5.4-mini": _openai(0.75, 4.50, 0.075),
    "gpt-5.4-nano": _openai(0.20, 1.25, 0.02),
    "gpt-5.4-pro": _openai(30.00, 180.00, 30.00),
    "gpt-5.2": _openai(1.75, 14.00, 0.175),
    "gpt-5.2-pro": _openai(21.00, 168.00, 21.00),
    "gpt-5.1": _openai(1.25, 10.00, 0.125),
    "gpt-5": _openai(1.25, 10.00, 0.125),
    "gpt-5-mini": _openai(0.25, 2.00, 0.025),
    "gpt-5-nano": _openai(0.05, 0.40, 0.005),
    "gpt-5-pro": _openai(15.00, 120.00, 15.00),
    "gpt-4.1": _openai(2.00, 8.00, 0.50),
    "gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
    "gpt-4o": _openai(2.50, 10.00, 1.25),
    "gpt-4o-2024-05-13": Price(5.00, 15.00, 5.00, 5.00),  # no prompt caching
    "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
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


def input_costs(provider: str, model: str | None, usage: Usage) -> tuple[float, float]:
    """(what this call's input would cost with no cache, what it cost) in USD; (0, 0) when unpriced."""
    price = price_for(provider, model)
    if price is None:
        return 0.0, 0.0
    uncached = (usage.input_tokens + usage.cache_write_tokens + usage.cache_read_tokens) * price.input
    paid = (usage.input_tokens * price.input + usage.cache_write_tokens * price.cache_write
            + usage.cache_read_tokens * price.cache_read)
    return uncached / 1_000_000, paid / 1_000_000


def cache_saving(calls: Iterable[Any]) -> dict[str, Any]:
    """The share of input cost prompt caching saved, by the price table: for the run and per actor.

    `calls` are `call` events (anything with provider, model, target and the four token counts).
    1 - paid / uncached, where uncached bills every input token (written, read or not) at the input
    price; negative when cache writes cost more than the reads saved; 0 with no priced input, None
    (unknown) when that input went only to models the table has no price for."""
    totals: dict[str, list[float]] = {}
    for call in calls:
        if getattr(call, "usage", None) == "unknown":
            continue
        usage = Usage(input_tokens=call.input_tokens, cache_write_tokens=call.cache_write_tokens,
                      cache_read_tokens=call.cache_read_tokens)
        uncached, paid = input_costs(call.provider, call.model, usage)
        for key in ("run", call.target or "?"):
            row = totals.setdefault(key, [0.0, 0.0, 0.0])
            row[0], row[1], row[2] = row[0] + uncached, row[1] + paid, row[2] + (not is_priced(call.provider, call.model))

    def share(row: list[float]) -> float | None:
        return round(1 - row[1] / row[0], 4) if row[0] > 0 else None if row[2] else 0.0

    run = totals.pop("run", [0.0, 0.0, 0.0])
    return {"run": share(run), "perActor": {who: share(row) for who, row in sorted(totals.items())}}


def dollars(amount: float) -> str:
    """A budget as it was given, in dollars: `$0.50`, `$12.345`, `$0.002` (a sub-cent budget is not
    shown as `$0.00`)."""
    text = f"{amount:.6f}".rstrip("0")
    whole, _, cents = text.partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"
