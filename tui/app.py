"""The console's `App`: thin on purpose. Screens own behaviour; this holds themes, quit and the palette.

`run_console` and `run_compare_app` are what `promptdesk` and `promptdesk compare --tui` call
(through `promptdesk.tui.launch`); `create_app` builds the same app (tests use it).
Imports of the engine's setup path happen only when a live scene is wanted, so a replay never
loads a provider.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ScreenError, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer

from promptdesk.tui import heap_keeper, textual_fixes
from promptdesk.tui.keymap import VARIABLE as KEYMAP_ENV
from promptdesk.tui.keymap import keymap_from
from promptdesk.tui.keymap import refusal as keymap_refusal
from promptdesk.tui.themes import THEMES, ParsedRules, apply_theme, next_theme
from promptdesk.tui.widgets.confirm_modal import ConfirmModal

if TYPE_CHECKING:
    from promptdesk.core.casting.build import RunOptions
    from promptdesk.tui.screens.wizard import SceneTransform

REPLACED_COMMANDS = frozenset({"Theme", "Quit", "Keys"})
"""Textual's own palette commands that the console replaces with its own (its Keys panel is the help screen)."""
PRELOADED = ("promptdesk.tui.screens.help", "promptdesk.tui.screens.replay", "promptdesk.tui.screens.take_dialog",
             "promptdesk.tui.screens.wizard", "promptdesk.tui.screens.stage", "promptdesk.tui.widgets.input_modal",
             "textual.command")
"""The modules a key of the console opens (the help, replay, the take dialog, the wizard, the note dialog, the
palette). The wizard's loads the engine's setup (providers among it): a console opened on a replay, which
never loads a provider, preloads `REPLAY_PRELOADED` instead (the take dialog loads what a take needs)."""
REPLAY_PRELOADED = tuple(name for name in PRELOADED if name != "promptdesk.tui.screens.wizard")
PRELOAD_AFTER_S = 0.5
HANG_UP = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
"""The signals that close the console's runs cleanly before it exits (`PromptdeskApp._on_hang_up`)."""
SETTLE_AFTER_S = 0.1
"""Seconds after a screen comes up when what opening it made is settled (its first frame drawn by then)."""


def preload(names: tuple[str, ...] = PRELOADED) -> None:
    """Import `names` (a worker thread runs this while the console waits for keys)."""
    for name in names:
        importlib.import_module(name)




