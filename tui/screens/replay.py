"""Replay: a run folder played back from `events.jsonl` alone, by `t`. No model is ever called by the
replay itself; `f` takes the scene again from the current beat (`promptdesk.core.casting.branch`), live on a stage of
its own, and the palette lists the takes of the run (`promptdesk.core.record.takes.takes_of`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.events import Key
from textual.screen import Screen
from textual.widgets import Static

from promptdesk.core.errors import PromptdeskError
from promptdesk.core.record.cut import cut_of_folder
from promptdesk.core.record.outputs import cast_names, start_info
from promptdesk.core.record.events import BaseEvent, CallEvent, DeltaEvent, ThinkEvent
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.takes import Change, describe_change, takes_of
from promptdesk.tui.playback import TIMELESS_BEAT_S, Move, Playback
from promptdesk.tui.commands import binding_commands, copy_run_folder, copy_selection
from promptdesk.tui.formats import registry
from promptdesk.tui.lines import Cast, literal, safe, shown_path
from promptdesk.tui.render import transcript_line
from promptdesk.tui.stage_controls import bound_keys
from promptdesk.tui.stage_state import StateFold
from promptdesk.tui.screens.take_dialog import TakeDialog
from promptdesk.tui.widgets.key_bar import KeyBar
from promptdesk.tui.widgets.pane_picker import PaneControls, panes_binding
from promptdesk.tui.widgets.playback_bar import PlaybackBar
from promptdesk.tui.widgets.stage_view import StageView

SCRUB_KEYS = Binding.Group("Scrub", compact=True)
"""`←` and `→` share one footer entry: "←→ Scrub" (each a tenth of the run)."""
TICK_S = 1 / 20
"""How often the playhead moves while playing."""


class ReplayScreen(PaneControls, Screen[None]):
    """The stage, rebuilt event by event from a recorded run: transcript, thinking, state."""

    BINDINGS = [
        Binding("space", "toggle", "Play", id="replay.play", tooltip="Play or pause the replay",
                priority=True),
        Binding("x", "speed", "Speed", id="replay.speed", tooltip="Cycle the speed: 1x, 4x, 16x", priority=True),
        Binding("full_stop", "step_event", "Step", id="replay.step", key_display=".", tooltip="Show the next event",
                priority=True),
        Binding("b", "step_beat", "Beat", id="replay.beat", tooltip="Play the next beat in one step", priority=True),
        Binding("left", "jump(-0.1)", "-10%", id="replay.back", tooltip="Scrub back a tenth of the run", priority=True,
                group=SCRUB_KEYS),
        Binding("right", "jump(0.1)", "+10%", id="replay.forward", tooltip="Scrub forward a tenth of the run",
                priority=True, group=SCRUB_KEYS),
        Binding("home", "seek(0)", "Start", id="replay.start", tooltip="Back to the beginning", show=False,
                priority=True),
        Binding("end", "seek(1)", "End", id="replay.end", tooltip="Jump to the end", show=False, priority=True),
        panes_binding("replay"),
        Binding("f", "take", "Take", id="replay.take",
                tooltip="Take the scene again from the start of the current beat, with a world event, a note or "
                        "nothing changed, live on a stage of its own (a new run folder beside this one)"),
        Binding("escape", "close", "Back", id="replay.close", tooltip="Close the replay and go back to the stage"),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-tiny"), (60, "-narrow"), (100, "-wide")]
    """Below 60 columns the Session panel is hidden: beside it the transcript would be a word wide."""
    DEFAULT_CSS = """
    ReplayScreen > #title { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    ReplayScreen.-narrow StatePanel { width: 31; }
    ReplayScreen.-tiny StatePanel { display: none; }
    """

    def __init__(self, run_dir: Path, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.run_dir = Path(run_dir)
        self.clock = clock
        self.skipped: list[str] = []
        self._skips_told = False
        """Lines of `events.jsonl` that could not be read (torn or undecodable), told on mount."""
        self.playback = Playback(read_events(self.run_dir, warn=self.skipped.append))
        self.fold = self.new_fold()
        self._last_tick = clock()
        self.take_refused = take_why_not(self.run_dir, self.playback.events)
        """Why `f` cannot take this run again (None: it can; `take_why_not`)."""
        self.branchable = self.take_refused is None

    def compose(self) -> ComposeResult:
        info = start_info(self.playback.events)
        scene = info.get("scene") or {}
        title = safe(scene.get("title") or scene.get("name") or self.run_dir.name)
        yield Static(Content(f"Promptdesk · replay · {title} · {safe(shown_path(self.run_dir))}"), id="title")
        cast, fmt = cast_names(self.playback.events), registry.of_record(info)
        yield StageView(cast, single_call=fmt.recorded_single_call(info, len(cast)), answered=fmt.answered,
                        thinking=fmt.has_thinking, id="stage")
        yield PlaybackBar()
        yield KeyBar()


    def on_mount(self) -> None:
        if not self.app.is_running:  # closing while it was made ready off screen: its widgets are going
            return
        self.show(Move([]))
        self.set_interval(TICK_S, self.advance)

    def on_screen_resume(self) -> None:
        """Shown (it may have been made ready off screen, `promptdesk.tui.replay_ready`): say once what was
        skipped, and where a record cut short ends (a run killed, in a beat or in its journal step)."""
        if self._skips_told:
            return
        self._skips_told = True
        if self.skipped:
            self.notify(f"{len(self.skipped)} unreadable line(s) of events.jsonl skipped; first: {self.skipped[0]}",
                        title="Replay", severity="warning", timeout=10, markup=False)
        if cut := cut_of_folder(self.run_dir, self.playback.events):
            self.notify(f"The record is cut short: {cut}", title="Replay", severity="warning", timeout=10, markup=False)

    def rewind(self) -> None:
        """Back to how the replay opens: at the run's start, paused, at the first speed, every thinking
        pane as before any choice, nothing focused (a replay kept to be shown again:
        `promptdesk.tui.replay_ready`)."""
        self.playback = Playback(self.playback.events)
        self.pane_view().show_panes(None)
        self.set_focus(None)
        self.show(Move([], rebuild=True))
        self._last_tick = self.clock()

    def new_fold(self) -> StateFold:
        """An empty fold that already knows the run's choices and cast (from its start record)."""
        fold = StateFold(str(self.run_dir))
        fold.prime(start_info(self.playback.events))
        return fold

    def advance(self, seconds: float | None = None) -> None:
        """Move the playhead by real time elapsed (or by `seconds`) and show what became due."""
        now = self.clock()
        elapsed, self._last_tick = now - self._last_tick, now
        if self.playback.playing:
            self.show(self.playback.tick(elapsed if seconds is None else seconds))

    def show(self, move: Move) -> None:
        """Put a transport move on stage, then redraw the state panel and the position bar."""
        view = self.query_one(StageView)
        if move.rebuild:
            view.clear()
            self.fold = self.new_fold()
        if move.events:
            view.apply(move.events)
            self.fold.feed(move.events)
        state = self.fold.snapshot(self.playback.playhead)
        if self.unclosed:
            state.status = "not closed"
        view.show_state(state)
        self._show_position()

    @property
    def unclosed(self) -> bool:
        """At the end of a record that never closed (the process was cut off, or it is still being written)."""
        return self.playback.done and bool(self.playback.events) and self.fold.state.status != "closed"

    def _show_position(self) -> None:
        p, bar = self.playback, self.query_one(PlaybackBar)
        mode = "▶ playing" if p.playing else (("■ end of the record, no close" if self.unclosed else "■ end")
                                              if p.done else "‖ paused")
        clock = (f"no time recorded: a beat every {TIMELESS_BEAT_S:g} s at 1x" if p.timeless
                 else f"{p.playhead:.1f} s of {p.duration:.1f} s")
        bar.status = f"{mode} · {p.speed:g}x · {clock} · event {p.shown} of {len(p.events)}"
        bar.fraction = (p.shown / len(p.events)) if p.events else 0.0

    def action_copy_text(self) -> None:
        """`ctrl+c`: copy the selected text, and say how much was copied."""
        copy_selection(self)

    def action_toggle(self) -> None:
        """Play or pause."""
        self._last_tick = self.clock()
        self.show(self.playback.toggle())

    def action_speed(self) -> None:
        """Cycle 1x, 4x, 16x."""
        self.playback.cycle_speed()
        self._show_position()

    def action_step_event(self) -> None:
        """One more event that changes the screen; those that show nothing (a spawn, a brief, a route, a
        call that spent nothing) are taken along with it."""
        events: list = []
        while not self.playback.done:
            events += self.playback.step_event().events
            if events and changes_the_screen(events[-1], self.query_one(StageView).cast):
                break
        self.show(Move(events))

    def action_step_beat(self) -> None:
        """One more beat."""
        self.show(self.playback.step_beat())

    def action_jump(self, fraction: float) -> None:
        """Scrub by a fraction of the run."""
        self.show(self.playback.jump(fraction))

    def action_seek(self, fraction: float) -> None:
        """Seek to a fraction of the run's events (0: start, 1: end), and show it: a transcript or a pane
        scrolled up follows its end again (`end` is the replay's, so its marker's `end to follow` holds)."""
        self.show(self.playback.seek_index(round(fraction * len(self.playback.events))))
        self.query_one(StageView).follow()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Back is only there when the replay was opened from a stage (a replay opened alone has nothing
        to go back to: the key is hidden, not listed as "not now"); a take only of a run that can be taken again."""
        if action == "close":
            return True if len(self.app.screen_stack) > 2 else None
        if action == "take":
            return True if self.branchable else None
        return True

    @property
    def beat(self) -> int:
        """The current beat: the last one begun on stage (0 before the first)."""
        shown = [e.beat for e in self.playback.events[:self.playback.shown] if e.type == "beat" and e.beat is not None]
        return shown[-1] if shown else 0

    def on_key(self, event: Key) -> None:
        """`f` (or its remapped key) on a run that cannot be taken again says why, instead of nothing."""
        if self.take_refused and event.key in bound_keys(self, "replay.take"):
            self.notify(f"Take: not now, {self.take_refused}.", title="Not now", markup=False, timeout=3)
            event.stop()

    def action_take(self) -> None:
        """Ask what changes, then start the take from the start of the current beat."""
        if not self.branchable:
            return
        self.playback.playing = False
        beat = self.beat
        self.run_worker(import_takes, thread=True, group="preload", exit_on_error=False)
        self.app.push_screen(TakeDialog(self.run_dir.name, beat, cast_names(self.playback.events)),
                             lambda change: self.start_take(beat, change))

    def start_take(self, beat: int, change: Change | None) -> None:
        """Make the take's folder and play it live on a stage of its own, the parent's beats before it shown."""
        from promptdesk.core.casting.branch import prepare_branch

        if change is None:
            return
        start = next((i for i, e in enumerate(self.playback.events) if e.type == "beat" and e.beat == beat), None)
        if start is None:
            self.notify(f"Beat {beat} was never begun in this run: a take starts at a beat the run played.",
                        title="No take", severity="error", markup=False, timeout=10)
            return
        try:
            session = prepare_branch(self.run_dir, beat, change, realtime=True)
        except (PromptdeskError, OSError) as exc:
            self.notify(safe(exc), title="No take", severity="error", markup=False, timeout=10)
            return
        scene = start_info(self.playback.events).get("scene") or {}
        title = f"{scene.get('title') or scene.get('name') or self.run_dir.name} · take of {self.run_dir.name} from beat {beat}"
        self.app.open_stage(session, title, history=self.playback.events[:start])

    def action_close(self) -> None:
        """Go back to the stage this replay was opened from."""
        self.app.pop_screen()

    def on_playback_bar_scrubbed(self, message: PlaybackBar.Scrubbed) -> None:
        self.action_seek(message.fraction)

    def pane_view(self) -> StageView:
        return self.query_one(StageView)

    def commands(self) -> Iterator[SystemCommand]:
        """The replay's transport for the command palette, and the copy of the run folder's path."""
        yield from binding_commands(self, "Replay: ")
        yield copy_run_folder(self, self.run_dir)
        yield from self.pane_commands()
        names = cast_names(self.playback.events)
        for folder, take in takes_of(self.run_dir):
            yield SystemCommand(f"Take: {literal(folder.name)}", f"From beat {literal(take.get('beat'))}: "
                                f"{literal(describe_change(take.get('change') or {}, names))}; open its replay",
                                lambda folder=folder: self.app.push_screen(ReplayScreen(folder)))


SHOWN_CONTROLS = frozenset({"start", "pause", "resume", "pace", "stop", "close"})
"""Events that change the panel's status (or its choices) even when they have no transcript line."""


