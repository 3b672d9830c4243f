"""The two pre-experiment choices as the wizard presents them (defined in `promptdesk.core.casting.choices`, which
a headless refusal prints too), and the providers the wizard offers."""

from __future__ import annotations

from promptdesk.core.casting.choices import COORDINATOR, ISOLATION, Choice, Option

__all__ = ["COORDINATOR", "ISOLATION", "PROVIDERS", "Choice", "Option"]

PROVIDERS = ("offline", "anthropic", "openai", "openai-compatible", "claude-code")
"""Providers the wizard offers (the offline improviser needs no key and no network)."""