class PromptdeskApp(App[int]):
    """The director's console."""

    TITLE = "Promptdesk"
    BINDINGS = [
        Binding("t", "toggle_theme", "Theme", id="app.theme", tooltip="Switch between the dark and light themes"),
        Binding("q", "quit", "Quit", id="app.quit",
                tooltip="Quit; asks first while a scene is running, and always closes the run folder cleanly"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit-now", show=False, priority=True,
                tooltip="Quit (same as q)"),
        Binding("question_mark", "help", "Keys", id="app.help", key_display="?", show=False,
                tooltip="Every key of this screen, what it does and whether it can act now"),
    ]

    def __init__(self, first_screen: Callable[[], Screen[Any]], theme: str = "dark",
                 preloaded: tuple[str, ...] = PRELOADED) -> None:
        super().__init__(css_path=[THEMES[theme].path] if THEMES[theme].path.is_file() else None)
        textual_fixes.apply()
        self.first_screen = first_screen
        self.preloaded = preloaded
        """The modules imported while the console waits for keys (`preload`)."""
        self.theme_name = theme
        """The console theme in use (`dark` or `light`)."""
        self.run_dirs: list[str] = []
        """The run folder of every scene started in this console, in order (printed after quitting)."""
        self.wizard_setup: tuple[Any, Path | None, Any] = (None, None, None)
        """(run options, working folder, scene transform) a new wizard starts from."""
        self._parsed_rules = ParsedRules()
        self._preparing: Timer | None = None
        self._tidying: Timer | None = None
        self._before: dict[int, Any] = {}
        """The handlers of `HANG_UP` the console replaced while it runs (put back when it closes)."""
        self.last_choices: dict[str, Any] = {}
        """What the last scene started from the wizard was set up with (offered as suggestions only)."""

    def on_mount(self) -> None:
        apply_theme(self, self.theme_name)
        self.set_keymap(keymap_from(os.environ.get(KEYMAP_ENV, "")))
        self.push_screen(self.first_screen())
        self.set_timer(PRELOAD_AFTER_S, self._preload)
        self.screen_change_signal.subscribe(self, self._prepare_theme)
        self._prepare_theme()
        self._on_hang_up(True)

    def _on_hang_up(self, listen: bool) -> None:
        """SIGTERM and SIGHUP (the terminal closed under a running scene, a `kill`) close every run folder
        as `q` does (the scene stopped, its record written whole), rather than ending the process mid-write."""
        loop = asyncio.get_running_loop()
        for sig in HANG_UP:
            try:
                if listen:
                    self._before[sig] = signal.getsignal(sig)
                    loop.add_signal_handler(sig, lambda sig=sig: asyncio.ensure_future(self._hung_up(sig)))
                elif sig in self._before:
                    loop.remove_signal_handler(sig)
                    signal.signal(sig, self._before.pop(sig) or signal.SIG_DFL)  # what the process had before the console
            except (NotImplementedError, RuntimeError, ValueError, TypeError):
                return  # not the main thread, or no signals here: the default action stays

    async def _hung_up(self, sig: int) -> None:
        """Close every run folder; then, the terminal gone (SIGHUP), end the process at once: Textual's
        exit would wait for ever on a terminal that no longer exists."""
        await self.shutdown()
        if sig != signal.SIGTERM:
            os._exit(128 + sig)

    def _prepare_theme(self, screen: Screen[Any] | None = None) -> None:
        """A screen came up: once drawn, settle what opening it made (`heap_keeper.settle`; a timer, not a
        callback after the refresh, which would hold the widget that opened it); once it has
        settled, parse the other theme's rules for it (`ParsedRules.prepare`), so that `t` has nothing
        to parse."""
        if screen is not None:
            self.set_timer(SETTLE_AFTER_S, heap_keeper.settle)
        if self._preparing is not None:
            self._preparing.stop()
        self._preparing = self.set_timer(PRELOAD_AFTER_S, lambda: self._parsed_rules.prepare(
            self, next_theme(self.theme_name)))

    def on_unmount(self) -> None:
        """The console closes: what it left frozen goes back to the collector."""
        heap_keeper.release()
        self._on_hang_up(False)

    async def on_event(self, event: events.Event) -> None:
        """Any input puts off the heap's tidying until the console is left alone (`heap_keeper`)."""
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            if self._tidying is not None:
                self._tidying.stop()
            self._tidying = self.set_timer(heap_keeper.TIDY_AFTER_S, heap_keeper.tidy_if_untidy)
        await super().on_event(event)

    def _preload(self) -> None:
        """Import, once the console is on screen, what its keys open (a key's first press pays no import)."""
        self.run_worker(partial(preload, self.preloaded), thread=True, group="preload", exit_on_error=False)

    def action_command_palette(self) -> None:
        """The command palette, over a backdrop drawn once (`promptdesk.tui.dialog`)."""
        from promptdesk.tui.dialog import Palette

        if self.use_command_palette and not Palette.is_open(self):
            self.push_screen(Palette(id="--command-palette"))

    def action_compare(self) -> None:
        """Ask for run or sweep folders and open the Compare screen on them."""
        from promptdesk.tui.screens.compare import open_compare
        open_compare(self)

    def open_stage(self, session: Any, title: str, history: list[Any] | None = None) -> None:
        """Play a built session live on a stage of its own, above the current screen (a take from a
        replay: `history` is its parent's record before the branch, shown first)."""
        from promptdesk.tui.screens.stage import StageScreen
        self.push_screen(StageScreen(session, title=title, history=history))

    def action_help(self) -> None:
        """Show every key of the current screen (not over another help)."""
        from promptdesk.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def new_scene(self) -> None:
        """Back to the wizard in place of the current screen (a closed stage), the last scene's choices
        offered as suggestions, never pre-selected: the two choices given on the command line were the
        first scene's, so the next one asks for them again (its own scene file may still set them)."""
        from promptdesk.core.casting.build import RunOptions
        from promptdesk.tui.screens.wizard import WizardScreen

        from dataclasses import replace

        options, cwd, transform = self.wizard_setup
        unchosen = replace(options or RunOptions(), isolation=None, coordinator=None)
        self.switch_screen(WizardScreen(unchosen, None, cwd, transform, last=self.last_choices))

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's `refresh_css`, with the rules of a theme seen before taken from `ParsedRules` instead
        of parsed again."""
        stylesheet = self.stylesheet
        stylesheet.set_variables(self.get_css_variables())
        self._parsed_rules.reparse(stylesheet)
        stylesheet.update(self, animate=animate)
        try:
            if self.screen.is_mounted:
                self.screen._refresh_layout(self.size)
                self.screen._css_update_count = self._css_update_count
        except ScreenError:
            pass
        for screen in self.screen_stack:
            if screen != self.screen:
                stylesheet.update(screen, animate=animate)
                screen._css_update_count = self._css_update_count

    def action_toggle_theme(self) -> None:
        """Switch to the next theme (and prepare the one after it)."""
        self.theme_name = next_theme(self.theme_name)
        apply_theme(self, self.theme_name)
        self._prepare_theme()

    async def action_quit(self) -> None:
        """Quit, asking first when a scene is running; the session is stopped and closed either way."""
        if isinstance(self.screen, ConfirmModal):
            return
        if any(stage.bridge.live for stage in self.stages()):
            self.push_screen(ConfirmModal("A scene is running. Stop it and quit? Its run folder will be "
                                          "closed cleanly.", yes="Stop and quit", no="Keep watching"),
                             self._quit_if)
            return
        if any(stage.bridge.closing for stage in self.stages()):
            self.push_screen(ConfirmModal("The scene has closed and its journals are being written. Stop them "
                                          "and quit? The entries not yet written are left out (the record says "
                                          "so); the run folder will be closed cleanly.",
                                          yes="Stop and quit", no="Wait for them"), self._quit_if)
            return
        await self.shutdown()

    async def _quit_if(self, yes: bool | None) -> None:
        if yes:
            for stage in self.stages():
                if stage.bridge.closing:
                    stage.bridge.stop()
            await self.shutdown()

    async def shutdown(self) -> None:
        """Stop every live scene, wait for its run folder to close, then exit."""
        for stage in self.stages():
            await stage.shutdown()
        self.exit(0)

    def stages(self) -> list[Any]:
        """Every stage screen in the stack (a replay may sit on top of one)."""
        from promptdesk.tui.screens.stage import StageScreen

        return [s for s in self.screen_stack if isinstance(s, StageScreen)]

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette: the screen's own commands, the theme switch, quit, and Textual's helpers."""
        commands = getattr(screen, "commands", None)
        if callable(commands):
            yield from commands()
        yield SystemCommand("Keys", "Every key of this screen, what it does and whether it can act now (esc closes)",
                            self.action_help)
        yield SystemCommand("Switch theme", "Switch between the dark and light themes", self.action_toggle_theme)
        yield SystemCommand("Compare runs", "Runs or a sweep side by side, with timelines", self.action_compare)
        yield SystemCommand("Quit", "Quit (asks first while a scene is running)", self.action_quit)
        for command in super().get_system_commands(screen):
            if command.title not in REPLACED_COMMANDS:
                yield command


