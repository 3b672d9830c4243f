"""The live stage: renders a running session's events and sends the operator's controls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING

from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.events import Key
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from promptdesk.tui.bridge import SessionBridge, SessionLike
from promptdesk.tui.commands import binding_commands, copy_run_folder, copy_selection
from promptdesk.tui.formats import registry
from promptdesk.tui.formats.room_bar import RoomBar
from promptdesk.tui.lines import safe, shown_path
from promptdesk.tui.replay_ready import ReplayReady
from promptdesk.tui.stage_controls import pace_told, told_why, why_not
from promptdesk.tui.stage_directions import Directions
from promptdesk.tui.stage_room import RoomControls
from promptdesk.tui.waits import Waits
from promptdesk.tui.stage_state import PlayedTime, from_session
from promptdesk.tui.widgets.beat_timeline import BeatTimeline
from promptdesk.tui.widgets.confirm_modal import ConfirmModal
from promptdesk.tui.widgets.key_bar import KeyBar
from promptdesk.tui.widgets.pane_picker import PaneControls, panes_binding
from promptdesk.tui.widgets.queued_line import QueuedLine
from promptdesk.tui.widgets.stage_view import StageView
from promptdesk.tui.widgets.wrapped_log import WrappedLog

if TYPE_CHECKING:
    from promptdesk.core.casting.build import RunOptions

PACE_KEYS = Binding.Group("Pace", compact=True)
"""`+` and `-` share one footer entry: "+- Pace"."""
CONTROL_EVENTS = frozenset({"pause", "resume", "stop", "close", "start"})
"""Events after which the footer's available actions may have changed (redrawn at once), besides the
format's own (`ConsoleFormat.control_events`)."""
TITLE_STATUS = {"ready": "starting", "running": "live", "paused": "paused", "closing": "closing",
                "closed": "closed"}
"""How the title bar names each status of the session."""
FLUSH_EVERY_S = 0.05
"""Events are rendered in batches at most this often, so the stage never falls behind the engine."""
STATE_EVERY_S = 0.2
"""The session panel is redrawn at most this often otherwise (it never falls behind the events)."""


def state_cast(session: SessionLike) -> list[str]:
    """The slugs of a session's cast, in order."""
    return list(session.state.cast)


def replay_screen(run_dir: Path) -> Screen:
    """The replay of the run in `run_dir`."""
    from promptdesk.tui.screens.replay import ReplayScreen

    return ReplayScreen(run_dir)


