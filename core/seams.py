"""Resume seams in `events.jsonl`: which recorded events a resumed run superseded.

When a killed run is resumed, the beat that was cut off is replayed from its start. Its partial
events stay in the append-only log, followed by one `resume` event (`from: coordinator`,
`reason: "restart"`) whose `superseded_from` is the index (among the log's readable events) of the
first event it supersedes. Every reader that builds a view of the run (derived files, replay, the
audit's public text) uses `effective_events`, so nothing appears twice.
"""

from __future__ import annotations

from core.events import BaseEvent

RESTART = "restart"


def is_seam(event: BaseEvent) -> bool:
    """True for the `resume` event a resumed run writes (not an operator's un-pause)."""
    return event.type == "resume" and getattr(event, "reason", None) == RESTART


def effective_events(events: list[BaseEvent]) -> list[BaseEvent]:
    """The events without those superseded by a resume seam (seams themselves are kept)."""
    kept: list[BaseEvent] = []
    for index, event in enumerate(events):
        if is_seam(event):
            start = (event.model_extra or {}).get("superseded_from", index)
            dropped = max(0, index - int(start))
            del kept[len(kept) - min(dropped, len(kept)):]
        kept.append(event)
    return kept