def create_app(*, scene: Path | None = None, replay: Path | None = None, session: Any = None,
               options: RunOptions | None = None, cwd: Path | None = None,
               scene_transform: SceneTransform | None = None, theme: str = "dark") -> PromptdeskApp:
    """The console opened on the replay of `replay`, on the stage of a built `session`, or on the wizard."""
    def first() -> Screen[Any]:
        if replay is not None:
            from promptdesk.tui.screens.replay import ReplayScreen
            return ReplayScreen(Path(replay))
        if session is not None:
            from promptdesk.tui.screens.stage import StageScreen
            return StageScreen(session, title=session.scene.title or session.scene.name, options=options)
        from promptdesk.core.casting.build import RunOptions
        from promptdesk.tui.screens.wizard import WizardScreen
        return WizardScreen(options or RunOptions(), scene, cwd, scene_transform)

    app = PromptdeskApp(first, theme=theme, preloaded=REPLAY_PRELOADED if replay is not None else PRELOADED)
    app.wizard_setup = (options, cwd, scene_transform)
    return app


def run_console(ns: argparse.Namespace, scene: Path | None = None, replay: Path | None = None) -> int:
    """Open the console (what `promptdesk`, `promptdesk SCENE` and `promptdesk replay RUN_DIR` do)."""
    if (refused := keys_refused()) is not None:
        return refused
    if replay is not None:
        if not (replay / "events.jsonl").is_file():
            from promptdesk.tui.lines import printable
            print(f"INVALID_CONFIG: {printable(replay)} is not a run folder (no events.jsonl in it)", file=sys.stderr)
            return 2
        return create_app(replay=replay).run() or 0
    app = create_app(scene=scene, options=console_options(ns))
    code = app.run() or 0
    print_run_dirs(app.run_dirs)
    return code


def keys_refused() -> int | None:
    """Exit code 2, the refusal printed, when `PROMPTDESK_KEYMAP` cannot be used (`promptdesk.tui.keymap`)."""
    problem = keymap_refusal(os.environ.get(KEYMAP_ENV, ""))
    if problem is None:
        return None
    print(problem, file=sys.stderr)
    return 2


def run_compare_app(folders: list[Path], by: str) -> int:
    """Open the console on the Compare screen (`promptdesk compare … --tui`)."""
    if (refused := keys_refused()) is not None:
        return refused
    from promptdesk.tui.screens.compare import CompareScreen
    return PromptdeskApp(lambda: CompareScreen(folders, by), preloaded=REPLAY_PRELOADED).run() or 0


def print_run_dirs(run_dirs: list[str], stream: Any = None) -> None:
    """After quitting: where each run of this console was written (the terminal keeps it)."""
    from promptdesk.tui.lines import printable, shown_path

    for run_dir in run_dirs:
        print(f"Run folder: {printable(shown_path(run_dir))}", file=stream or sys.stderr)


def console_options(ns: argparse.Namespace) -> RunOptions:
    """The command line's run options for a console run: an operator is present, so the session is
    not headless (what a format asks the operator waits for the decision instead of a headless policy),
    and a scene on the offline improviser is paced so that there is something to watch."""
    from dataclasses import replace

    from promptdesk.core.cli.batch import options_from
    from promptdesk.core.engine.pacing import OFFLINE_CONSOLE_S

    return replace(options_from(ns), headless=False, offline_pace=OFFLINE_CONSOLE_S)