def changes_the_screen(event: BaseEvent, cast: Cast) -> bool:
    """Whether showing `event` changes anything on the replay's screen: a transcript line, a thought or
    a stream, the panel's status, or a call's spend."""
    if isinstance(event, (ThinkEvent, DeltaEvent)) or event.type in SHOWN_CONTROLS:
        return True
    if isinstance(event, CallEvent):
        return bool(event.input_tokens or event.output_tokens or event.cache_write_tokens or event.cache_read_tokens
                    or event.cost_usd)
    return transcript_line(event, cast) is not None


def import_takes() -> None:
    """Import what a take needs (the engine and its providers) while the take's change is typed: a replay
    loads none of it until a take is asked for."""
    import promptdesk.core.casting.branch  # noqa: F401


def take_why_not(run_dir: Path, events: list) -> str | None:
    """Why a run cannot be taken again (None: it can): a take needs the run's private start record
    (`private.json`), a format that can be rebuilt from its log (a scene) and a beat begun."""
    from promptdesk.core.formats.registry import FORMATS

    name = (start_info(events).get("scene") or {}).get("format") or "scene"
    fmt = FORMATS.get(name)
    if fmt is None or not fmt.resumable():
        return f"a {registry.get(name).noun if name in registry.FORMATS else name} cannot be taken again, only a scene"
    if not (run_dir / "private.json").is_file():
        return "this run's folder has no private.json (the start record a take is rebuilt from)"
    if not any(e.type == "beat" for e in events):
        return "this run never began a beat"
    return None


def branchable(run_dir: Path, events: list) -> bool:
    """A run can be taken again (`take_why_not`)."""
    return take_why_not(run_dir, events) is None