class StageScreen(Directions, RoomControls, PaneControls, Screen[None]):
    """One scene, live: transcript, private thinking panes, session state, and the controls."""

    BINDINGS = [
        Binding("q", "app.quit", "Quit", id="stage.quit",
                tooltip="Quit; asks first while a scene is running, and always closes the run folder cleanly"),
        Binding("s", "stop", "Stop", id="stage.stop",
                tooltip="Stop the scene now; in-flight calls are cancelled and the run folder is still written"),
        Binding("e", "inject", "World event", id="stage.inject",
                tooltip="Throw a world event into the scene: every actor receives it at the next beat"),
        Binding("n", "note", "Note", id="stage.note",
                tooltip="Send a director's note to every actor or to one, at the next beat"),
        Binding("p", "pause", "Pause", id="stage.pause", tooltip="Hold the scene at the next safe point"),
        Binding("r", "resume", "Resume", id="stage.resume", tooltip="Let a paused scene go on"),
        Binding("plus", "pace(1)", "Slower", id="stage.slower", key_display="+", group=PACE_KEYS,
                tooltip="Pace: half a second more per beat at least (the wait is between beats)"),
        Binding("minus", "pace(-1)", "Faster", id="stage.faster", key_display="-", group=PACE_KEYS,
                tooltip="Pace: half a second less per beat (0 plays as fast as the actors answer)"),
        Binding("end", "follow", "Follow", id="stage.follow", show=False,
                tooltip="Follow the end of the transcript and of every thinking pane again (after scrolling up)"),
        Binding("escape", "leave", "Back", id="stage.leave",
                tooltip="Back to the screen below (the stage of the room it was started from, or the replay of a "
                        "take); a running scene is stopped first"),
        Binding("o", "replay", "Replay", id="stage.replay",
                tooltip="Open this run in the replay once the scene has closed"),
        Binding("a", "escalation", "Decide", id="stage.escalation", tooltip=registry.ASK_HELP),
        Binding("y", "accept_suggestion", "Inject suggestion", id="stage.accept",
                tooltip="Inject the world event the coordinator suggests (shown in the Session panel) at the next beat"),
        Binding("g", "room", "Room", id="stage.room", tooltip=registry.ROOM_HELP),
        panes_binding("stage"),
        Binding("w", "new_scene", "New scene", id="stage.new-scene",
                tooltip="Once the scene has closed: back to the wizard for another (the last choices suggested)"),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-tiny"), (60, "-narrow"), (100, "-wide")]
    DEFAULT_CSS = """
    StageScreen > #title { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    StageScreen.-narrow StatePanel { width: 31; }
    StageScreen.-tiny StatePanel { display: none; }
    """

    def __init__(self, session: SessionLike, title: str = "", options: RunOptions | None = None,
                 history: list | None = None) -> None:
        super().__init__()
        self.session = session
        self.history = list(history or [])
        """Recorded events shown before the session's own (a take: its parent's beats before the branch)."""
        self.format = registry.of(session.state)
        """The console side of the session's format (what it shows and asks beyond a scene)."""
        self.options = options
        """The run options this stage was started with (the room reuses them and both choices)."""
        self.title_text = title
        self.bridge = SessionBridge(session, self)
        self._state_stale = True
        self._last_flush = 0.0
        self._flush_timer: Timer | None = None
        self._failures_told: set[str] = set()
        self._titled = "ready"
        self._offered = False
        self.waits = Waits(state_cast(session), parallel=session.state.turns_mode != "sequential")
        """Who the stage waits on (a slow provider shows on the panel as "waiting 12 s")."""
        self.played = PlayedTime()
        """The scene's clock without its pauses (the panel's elapsed time stands still while paused)."""
        self.replay = ReplayReady(self, lambda: replay_screen(Path(self.session.state.run_dir)))
        """This run's replay, made ready while the closed stage waits (`replay_ready`)."""

    def compose(self) -> ComposeResult:
        state = self.session.state
        yield Static(self.title_line("ready"), id="title")
        yield StageView(dict(state.cast), single_call=self.single_call, answered=self.format.answered,
                        thinking=self.format.has_thinking, id="stage")
        yield QueuedLine(id="queued")
        yield BeatTimeline(dict(state.cast), id="timeline", classes="-hidden")
        if self.has_room:
            yield RoomBar(self.room_participants(), id="room-bar")
        yield KeyBar()

    def title_line(self, status: str) -> Content:
        """The title bar: whether the scene is live, paused, closing or closed (first, so that a narrow
        terminal still shows it), the scene, and both choices."""
        state = self.session.state
        return Content(f"Promptdesk · {TITLE_STATUS.get(status, status)} · {safe(self.title_text)} · "
                       f"isolation ({state.isolation}) · coordinator {state.coordinator}")

    def show_title(self) -> None:
        """Redraw the title bar when the session's status has changed since it was drawn."""
        status = self.session.state.status if self.bridge.worker is not None else "ready"
        if status != self._titled:  # the keys that can act change with it (a take begins with no `start`)
            self._titled = status
            self.query_one("#title", Static).update(self.title_line(status))
            self.refresh_bindings()

    @property
    def single_call(self) -> bool:
        """A single call started from the room: one participant, one round."""
        return self.format.single_call(getattr(self.session, "scene", None), len(self.session.state.cast))

    @property
    def has_room(self) -> bool:
        """Only the stage of a format with a room has one (to start more sessions from)."""
        return self.format.has_room

    def room_participants(self) -> set[str]:
        """Who can be named in the room (as the format says: its built-in personas and this scene's cast)."""
        return self.format.room_participants(getattr(self.session, "scene", None))

    @property
    def waiting(self) -> object | None:
        """What the scene holds for the operator to decide (its format's question's details), if anything."""
        return self.format.waiting(self.bridge.format_state)

    def on_mount(self) -> None:
        if self.has_room:
            self.set_focus(None)
        if self.history:
            self.view.apply(self.history)
            self.query_one(BeatTimeline).extend(self.history)
        self.refresh_state()
        self.call_after_refresh(self.bridge.start)
        self.app.run_dirs.append(str(self.session.state.run_dir))
        self.set_interval(STATE_EVERY_S, self._tick)

    def _tick(self) -> None:
        """Redraw the panel when events changed it, and keep elapsed time ticking while live."""
        if self._state_stale or self.session.state.status in ("running", "paused"):
            self.refresh_state()

    @property
    def view(self) -> StageView:
        """The stage widget."""
        return self.query_one(StageView)

    def pane_view(self) -> StageView:
        return self.view

    def refresh_state(self) -> None:
        """Redraw the session panel from the session's own state (elapsed time ticks while live)."""
        now = getattr(self.session, "now", None)
        live = self.session.state.status in ("running", "paused") and callable(now)
        state = from_session(self.session.state, self.played.played(now() if live else self.session.state.elapsed_s), getattr(self.session, "start_info", None))
        if live and self.session.state.status == "running":
            state.slow, state.retrying = self.waits.slow(now()), dict(self.waits.why)
        if self.waiting is not None:
            state.waiting = self.format.waiting_label
        self.view.show_state(state)
        self.show_title()
        self._state_stale = False
        offered = bool(state.suggestion) and state.status in ("running", "paused")
        if offered != self._offered:
            self._offered = offered
            self.refresh_bindings()

    def on_session_bridge_events_arrived(self, _: SessionBridge.EventsArrived) -> None:
        """Render now, or at the end of the current frame window if a batch was rendered recently."""
        if self._flush_timer is not None:
            return
        wait = self._last_flush + FLUSH_EVERY_S - monotonic()
        if wait <= 0:
            self.flush()
        else:
            self._flush_timer = self.set_timer(wait, self.flush)

    def flush(self) -> None:
        """Render every event the bridge is holding, as one batch."""
        self._flush_timer = None
        self._last_flush = monotonic()
        events = self.bridge.drain()
        if not events:
            return
        self.view.apply(events)
        self.query_one(BeatTimeline).extend(events)
        self.waits.feed(events)
        for event in events:
            self.played.feed(event)
        self._state_stale = True
        if any(e.type in CONTROL_EVENTS or e.type in self.format.control_events for e in events):
            self.refresh_state()
            self.refresh_bindings()
            self.show_queued()
        if any(e.type in self.format.asks_on for e in events) and self.waiting is not None:
            self.action_escalation()
        self.tell_failures(events)
        self.query_one(QueuedLine).delivered(events)

    def tell_failures(self, events: list) -> None:
        """Notify the first actor failure of each kind (timeout, authentication, ...) with its reason."""
        from promptdesk.core.record.outputs import is_failure
        from promptdesk.tui.failures import failure_kind

        for event in events:
            reason = getattr(event, "reason", None)
            if not is_failure(event) or not event.target or not reason:  # a salvaged silence is no failure
                continue
            kind = failure_kind(str(reason))
            if kind not in self._failures_told:
                self._failures_told.add(kind)
                self.notify(f"{safe(event.text)}: {safe(reason)}", title=f"Actor failure ({kind})",
                            severity="error", markup=False, timeout=10)

    def on_session_bridge_finished(self, message: SessionBridge.Finished) -> None:
        self.replay.soon()
        self._titled = "closed"
        self.query_one("#title", Static).update(self.title_line("closed"))
        self.flush()
        self.refresh_state()
        self.refresh_bindings()
        if message.error is not None:
            self.notify(f"The session failed: {safe(message.error)}", severity="error", markup=False, timeout=10)
        elif message.result is not None and self.single_call and message.result.close_reason in self.format.answered:
            self.notify(f"Answered: one call, one reply. Run folder: {safe(shown_path(message.result.run_dir))}",
                        title="Single call answered", markup=False, timeout=8)
        elif message.result is not None:
            self.notify(f"Scene closed ({safe(message.result.close_reason)}). Run folder: "
                        f"{safe(shown_path(message.result.run_dir))}",
                        title="Scene closed", markup=False, timeout=8)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only the controls that can act now are listed; the others are hidden, and pressing one says
        why not (`on_key`)."""
        return why_not(self, action) is None

    def on_key(self, event: Key) -> None:
        """A stage key that cannot act now (hidden from the footer) says why, instead of doing nothing."""
        if told_why(self, event.key):
            event.stop()

    def show_queued(self) -> None:
        """Redraw the queued line (it says whether delivery waits for the resume)."""
        self.query_one(QueuedLine).show(self.session.state.status == "paused")

    def action_copy_text(self) -> None:
        """`ctrl+c`: copy the selected text, and say how much was copied."""
        copy_selection(self)

    def action_stop(self) -> None:
        """Stop the scene."""
        self.bridge.stop()
        self.notify("Stopping the scene…", markup=False, timeout=3)
        self.refresh_bindings()

    def action_pause(self) -> None:
        """Pause at the next safe point."""
        self.bridge.pause()
        self.refresh_bindings()
        self.refresh_state()
        self.show_queued()

    def action_resume(self) -> None:
        """Resume a paused scene."""
        self.bridge.resume()
        self.refresh_bindings()
        self.refresh_state()
        self.show_queued()

    def action_follow(self) -> None:
        """Scroll the transcript and every thinking pane back to the end, and follow it again."""
        for log in self.query(WrappedLog):
            log.follow()

    def action_pace(self, steps: int) -> None:
        """Change the minimum seconds per beat by `steps` half-seconds (from the next safe point)."""
        from promptdesk.core.engine.pacing import STEP_S

        before = self.session.state.pace_s
        seconds = self.bridge.set_pace(before + steps * STEP_S)
        self.notify(pace_told(before, seconds), markup=False, timeout=2)
        self.refresh_state()

    def action_escalation(self) -> None:
        """Open the format's dialog on what the scene waits for (once: it is not stacked twice)."""
        details = self.waiting
        if details is not None and not self.format.is_dialog(self.app.screen):
            self.app.push_screen(self.format.dialog(details), self.send_decision)

    def send_decision(self, answer: object | None) -> None:
        """Send the dialog's answer through the session's format controls (or leave the question open)."""
        if answer is not None:
            try:
                self.format.answer(self.bridge.direct, answer)
            except ValueError as exc:
                self.notify(safe(exc), severity="warning", markup=False)
        self.refresh_bindings()
        self.refresh_state()

    @property
    def stacked(self) -> bool:
        """True when another screen lies below this one: the stage it was started from (its room), or the
        replay a take was started from."""
        stack = self.app.screen_stack
        return self in stack and stack.index(self) > 1

    async def action_leave(self) -> None:
        """Back to the screen below: a closed scene is left at once; a running one is stopped first (asked)."""
        if not self.stacked:
            return
        if self.bridge.live:
            self.app.push_screen(ConfirmModal("This scene is still running. Stop it and go back to the stage "
                                              "below? Its run folder will be closed cleanly.",
                                              yes="Stop and go back", no="Keep watching"), self._leave_if)
            return
        await self._leave_if(True)

    async def _leave_if(self, yes: bool | None) -> None:
        if yes:
            await self.bridge.close()
            if self.app.screen is self:
                self.app.pop_screen()

    def action_new_scene(self) -> None:
        """Back to the wizard for another scene (the app keeps the last choices as suggestions)."""
        self.app.new_scene()

    def action_replay(self) -> None:
        """Open this run's replay (the one made ready while the stage waited, if it is)."""
        self.app.push_screen(self.replay.take())

    def on_screen_resume(self) -> None:
        if self.session.state.status == "closed":
            self.replay.soon()

    def on_unmount(self) -> None:
        self.replay.discard()

    async def shutdown(self) -> None:
        """Stop the scene if it is live and wait until its run folder is closed."""
        await self.bridge.close()

    def commands(self) -> Iterator[SystemCommand]:
        """The stage's controls for the command palette (only those available now), and the copy of
        the run folder's path."""
        yield from binding_commands(self)
        yield copy_run_folder(self, self.session.state.run_dir)
        yield from self.pane_commands()
        yield SystemCommand("Beat timeline", "Show or hide who spoke, was silent, interrupted, reacted or failed per beat",
                            lambda: self.query_one(BeatTimeline).toggle_class("-hidden"))
