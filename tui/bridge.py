"""The only module that knows both a core `Session` and Textual.

The session runs in a Textual worker (an asyncio task on the app's loop, so a key press is
answered while actors are mid-call). Every event it publishes is buffered; the first event of a
batch posts one `SessionBridge.EventsArrived` message, and its handler drains everything that
arrived meanwhile, so high-rate streaming deltas coalesce instead of queueing one message each.
Controls go the other way, through the session's control channel (a format's own ones through
`direct`, by name). Nothing here calls a provider.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from promptdesk.core.record.events import BaseEvent
from promptdesk.tui import heap_keeper


class SessionLike(Protocol):
    """What the console needs from `promptdesk.core.engine.session.Session`: the event stream and the controls."""

    state: Any

    def subscribe(self, callback: Callable[[BaseEvent], None]) -> Callable[[], None]: ...
    async def run(self) -> Any: ...
    def stop(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def inject_event(self, text: str) -> None: ...
    def set_pace(self, seconds: float) -> float: ...
    def add_note(self, text: str, to: str | None = None) -> None: ...
    def direct(self, name: str, **arguments: Any) -> None: ...


class SessionBridge:
    """Runs one session for one screen: events in as messages, controls out."""

    class EventsArrived(Message):
        """New events are waiting: call `SessionBridge.drain()` to take them (a coalesced doorbell)."""

    class Finished(Message):
        """The session's run returned (`result`) or failed (`error`); its run folder is closed."""

        def __init__(self, result: Any = None, error: BaseException | None = None) -> None:
            super().__init__()
            self.result = result
            """The `SessionResult`, when the run returned."""
            self.error = error
            """The exception, when the run itself failed (the scene's own errors are events)."""

    def __init__(self, session: SessionLike, target: MessagePump) -> None:
        self.session = session
        self.target = target
        self.worker: Worker[Any] | None = None
        self._pending: list[BaseEvent] = []
        self._rung = False

    @property
    def status(self) -> str:
        """The session's status: ready, running, paused, closing or closed."""
        return str(self.session.state.status)

    @property
    def live(self) -> bool:
        """True while the scene can still be stopped (started and not yet closed)."""
        return self.worker is not None and self.status in ("ready", "running", "paused")

    @property
    def closing(self) -> bool:
        """True while the closed scene's journal step (or its evaluation) is still being written."""
        return self.worker is not None and not self.worker.is_finished and self.status == "closing"

    def start(self) -> Worker[Any]:
        """Run the session in a worker owned by the target screen."""
        self.worker = self.target.run_worker(self._run(), name="session", group="session", exit_on_error=False)
        return self.worker

    async def _run(self) -> Any:
        unsubscribe = self.session.subscribe(self.on_event)
        heap_keeper.session_started()
        try:
            result = await self.session.run()
        except BaseException as exc:
            self.target.post_message(self.Finished(error=exc))
            raise
        finally:
            heap_keeper.session_ended()
            unsubscribe()
        self.target.post_message(self.Finished(result=result))
        return result

    def on_event(self, event: BaseEvent) -> None:
        """The session's subscriber: buffer the event and ring once per batch."""
        self._pending.append(event)
        if not self._rung:
            self._rung = True
            self.target.post_message(self.EventsArrived())

    @property
    def pending(self) -> int:
        """How many events are waiting to be drained."""
        return len(self._pending)

    def drain(self) -> list[BaseEvent]:
        """Take every event that arrived since the last drain."""
        events, self._pending, self._rung = self._pending, [], False
        return events

    # -- controls (each takes effect at the session's next safe point) ---------------------

    def stop(self) -> None:
        """Stop the scene; the session closes its run folder with reason `stop`."""
        self.session.stop()

    def pause(self) -> None:
        """Hold the scene at the next safe point."""
        self.session.pause()

    def resume(self) -> None:
        """Let a paused scene go on."""
        self.session.resume()

    def set_pace(self, seconds: float) -> float:
        """Set the minimum seconds per beat; returns the pace now in force."""
        return float(self.session.set_pace(seconds))

    def inject_event(self, text: str) -> None:
        """Queue a world event for every actor."""
        self.session.inject_event(text)

    def add_note(self, text: str, to: str | None = None) -> None:
        """Queue a director's note for everyone or one actor (a slug)."""
        self.session.add_note(text, to)

    @property
    def format_state(self) -> Any:
        """The session's own state of its format (opaque here; its console side reads it), or None."""
        return getattr(self.session, "format_state", None)

    def direct(self, name: str, **arguments: Any) -> None:
        """A control only the session's format has (the answer to what it waits for, ...), by name."""
        self.session.direct(name, **arguments)

    async def close(self) -> None:
        """Stop the scene if it is live and wait until its run folder is written and closed."""
        if self.worker is None:
            return
        if self.live:
            self.stop()
        if not self.worker.is_finished:
            try:
                await self.worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass
