"""A session as everything inside a run sees it: the actors, the recorder, the state, the event
stream and the control channel (`promptdesk.core.engine.session.Session` adds the run loop).

Outside code (the console, the batch runner) talks to a session through two things only:
- the event stream: `subscribe(callback)`; every recorded event, plus live `DeltaEvent`s;
- the control channel: `stop()`, `pause()`, `resume()`, `inject_event(text)`, `add_note(text, to)`,
  `direct(name, **arguments)` (a control only the session's format has, e.g. the roundtable's
  escalation answer).
Controls take effect at the next safe point (between beats); `stop()` during a beat cancels the
in-flight calls cleanly. Turns, checks, journals and formats take a `Stage`, so that none of them
needs the run loop that calls them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from promptdesk.core.engine import heap, suggestions
from promptdesk.core.engine.record_tally import RecordTally
from promptdesk.core.engine.actors import Actor
from promptdesk.core.engine.briefing import note_line
from promptdesk.core.protocol.lines import direction, world_event_line
from promptdesk.core.clock import Clock, RealClock
from promptdesk.core.engine.pacing import SLICE_S, Pace, clamp
from promptdesk.core.engine.coordinator import Decision, JudgeCoordinator, RuleCoordinator
from promptdesk.core.errors import RecordingError
from promptdesk.core.record.events import COORDINATOR, OPERATOR, BaseEvent, CallEvent, DeltaEvent, GenericEvent
from promptdesk.core.engine.outcome import PROVIDER_ERROR, CallHealth
from promptdesk.core.providers.base import Provider, Request
from promptdesk.core.record.recorder import Recorder
from promptdesk.core.protocol.sanitize import mend
from promptdesk.core.engine.scene import Scene
from promptdesk.core.engine.state import SessionState
from promptdesk.core.engine.winding import Winding

Subscriber = Callable[[BaseEvent], None]


class SceneStopped(Exception):
    """Raised at a safe point once the operator has stopped the scene."""


class SceneClosed(RuntimeError):
    """A world event or note came too late: the scene has closed (or is closing) and will not deliver it."""

    def __init__(self) -> None:
        super().__init__("the scene has closed")


class Stage:
    """A session as its turns, checks and formats see it: its actors, recorder, state, event stream
    and control channel. `promptdesk.core.engine.session.Session` adds the run loop."""

    def __init__(self, scene: Scene, actors: list[Actor], *, fmt: Any, isolation: str, coordinator: RuleCoordinator | JudgeCoordinator,
                 run_dir: Path, notes: str, start_info: dict[str, Any], clock: Clock | None = None,
                 max_beats: int | None = None, budget_usd: float | None = None,
                 characters: dict[str, Any] | None = None, write_character_journals: bool = True,
                 judge_provider: Provider | None = None, pace_s: float = 0.0) -> None:
        self.scene = scene
        self.format = fmt
        """The format this session plays (a `promptdesk.core.engine.format.Format`: its turn policy, record lines
        and own controls)."""
        self.actors = {actor.slug: actor for actor in actors}
        self.coordinator = coordinator
        self.clock = clock or RealClock()
        self.recorder = Recorder(run_dir, fmt.lines)
        self.notes = notes
        self.start_info = start_info
        self.budget_usd = budget_usd
        self.judge_provider = judge_provider
        self.characters = characters or {}
        self.write_character_journals = write_character_journals
        self.journal_step = True
        """False with `--journals none`: no journal step at all (no call, no entry)."""
        self.state = SessionState(format=scene.format, turns_mode=scene.turns, isolation=isolation,
                                  coordinator=getattr(coordinator, "role", "C"),
                                  cast={a.slug: a.name for a in actors},
                                  max_beats=max_beats or scene.limits.beats_for(len(actors)), run_dir=str(run_dir))
        self.pace = Pace(pace_s)
        """The minimum seconds per beat, waited at the safe point (`set_pace` changes it)."""
        self.state.pace_s = self.pace.seconds
        self.nudged: dict[str, int] = {}
        self.winding = Winding()
        """Where the scene is in winding down (`promptdesk.core.engine.winding`)."""
        self.suggested_events = "off"
        """What becomes of a world event the coordinator suggests: `inject` it, `ask` the operator
        (`accept_suggestion`), or `off` (recorded as the coordinator's decision only)."""
        self.health = CallHealth([a.slug for a in actors])
        """Succeeded and failed calls; see `promptdesk.core.engine.outcome`."""
        self.failure: str | None = None
        """Why the run was stopped because its calls fail (`abort`), else None."""
        self.vetted: tuple[tuple[str, int], str | None] | None = None
        """The last suggested world event checked for private material (text and beat), and why it was
        withheld (None: clean); see `promptdesk.core.engine.suggestions`."""
        self.fired_events: set[int] = set()
        self.public_lines: list[str] = []
        self._subscribers: list[Subscriber] = []
        self._t0 = 0.0
        self._stopped = False
        self._stop_line: str | None = None
        self._files_written = False
        self._running = asyncio.Event()
        self._running.set()
        self._pending: list[tuple[str, str, str | None]] = []
        self._taking_controls = True
        self._tasks: set[asyncio.Task[Any]] = set()
        self.format_state: Any = None
        """The format's own state (opaque to the engine): set by the format's setup or its play."""
        self.private_record: dict[str, Any] | None = None
        """What `private.json` records at the start (`promptdesk.core.record.private`): set by `build_session`
        (and written at the start), or read back by a resume or a take (never rewritten); the leak
        check of suggested world events reads it."""
        self.seam: dict[str, Any] | None = None
        """A resumed run (`promptdesk.core.casting.resume`) or a take (`promptdesk.core.casting.branch`): the fields of the
        event that marks where this process took the record up (`seam_type`); the log is already open."""
        self.seam_type = "resume"
        """The type of that event: `resume`, or `branch` for a take."""
        self.journal_resume: tuple[list[str], list[Any]] | None = None
        """A run resumed in its journal step (`promptdesk.core.casting.journal_resume`): the actors whose entries
        are still to be written, and the recorded entries their characters' journals miss."""
        self.first_beat = 0
        """The beat the turn policy starts from (a resumed run replays its cut beat)."""
        self.t_offset = 0.0
        """Seconds already on the record when this process started (a resumed run continues its `t`)."""
        self.notices: list[str] = []
        """Setup notices the operator must see before the run (e.g. a participant left offline)."""
        self.tally = RecordTally()
        """What the checks read of the whole record every beat, kept as it grows (`record_tally`)."""
        self.evaluators: list[Any] = []
        """Who scores the actors after the close (`promptdesk.core.engine.evaluation.Evaluator`s; none:
        no evaluation step), set by `promptdesk.core.casting.evaluators`."""

    # -- the event stream -------------------------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback(event)` for every event from now on; returns an unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def now(self) -> float:
        """Seconds since the scene started, as recorded in every event's `t`."""
        return round(self.clock.now() - self._t0, 4)

    def emit(self, event: BaseEvent) -> BaseEvent:
        """Record an event (unless it is a live delta) and publish it to every subscriber.

        A subscriber that raises is logged to `debug.log`; the event stays recorded and the run goes on.
        The event is durable before anyone is shown it; while the scene runs (`Recorder.hold`), only
        the `route` events wait for the next flush or the safe point (`promptdesk.core.record.recorder`)."""
        if not isinstance(event, DeltaEvent):
            self.recorder.hold = self.state.status == "running"
            self.recorder.record(event)
            self._account(event)
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception as exc:  # noqa: BLE001 - a display must never cost the record
                self.recorder.log("error", f"subscriber {callback!r} failed on a {event.type} event: {exc!r}")
        return event

    def say(self, type_: str, text: str, *, target: str | None = None, source: str = COORDINATOR,
            **extra: Any) -> BaseEvent:
        """Emit a coordinator or operator event of a generic type."""
        beat = extra.pop("beat", self.state.beat)
        return self.emit(GenericEvent(t=self.now(), **{"from": source}, type=type_, text=text,
                                      target=target, beat=beat, **extra))

    def _account(self, event: BaseEvent) -> None:
        self.state.elapsed_s = event.t
        if isinstance(event, CallEvent):
            self.state.tokens += event.tokens
            self.state.cost_usd += event.cost_usd or 0.0
            self.state.unknown_usage += event.unknown

    # -- the control channel ----------------------------------------------------------------

    def stop(self) -> None:
        """Stop the scene now: in-flight calls are cancelled, the run is closed with reason `stop`.
        During the journal step, the entries not yet written are abandoned (a `stop` event says so)."""
        if self._stopped or self._files_written or self.state.status == "closed":
            return
        self._stopped = True
        self._running.set()
        try:
            if self.state.status == "closing":
                self.say("stop", "Journal step stopped by the operator", source=OPERATOR)
            elif self.state.status != "ready":
                self.say("stop", "Scene stopped by the operator", source=OPERATOR)
        except RecordingError:
            pass  # the run is already stopping on it; the failure is what gets reported
        finally:
            self._cancel_tasks()

    def _cancel_tasks(self) -> None:
        """Cancel every in-flight call but the asking one (whose failed call stopped the run: it ends by itself)."""
        asking = asyncio.current_task() if asyncio.events._get_running_loop() else None  # noqa: SLF001
        for task in (t for t in list(self._tasks) if t is not asking):
            task.cancel()

    def abort(self, cause: str) -> None:
        """Stop a run that cannot succeed (its calls fail): in-flight calls are cancelled and the run
        is closed with reason `provider-error`, `cause` in a `system` event and the close text. The
        event is said by `announce_stop`: after the failed turn that caused it (an actor's call fails,
        the run is stopped, then its turn records the failure), at the latest before the close."""
        if self.failure or self._stopped or self.state.status in ("closed", "closing"):
            return
        self.failure = cause
        self._stop_line = f"Run stopped: {cause}"
        self._stopped = True
        self._running.set()
        self._cancel_tasks()

    def announce_stop(self) -> None:
        """Say why the run was stopped (`abort`), once."""
        line, self._stop_line = self._stop_line, None
        if line:
            self.say("system", line, reason=PROVIDER_ERROR)

    def _recording_failed(self, error: RecordingError) -> None:
        """The run folder can no longer be written: stop everything at once (no more calls, no more
        spending), without a `stop` event or a close reason the record could not hold anyway."""
        self._stopped = True
        self._running.set()
        self._cancel_tasks()

    def pause(self) -> None:
        """Hold the scene at the next safe point until `resume()`."""
        if self.state.status == "running":
            self._running.clear()
            self.state.status = "paused"
            self.say("pause", "Scene paused by the operator", source=OPERATOR)

    def resume(self) -> None:
        """Continue a paused scene."""
        if self.state.status == "paused":
            self.state.status = "running"
            self.say("resume", "Scene resumed by the operator", source=OPERATOR)
            self._running.set()

    def inject_event(self, text: str) -> None:
        """Queue a world event; every actor receives it at the next beat. Raises `SceneClosed` once the
        scene is closing (a queued event is always recorded, never dropped), `ValueError` past its limit."""
        self._still_open()
        if text := direction(text, "world event"):
            self._pending.append(("event", text, None))

    def add_note(self, text: str, to: str | None = None) -> None:
        """Queue a director's note for every actor, or for one (`to` is a cast slug). Raises
        `SceneClosed` once the scene is closing, `ValueError` past its limit or for no such actor."""
        self._still_open()
        if to is not None and to not in self.actors:
            raise ValueError(f"no actor '{to}' in this scene (cast: {', '.join(self.actors)})")
        if to is not None and to in self.health.unavailable:
            raise ValueError(f"{self.state.cast.get(to, to)} is no longer on the stage "
                             f"({self.health.unavailable[to]}): no note can reach them")
        if text := direction(text, "director's note"):
            self._pending.append(("note", text, to))

    def suggest(self, text: str) -> None:
        """The coordinator suggested a world event: inject it, hold it for the operator (the latest
        suggestion replaces an older one), or leave it in its decision event, as `suggested_events` says.
        First it is checked for private material (`promptdesk.core.engine.suggestions`): one that carries
        any is withheld, said so without its words, and never delivered."""
        text = mend(text.strip())
        if not text or self.suggested_events == "off":
            return
        why = suggestions.why_withheld(self, text)
        if why:
            suggestions.withhold(self, why)
            return
        self.state.withheld = None
        if self.suggested_events == "inject":
            self.world_event(text, source=COORDINATOR, suggested_by=COORDINATOR)
        else:
            self.state.suggestion = text

    def accept_suggestion(self) -> str:
        """Queue the pending suggested world event for the next beat (recorded from the operator,
        `suggested_by` the coordinator); returns its text. ValueError when none is pending, `SceneClosed`
        once the scene is closing."""
        self._still_open()
        text, self.state.suggestion = self.state.suggestion, None
        if text is None:
            raise ValueError("the coordinator has no suggested world event pending")
        self._pending.append(("suggested", text, None))
        return text

    def _still_open(self) -> None:
        if self._stopped or not self._taking_controls or self.state.status in ("closing", "closed"):
            raise SceneClosed

    def set_pace(self, seconds: float) -> float:
        """Set the minimum seconds per beat (0 to 60); it applies from the next safe point, and a change is
        recorded (a `pace` event, so that the replay shows it). Returns it."""
        before, self.pace.seconds = self.pace.seconds, clamp(seconds)
        self.state.pace_s = self.pace.seconds
        if self.pace.seconds != before and self.state.status not in ("closing", "closed"):
            self.say("pace", f"Pace: {self.pace.seconds:g} s a beat", source=OPERATOR, pace_s=self.pace.seconds)
        return self.pace.seconds

    def direct(self, name: str, **arguments: Any) -> None:
        """A control only this session's format has (e.g. `answer_escalation` with `decision` and
        `text`); ValueError when the format has no such control or cannot take it now."""
        control = self.format.controls.get(name)
        if control is None:
            raise ValueError(f"a {self.format.name} session has no control {name!r}")
        control(self, **arguments)

    async def safe_point(self, settle: bool = True) -> None:
        """Between beats: settle the heap (unless the beat will: `settle=False`), flush the beat's
        record, honour stop and pause, then deliver queued world events and notes."""
        if settle:
            heap.settle()
        self.recorder.commit()
        if self._stopped:
            raise SceneStopped
        await self._keep_pace()
        await self._running.wait()
        if self._stopped:
            raise SceneStopped
        self.pace.began(self.clock.now())
        self._deliver_pending()

    def _deliver_pending(self) -> None:
        """Record and route every queued world event and note (at a safe point, or last thing at the close)."""
        pending, self._pending = self._pending, []
        for kind, text, to in pending:
            if kind == "event":
                self.world_event(text, source=OPERATOR)
            elif kind == "suggested":
                self.world_event(text, source=OPERATOR, suggested_by=COORDINATOR)
            else:
                self.director_note(text, to, source=OPERATOR)

    async def _keep_pace(self) -> None:
        """Wait until the last beat has lasted the pace (in slices, so a new pace applies at once)."""
        while (wait := self.pace.remaining(self.clock.now())) > 0:
            try:
                await self.track(asyncio.ensure_future(self.clock.sleep(min(wait, SLICE_S))))
            except asyncio.CancelledError:
                if self._stopped:
                    raise SceneStopped from None
                raise
            if self._stopped:
                raise SceneStopped

    def world_event(self, text: str, *, source: str, suggested_by: str | None = None) -> None:
        """Record a world event (with who suggested it, when the coordinator did) and route it to every actor."""
        self.say("event", text, source=source, **({"suggested_by": suggested_by} if suggested_by else {}))
        self.public_lines.append(world_event_line(text))
        for actor in self.actors.values():
            actor.receive(world_event_line(text))

    def director_note(self, text: str, to: str | None, *, source: str, reason: str | None = None) -> None:
        """Record a note and route it to one actor or all; role A's judge sees operator notes too."""
        self.say("note", text, target=to, source=source, reason=reason)
        for slug, actor in self.actors.items():
            if to is None or slug == to:
                actor.receive(note_line(text))
        if source == OPERATOR and isinstance(self.coordinator, JudgeCoordinator):
            self.coordinator.director_notes.append(text)

    @property
    def stopped(self) -> bool:
        """True once the operator has stopped the scene."""
        return self._stopped

    def track(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        """Register an in-flight call so that `stop()` can cancel it."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def ask_judge(self, request: Request) -> str:
        """Send a coordinator judge's request (the run loop's: `Session.ask_judge`)."""
        raise NotImplementedError

    async def check(self, new_speech: list) -> Decision | None:
        """After a beat: the limits, then the coordinator (the run loop's: `Session.check`)."""
        raise NotImplementedError
