"""The one dated price table: lookups by prefix, costs per token class, unknown and offline models."""

from __future__ import annotations

import re
from datetime import date

import pytest

from promptdesk.core.providers.pricing import PRICES, PRICES_AS_OF, cost_usd, is_priced, price_for
from promptdesk.core.providers.base import Usage

MILLION = 1_000_000


def test_the_table_is_dated():
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", PRICES_AS_OF)
    assert date.fromisoformat(PRICES_AS_OF) == date(2026, 11, 1)


def test_every_row_is_sane():
    for prefix, price in PRICES.items():
        assert prefix == prefix.lower() and prefix.strip() == prefix
        assert all(value >= 0 for value in price), prefix
        assert price.output >= price.input, prefix
        assert price.cache_read <= price.input, prefix


@pytest.mark.parametrize(("model", "input_", "output"), [
    ("claude-opus-4-8", 5.00, 25.00),
    ("claude-opus-4-5-20251101", 5.00, 25.00),
    ("claude-opus-4-1-20250805", 15.00, 75.00),
    ("claude-opus-4-20250514", 15.00, 75.00),
    ("claude-opus-5", 5.00, 25.00),
    ("claude-opus-5-5", 4.00, 20.00),
    ("claude-sonnet-4-6", 3.00, 15.00),
    ("claude-sonnet-5", 2.00, 10.00),
    ("claude-sonnet-5-5", 2.00, 10.00),
    ("claude-haiku-4-5-20251001", 1.00, 5.00),
    ("claude-haiku-5-5", 0.10, 0.50),
    ("claude-3-5-haiku-20241022", 0.80, 4.00),
    ("claude-fable-5-1", 10.00, 50.00),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4o-2024-08-06", 2.50, 10.00),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o-mini-2024-07-18", 0.15, 0.60),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano-2025-04-14", 0.10, 0.40),
    ("gpt-5", 1.25, 10.00),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-5.4-mini", 0.75, 4.50),
    ("gpt-5.5", 5.00, 30.00),
    ("gpt-5.6-terra", 2.00, 12.00),
    ("gpt-6-luna", 0.10, 0.50),
    ("o1", 15.00, 60.00),
    ("o3-mini", 1.10, 4.40),
    ("o4-mini", 1.10, 4.40),
])
def test_longest_prefix_wins(model, input_, output):
    provider = "anthropic" if model.startswith("claude") else "openai"
    price = price_for(provider, model)
    assert price is not None and (price.input, price.output) == (input_, output)
    assert is_priced(provider, model)


def test_a_cost_adds_up_every_token_class():
    usage = Usage(input_tokens=1000, output_tokens=500, cache_write_tokens=2000, cache_read_tokens=10000)
    # Sonnet 4.6: $3 in, $15 out, $3.75 cache write, $0.30 cache read per million.
    expected = (1000 * 3 + 500 * 15 + 2000 * 3.75 + 10000 * 0.30) / MILLION
    assert cost_usd("anthropic", "claude-sonnet-4-6", usage) == pytest.approx(expected)


def test_openai_cached_input_is_billed_at_the_cached_rate():
    usage = Usage(input_tokens=400, output_tokens=100, cache_read_tokens=600)
    expected = (400 * 2.50 + 100 * 10.00 + 600 * 1.25) / MILLION
    assert cost_usd("openai", "gpt-4o", usage) == pytest.approx(expected)


def test_a_million_output_tokens_cost_the_output_price():
    assert cost_usd("openai", "gpt-4.1-mini", Usage(output_tokens=MILLION)) == pytest.approx(1.60)


@pytest.mark.parametrize(("provider", "model"), [
    ("openai-compatible", "llama3.1:8b"),
    ("openai-compatible", "qwen2.5-coder"),
    ("openai", "some-future-model"),
    ("anthropic", None),
    ("openai", ""),
])
def test_unknown_models_cost_nothing_and_are_flagged(provider, model):
    usage = Usage(input_tokens=10_000, output_tokens=10_000)
    assert cost_usd(provider, model, usage) == 0.0
    assert not is_priced(provider, model)


def test_offline_is_free_and_known_to_be():
    usage = Usage(input_tokens=10_000, output_tokens=10_000, cache_write_tokens=5, cache_read_tokens=5)
    assert cost_usd("offline", "improviser", usage) == 0.0
    assert cost_usd("offline", "gpt-4o", usage) == 0.0
    assert is_priced("offline", "improviser")


def test_a_gateway_prefix_and_case_are_ignored():
    usage = Usage(input_tokens=MILLION)
    assert cost_usd("openai-compatible", "openai/GPT-4o", usage) == pytest.approx(2.50)
    assert cost_usd("openai-compatible", "anthropic/claude-haiku-4-5", usage) == pytest.approx(1.00)


def test_no_usage_costs_nothing():
    assert cost_usd("anthropic", "claude-opus-4-8", Usage()) == 0.0
