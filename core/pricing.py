"""Placeholder until the dated price table lands: every model costs 0."""

from __future__ import annotations


def cost_usd(provider, model, usage) -> float:
    return 0.0


def is_priced(provider, model) -> bool:
    return provider == "offline"
