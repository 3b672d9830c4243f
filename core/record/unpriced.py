"""What a run's record says of the calls it made to models the price table does not know
(`promptdesk.core.providers.pricing`): their cost is unknown, never $0."""

from __future__ import annotations

from collections.abc import Sequence

from promptdesk.core.record.events import BaseEvent, CallEvent
from promptdesk.core.record.takes import unpriced_models


def unpriced_spend(events: list[BaseEvent]) -> str:
    """" + unknown (no price for openai-compatible:llama3)" when a call went to a model the price table
    does not know (its cost is unknown, never $0), else ""."""
    unpriced = unpriced_models(events)
    return f" + unknown (no price for {', '.join(unpriced)})" if unpriced else ""


def unpriced_payers(events: list[BaseEvent], cut: Sequence[BaseEvent] = ()) -> set[str]:
    """Whose calls (an actor's slug, the judge's) went to a model with no known price: their cost is unknown."""
    unpriced = set(unpriced_models(events))
    return {c.target or c.from_ for c in [*cut, *events] if isinstance(c, CallEvent) and f"{c.provider}:{c.model}" in unpriced}
