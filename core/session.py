"""A session: actors, a recorder and a turn policy on one async engine.

Outside code (the console, the batch runner) talks to a session through two things only:
- the event stream: `subscribe(callback)`; every recorded event, plus live `DeltaEvent`s;
- the control channel: `stop()`, `pause()`, `resume()`, `inject_event(text)`, `add_note(text, to)`,
  `answer_escalation(decision, text)` (roundtable).
Controls take effect at the next safe point (between beats); `stop()` during a beat cancels the
in-flight calls cleanly.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core import checks, journals, policies, turn
from core.actors import Actor
from core.briefing import note_line
from core.formatting import world_event_line
from core.clock import Clock, RealClock
from core.pacing import SLICE_S, Pace, clamp
from core.coordinator import Decision, JudgeCoordinator, RuleCoordinator
from core.errors import ProviderError
from core.events import COORDINATOR, OPERATOR, BaseEvent, CallEvent, CloseEvent, DeltaEvent, GenericEvent
from core.providers.base import Provider, Request
from core.recorder import ACTIVE, DebugLogHandler, Recorder
from core.roundtable.escalation import EscalationDesk
from core.scenes import Scene
from core.state import SessionState

Subscriber = Callable[[BaseEvent], None]


class SceneStopped(Exception):
    """Raised at a safe point once the operator has stopped the scene."""


class SceneClosed(RuntimeError):
    """A world event or note came too late: the scene has closed (or is closing) and will not deliver it."""

    def __init__(self) -> None:
        super().__init__("the scene has closed")


@dataclass
class SessionResult:
    """What a finished run returns: where it was written and how it ended."""

    run_dir: Path
    close_reason: str
    goal_achieved: bool
    beats: int
    errors: int


class Session:
    """Owns the actors, the recorder and the coordinator for one run of one scene."""

    def __init__(self, scene: Scene, actors: list[Actor], *, isolation: str, coordinator: RuleCoordinator | JudgeCoordinator,
                 run_dir: Path, notes: str, start_info: dict[str, Any], clock: Clock | None = None,
                 max_beats: int | None = None, budget_usd: float | None = None,
                 characters: dict[str, Any] | None = None, write_character_journals: bool = True,
                 judge_provider: Provider | None = None, pace_s: float = 0.0) -> None:
        self.scene = scene
        self.actors = {actor.slug: actor for actor in actors}
        self.coordinator = coordinator
        self.clock = clock or RealClock()
        self.recorder = Recorder(run_dir)
        self.notes = notes
        self.start_info = start_info
        self.budget_usd = budget_usd
        self.judge_provider = judge_provider
        self.characters = characters or {}
        self.write_character_journals = write_character_journals
        self.state = SessionState(format=scene.format, turns_mode=scene.turns, isolation=isolation,
                                  coordinator=getattr(coordinator, "role", "C"),
                                  cast={a.slug: a.name for a in actors},
                                  max_beats=max_beats or scene.limits.max_beats, run_dir=str(run_dir))
        self.pace = Pace(pace_s)
        """The minimum seconds per beat, waited at the safe point (`set_pace` changes it)."""
        self.state.pace_s = self.pace.seconds
        self.nudged: dict[str, int] = {}
        self.fired_events: set[int] = set()
        self.public_lines: list[str] = []
        self._subscribers: list[Subscriber] = []
        self._t0 = 0.0
        self._stopped = False
        self._running = asyncio.Event()
        self._running.set()
        self._pending: list[tuple[str, str, str | None]] = []
        self._taking_controls = True
        self._tasks: set[asyncio.Task[Any]] = set()
        self.escalations = EscalationDesk()
        self.roundtable: Any = None
        """Roundtable format: the discussion's state (phase, round, consensus, conflicts) for display."""
        self.roundtable_setup: Any = None
        self.roundtable_file: Any = None

    # -- the event stream -------------------------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback(event)` for every event from now on; returns an unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def now(self) -> float:
        """Seconds since the scene started, as recorded in every event's `t`."""
        return round(self.clock.now() - self._t0, 4)

    def emit(self, event: BaseEvent) -> BaseEvent:
        """Record an event (unless it is a live delta) and publish it to every subscriber."""
        if not isinstance(event, DeltaEvent):
            self.recorder.record(event)
            self._account(event)
        for callback in list(self._subscribers):
            callback(event)
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
            self.state.tokens += event.input_tokens + event.output_tokens + event.cache_write_tokens + event.cache_read_tokens
            self.state.cost_usd += event.cost_usd

    # -- the control channel ----------------------------------------------------------------

    def stop(self) -> None:
        """Stop the scene now: in-flight calls are cancelled, the run is closed with reason `stop`."""
        if self._stopped or self.state.status in ("closed", "closing"):
            return
        self._stopped = True
        self._running.set()
        if self.state.status != "ready":
            self.say("stop", "Scene stopped by the operator", source=OPERATOR)
        for task in list(self._tasks):
            task.cancel()

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
        scene is closing: a queued event is always recorded, never dropped."""
        self._still_open()
        if text.strip():
            self._pending.append(("event", text.strip(), None))

    def add_note(self, text: str, to: str | None = None) -> None:
        """Queue a director's note for every actor, or for one (`to` is a cast slug). Raises
        `SceneClosed` once the scene is closing."""
        self._still_open()
        if to is not None and to not in self.actors:
            raise ValueError(f"no actor '{to}' in this scene (cast: {', '.join(self.actors)})")
        if text.strip():
            self._pending.append(("note", text.strip(), to))

    def _still_open(self) -> None:
        if self._stopped or not self._taking_controls or self.state.status in ("closing", "closed"):
            raise SceneClosed

    def set_pace(self, seconds: float) -> float:
        """Set the minimum seconds per beat (0 to 60); it applies from the next safe point. Returns it."""
        self.pace.seconds = self.state.pace_s = clamp(seconds)
        return self.pace.seconds

    def answer_escalation(self, decision: str, text: str | None = None) -> None:
        """Answer the roundtable's open escalation: `accept` the facilitator's recommendation, give your
        `own` decision (`text`), or `continue` the discussion. Raises ValueError when none is open."""
        self.escalations.answer(decision, text)

    async def safe_point(self) -> None:
        """Between beats: honour stop and pause, then deliver queued world events and notes."""
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

    def world_event(self, text: str, *, source: str) -> None:
        """Record a world event and route it to every actor."""
        self.say("event", text, source=source)
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

    async def ask_judge(self, request: Request) -> str:
        """Send a coordinator judge's request (recorded and priced like any other call)."""
        if self.judge_provider is None:
            raise ProviderError("no provider for the coordinator judge")
        completion = await turn.call(self, self.judge_provider, request)
        return completion.text

    def track(self, task: asyncio.Task[Any]) -> asyncio.Task[Any]:
        """Register an in-flight call so that `stop()` can cancel it."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- the run ----------------------------------------------------------------------------

    async def run(self) -> SessionResult:
        """Play the scene to its close and write every file of the run folder."""
        self.recorder.open()
        self.recorder.write_notes(self.notes)
        handler = DebugLogHandler(self.recorder)
        logging.getLogger("promptdesk").addHandler(handler)
        token = ACTIVE.set(self.recorder)
        try:
            return await self._run()
        finally:
            ACTIVE.reset(token)
            logging.getLogger("promptdesk").removeHandler(handler)

    async def _run(self) -> SessionResult:
        self._t0 = self.clock.now()
        self.state.status = "running"
        self.say("start", f"Scene {self.scene.name} started", **self.start_info)
        for actor in self.actors.values():
            self.say("spawn", f"Spawning actor for character {actor.slug}", target=actor.slug)
            self.say("brief", "Sent actor system prompt + profile + journal + scene perspective", target=actor.slug)
        decision = await self._play()
        self._taking_controls = False
        self._deliver_pending()
        self.state.status = "closing"
        self.state.close_reason = decision.reason
        self.emit(CloseEvent(t=self.now(), **{"from": COORDINATOR}, text=decision.text or f"Scene closed: {decision.reason}",
                             reason=decision.reason or "natural", goal_achieved=decision.goal_achieved, beat=self.state.beat))
        if decision.reason != "stop":
            await journals.write_all(self)
        self.recorder.finish(datetime.now())
        await self._close_providers()
        self.state.status = "closed"
        errors = sum(1 for e in self.recorder.events if e.type == "system" and e.target)
        return SessionResult(self.recorder.run_dir, decision.reason or "natural", decision.goal_achieved,
                             self.state.beat + 1, errors)

    async def _close_providers(self) -> None:
        """Release every provider's connections (each shared instance once)."""
        providers = {id(p): p for p in [a.provider for a in self.actors.values()] + [self.judge_provider] if p}
        for provider in providers.values():
            try:
                await provider.aclose()
            except Exception as exc:  # a failed close must not lose a finished run
                self.recorder.log("warning", f"closing provider {provider.name} failed: {exc!r}")

    async def _play(self) -> Decision:
        try:
            return await policies.play(self)
        except SceneStopped:
            return Decision(decision="close", reason="stop", text="Scene stopped by the operator")
        except Exception as exc:
            self.recorder.log("error", f"engine failure: {exc!r}")
            self.say("system", f"The scene ended on an engine error: {exc}")
            return Decision(decision="close", reason="error", text=str(exc))

    async def check(self, new_speech: list) -> Decision | None:
        """After a beat: the limits, then the coordinator. Returns a close decision or None."""
        return await checks.after_beat(self, new_speech)
