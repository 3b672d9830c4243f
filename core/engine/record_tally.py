"""What the checks after every beat read of the whole record, kept as the record grows.

The coordinator's view holds every non-silent speech so far (its words and speaker, for goal
markers) and every world event its judge suggested. Read by scanning all the events each beat, that
costs the whole record every beat: a crowd's beat records thousands of events, so a long scene's
checks grew with its length. `RecordTally` reads each event once.
"""

from __future__ import annotations

from promptdesk.core.engine.coordinator import closes_naturally
from promptdesk.core.record.events import BaseEvent, SpeakEvent


class RecordTally:
    """Non-silent speeches (words, speaker names), the judge's suggestions not withheld, in order, and who
    has taken leave (`left`)."""

    def __init__(self) -> None:
        self._events: list[BaseEvent] | None = None
        self.read = 0
        """How many events of the record it has read."""
        self.words: list[str] = []
        self.speakers: list[str] = []
        self._suggested: dict[str, None] = {}
        self.left: set[str] = set()
        """The actors (slugs) whose latest line took leave (a farewell, an exit, `[SILENT, *walks out*]`):
        one who speaks again without taking leave is back in the scene."""

    def update(self, events: list[BaseEvent], cast: dict[str, str]) -> RecordTally:
        """Read the `events` recorded since the last update (all of them again if the record was
        replaced); `cast` names each speaker (slug to display name)."""
        if events is not self._events or len(events) < self.read:
            self.__init__()
            self._events = events
        for event in events[self.read:]:
            if isinstance(event, SpeakEvent):
                if closes_naturally(event):
                    self.left.add(event.from_)
                elif event.action != "silent":
                    self.left.discard(event.from_)
                if event.action != "silent":
                    self.words.append(event.text)
                    self.speakers.append(cast.get(event.from_, event.from_))
            elif event.type == "decision":
                extra = event.model_extra or {}
                if extra.get("decision") == "suggest_event" and not extra.get("withheld"):
                    self._suggested.setdefault(event.text)
        self.read = len(events)
        return self

    @property
    def suggested(self) -> list[str]:
        """Each suggestion once, in the order first made."""
        return list(self._suggested)
