"""The line under the stage that shows what the operator sent and the engine has not yet delivered.

A world event or a note is queued and reaches the actors at the next beat (while paused: after the
resume). Until the engine records it, this line says it is waiting, so that nothing sent looks lost.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static

from promptdesk.core.record.events import BaseEvent
from promptdesk.tui.lines import safe


class QueuedLine(Static):
    """World events and notes sent from the stage and not yet delivered, as (kind, text)."""

    DEFAULT_CSS = """
    QueuedLine { height: auto; max-height: 3; padding: 0 1; display: none; color: $text-warning; }
    QueuedLine.-active { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(markup=False, **kwargs)
        self.queued: list[tuple[str, str, str]] = []
        """`("event" | "note", text, whom)`, in the order they were sent (`whom`: a note's reader, by name)."""
        self.paused = False

    def add(self, kind: str, text: str, paused: bool, whom: str = "everyone") -> None:
        """Note one more world event (`kind` "event") or note (for `whom`: an actor's name, or everyone) sent."""
        self.queued.append((kind, text.strip(), whom))
        self.show(paused)

    def delivered(self, events: Iterable[BaseEvent]) -> None:
        """Take what the engine recorded as delivered (the operator's events and notes) off the line."""
        before = len(self.queued)
        for event in events:
            if event.from_ != "operator" or event.type not in ("event", "note"):
                continue
            same = [i for i, (kind, text, _) in enumerate(self.queued) if kind == event.type and text == event.text]
            kind_only = [i for i, (kind, _, _) in enumerate(self.queued) if kind == event.type]
            if same or kind_only:
                del self.queued[(same or kind_only)[0]]
        if len(self.queued) != before:
            self.show(self.paused)

    def show(self, paused: bool) -> None:
        """Redraw (hidden when nothing waits); `paused` says the delivery waits for the resume."""
        self.paused = paused
        when = "after the resume" if paused else "at the next beat"
        items = [f"world event “{safe(text)}”" if kind == "event" else f"note to {safe(whom)} “{safe(text)}”"
                 for kind, text, whom in self.queued]
        self.update(Content(f"⧗ Queued, delivered {when}: " + " · ".join(items)) if items else Content(""))
        self.set_class(bool(items), "-active")
