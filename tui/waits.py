"""Who the stage is waiting on: each actor asked for a turn and not yet answering, since when.

Folded from the events alone (no engine internals): a scene's beat asks every actor (parallel turns) or
the one actor it names (sequential turns: the beat's `target`), a roundtable's question every participant, a collaboration's `agent_call` the participant it names;
any sign of an answer from an actor (a streamed fragment, its thinking or speech, its call's record,
a failure or a correction about it) ends the wait, and a close ends them all. The Session panel
shows the waits longer than `SLOW_S` ("Alice  waiting 12 s"), so a slow provider reads as slow, and at once
a wait held up by a retry, with its notice (a live `delta` on the `retry` channel: the 429 and the pause it asked for).
"""

from __future__ import annotations

from collections.abc import Iterable

from promptdesk.core.record.events import BaseEvent

SLOW_S = 5.0
"""A wait is shown once it is this long (a provider answering at its usual pace shows nothing)."""
ANSWERS = frozenset({"delta", "think", "speak", "answer", "agent_response"})
"""Event types from an actor that show it is answering."""
ABOUT = frozenset({"call", "system", "correct"})
"""Event types about an actor (its `target`) that end its wait: its call recorded, failed or corrected."""


class Waits:
    """Since when each actor has been waited on (scene time, as the events record it)."""

    def __init__(self, cast: Iterable[str], parallel: bool = True) -> None:
        self.cast = list(cast)
        self.parallel = parallel
        self.since: dict[str, float] = {}
        self.why: dict[str, str] = {}
        """The latest retry notice of each actor still waited on (`retry 1/3 in 4 s after … HTTP 429 …`)."""

    def feed(self, events: Iterable[BaseEvent]) -> None:
        """Fold a batch of events in."""
        for event in events:
            if event.type == "delta" and getattr(event, "channel", "") == "retry" and event.from_ in self.cast:
                self.since.setdefault(event.from_, event.t)
                self.why[event.from_] = event.text
            elif (event.type == "beat" and self.parallel) or event.type == "question":
                self.since = {slug: event.t for slug in self.cast}
            elif event.type == "beat" and event.target in self.cast:
                self.since = {event.target: event.t}
            elif event.type == "agent_call" and event.target in self.cast:
                self.since[event.target] = event.t
            elif event.type in ANSWERS and event.from_ in self.since:
                del self.since[event.from_]
            elif event.type in ABOUT and event.target in self.since:
                del self.since[event.target]
            elif event.type in ("close", "stop"):
                self.since.clear()
            self.why = {slug: why for slug, why in self.why.items() if slug in self.since}

    def slow(self, now: float) -> dict[str, float]:
        """The waits at scene time `now` that are at least `SLOW_S` long, or held up by a retry, in cast order."""
        return {slug: now - self.since[slug] for slug in self.cast
                if slug in self.since and (now - self.since[slug] >= SLOW_S or slug in self.why)}
