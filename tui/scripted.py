"""A scripted stand-in for a session: it publishes events it is handed, through the real bridge.

Used by the console benchmark and by snapshot tests that need a stage frozen at an exact point:
the stage, the bridge and the widgets are the real ones; only the engine behind them is replaced
by a list of events. It never calls a provider (there is none).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from types import SimpleNamespace

from promptdesk.core.engine import heap
from promptdesk.core.record.events import BaseEvent, CloseEvent
from promptdesk.tui.formats.registry import DEFAULT
from promptdesk.tui.snapshot import StageState


class ScriptedSession:
    """Looks like a `promptdesk.core.engine.session.Session` to the console; `publish` plays events into it."""

    def __init__(self, cast: dict[str, str], title: str = "Scripted scene", *, max_beats: int = 50,
                 isolation: str = "b", coordinator: str = "C", run_dir: str = "runs/scripted") -> None:
        self.scene = SimpleNamespace(title=title, name="scripted")
        self.state = StageState(format=DEFAULT, turns_mode="parallel", isolation=isolation, coordinator=coordinator,
                                cast=dict(cast), max_beats=max_beats, run_dir=run_dir)
        self.controls: list[tuple[str, tuple[object, ...]]] = []
        """Every control the console sent, in order (`("inject_event", ("text",))`, ...)."""
        self._subscribers: list[Callable[[BaseEvent], None]] = []
        self._closed = asyncio.Event()

    def subscribe(self, callback: Callable[[BaseEvent], None]) -> Callable[[], None]:
        """As `Session.subscribe`: call `callback(event)` for every event; returns an unsubscribe."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def publish(self, events: Iterable[BaseEvent]) -> None:
        """Emit events to every subscriber, as the engine does (synchronously, in the loop), then,
        while running, settle the heap as the engine does at its safe point after each beat
        (`heap.settle`; the console hands the frozen heap back when the session ends)."""
        for event in events:
            self._track(event)
            for callback in list(self._subscribers):
                callback(event)
        if self.state.status in ("running", "paused"):
            heap.settle()

    def _track(self, event: BaseEvent) -> None:
        state = self.state
        if event.beat is not None:
            state.beat = event.beat
        state.elapsed_s = max(state.elapsed_s, event.t)
        if event.type == "speak" and getattr(event, "action", "speak") != "silent":
            state.turns[event.from_] += 1
            state.note_tone(event.from_, getattr(event, "tone", None))
        if isinstance(event, CloseEvent):
            state.status, state.close_reason = "closed", event.reason
            self._closed.set()

    async def run(self) -> SimpleNamespace:
        """Wait until a close event is published (or `stop()`), like a session running to its close."""
        self.state.status = "running"
        await self._closed.wait()
        self.state.status = "closed"
        return SimpleNamespace(run_dir=Path(self.state.run_dir), close_reason=self.state.close_reason or "stop",
                               goal_achieved=False, beats=self.state.beat + 1, errors=0)

    def stop(self) -> None:
        """Record the control and end `run()` (reason `stop` unless a close was published)."""
        self.controls.append(("stop", ()))
        self.state.close_reason = self.state.close_reason or "stop"
        self._closed.set()

    def pause(self) -> None:
        """Record the control; the status shows paused."""
        self.controls.append(("pause", ()))
        self.state.status = "paused"

    def resume(self) -> None:
        """Record the control; the status shows running."""
        self.controls.append(("resume", ()))
        self.state.status = "running"

    def inject_event(self, text: str) -> None:
        """Record the control (nothing is played: the script decides what happens next)."""
        self.controls.append(("inject_event", (text,)))

    def add_note(self, text: str, to: str | None = None) -> None:
        """Record the control."""
        self.controls.append(("add_note", (text, to)))

    def direct(self, name: str, **arguments: object) -> None:
        """Record a format's own control (`(name, (("argument", value), ...))`)."""
        self.controls.append((name, tuple(arguments.items())))
