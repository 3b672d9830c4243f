"""Console keys: how long each key takes to show its change, headless at 120x40 on real screens.

A key is pressed as a terminal's key arrives (a `Key` event posted to the app); its latency is the time
to the first frame that shows the change: the frame after which the screen has nothing left to lay
out, scroll or repaint, with the change in it (the screen opened, the theme applied). Each frame is
turned into the escape sequences a terminal would be sent (`render_segments`), as a real terminal's
frame is, so that the cost of drawing counts.

Measured on The Apology played by the seeded offline improviser (simulated time), paused at beat 6,
`REPEATS` times each, the median kept (the machine is shared: a burst of other work lands in one
press, not in the median). Where each press needs a console of its own (a new scene's first `w`, a
take), the garbage of the consoles before it is collected first: an operator's console is the only
one in its process, and another console's leftovers, collected during a press, are not its cost.

- `key_theme_ms`: `t`, the stage redrawn in the other theme;
- `key_palette_ms`: `ctrl+p`, the command palette open with the stage's commands listed;
- `key_note_ms`: `n`, the director's note dialog;
- `key_help_ms`: `?`, the keys of the stage;
- `key_replay_ms`: `o` on the closed stage `QUICK_S` after it is back on screen (as quickly as a
  person sees it and presses a key): its replay is made ready meanwhile
  (`promptdesk.tui.replay_ready`), in whatever state it has reached;
- `key_replay_ready_ms`: `o` once that replay is ready and laid out, and `READ_S` more;
- `key_replay_typed_ms`: `o` typed ahead with the `escape` that closed the replay, before anything
  is made ready: the replay kept from the last `o` is rewound as it is shown;
- `key_replay_cold_ms`: `o` with nothing made ready or kept (the first `o` within 0.1 s of the close):
  the replay is composed as it is pushed;
- `key_new_scene_ms`: `w` on the closed stage, the wizard's scene list;
- `take_start_ms`: Enter in a replay's take dialog, the take's live stage (goal: 300 ms; the others 100 ms).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZE = (120, 40)
REPEATS = 7
HELD_AT = 6
READ_S = 0.2
"""After the closed stage's replay is ready, how much longer the operator reads before pressing `o`."""
QUICK_S = 0.25
"""The quickest a person presses a key after a screen changes (a visual reaction time)."""


class Frames:
    """Every frame the app draws, timed: `_display` spied on, each frame rendered to the escape sequences a
    terminal would be sent. `shown` is the time of the first frame drawn once `change()` holds, with nothing
    left to lay out, scroll or repaint on its screen (the change is in it, whole)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.change: Callable[[], bool] | None = None
        self.shown: float | None = None
        self.shown_cpu: float | None = None
        display = app._display

        def spy(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                render = getattr(renderable, "render_segments", None)
                if render is not None:
                    render(app.console)
            display(screen, renderable)
            if renderable is not None and self.change is not None and self.shown is None and \
                    screen is app.screen and self.change() and not pending(screen):
                self.shown, self.shown_cpu = time.perf_counter(), time.process_time()

        app._display = spy


def pending(screen: Any) -> bool:
    """Whether the screen still has to be laid out or repainted as a whole."""
    return bool(screen._layout_required or screen._repaint_required)


async def latency(pilot: Any, frames: Frames, keys: tuple[str, ...], change: Callable[[], bool]) -> tuple[float, float]:
    """Milliseconds from pressing `keys` to the first frame that shows the change: wall time, and this
    process's CPU time (what the same key costs on an idle machine)."""
    await pilot.pause()
    frames.change, frames.shown = change, None
    started, started_cpu = time.perf_counter(), time.process_time()
    await pilot.press(*keys)
    for _ in range(2_000):
        if frames.shown is not None:
            break
        await pilot.pause(0.005)
    frames.change = None
    assert frames.shown is not None, f"no frame showed the change after {keys}"
    return (frames.shown - started) * 1000, (frames.shown_cpu - started_cpu) * 1000


def _session(folder: Path, max_beats: int):
    from promptdesk.core.casting.build import RunOptions, build_session
    from promptdesk.core.casting.scene_file import load_scene

    scene = load_scene(ROOT / "scenes" / "the-apology.yaml")
    scene = scene.model_copy(update={"provider": scene.provider.model_copy(update={"latency_ms": (20, 60)})})
    options = RunOptions(isolation="b", coordinator="C", seed=7, runs_root=folder / "runs", cwd=folder,
                         characters_dirs=[ROOT / "characters"], write_character_journals=False, journals="none",
                         max_beats=max_beats, realtime=True)
    return build_session(scene, options), options


async def _until(pilot: Any, condition: Callable[[], bool]) -> None:
    for _ in range(20_000):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("the scene never got there")


async def _stage_keys(folder: Path, figures: dict[str, list[tuple[float, float]]]) -> Path:
    """The stage's keys, held at beat 6, then `o` and `w` once it has closed; returns the run folder."""
    from promptdesk.tui.app import create_app
    from promptdesk.tui.screens.help import HelpScreen
    from promptdesk.tui.screens.replay import ReplayScreen
    from promptdesk.tui.screens.wizard import WizardScreen
    from promptdesk.tui.widgets.input_modal import InputModal
    from textual.command import CommandPalette

    session, options = _session(folder, HELD_AT + 2)
    held = []
    session.subscribe(lambda e: (held.append(1), session.pause()) if e.type == "beat" and e.beat == HELD_AT
                      and not held else None)
    app = create_app(session=session, options=options, cwd=folder)
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        await _until(pilot, lambda: session.state.status == "paused" and not session._tasks)
        stage = app.screen
        for _ in range(REPEATS):
            theme = app.theme_name
            figures["key_theme_ms"].append(await latency(pilot, frames, ("t",), lambda: app.theme_name != theme))
            for key, name, screen in (("n", "key_note_ms", InputModal), ("question_mark", "key_help_ms", HelpScreen),
                                      ("ctrl+p", "key_palette_ms", CommandPalette)):
                def opened(screen=screen) -> bool:
                    return isinstance(app.screen, screen) and (screen is not CommandPalette or _listed(app.screen))
                figures[name].append(await latency(pilot, frames, (key,), opened))
                await pilot.press("escape")
                await _until(pilot, lambda: app.screen is stage)
        await pilot.press("r")
        await _until(pilot, lambda: session.state.status == "closed" and stage.bridge.worker.is_finished)
        for name in ("key_replay_cold_ms", "key_replay_ms", "key_replay_ready_ms", "key_replay_typed_ms"):
            for _ in range(REPEATS):
                await _replay_key(pilot, frames, stage, name, figures[name])
        figures["key_new_scene_ms"].append(await latency(pilot, frames, ("w",),
                                                         lambda: isinstance(app.screen, WizardScreen)))
    return Path(session.state.run_dir)


async def _replay_key(pilot: Any, frames: Frames, stage: Any, name: str, figures: list[tuple[float, float]]) -> None:
    """`o` on the closed `stage` as `name` says (see the module docstring), then back to the stage."""
    from promptdesk.tui.screens.replay import ReplayScreen

    app = pilot.app
    if name == "key_replay_cold_ms":
        stage.replay.discard()  # nothing made ready, nothing kept
        await pilot.pause()
    elif name == "key_replay_typed_ms":
        for _ in range(20):  # until `o` comes before the kept replay was made ready again
            await pilot.press("o")
            await _until(pilot, lambda: isinstance(app.screen, ReplayScreen))
            await pilot.press("escape")
            for _ in range(1_000):
                if app.screen is stage:
                    break
                await pilot.pause()
            if app.screen is stage and stage.replay.screen is None:
                break
        else:
            raise AssertionError("the replay was always made ready before the typed-ahead `o`")
    elif name == "key_replay_ms":
        await pilot.pause(QUICK_S)
    else:
        await _until(pilot, lambda: stage.replay.screen is not None and stage.replay.settled)
        await pilot.pause(READ_S)
    figures.append(await latency(pilot, frames, ("o",), lambda: isinstance(app.screen, ReplayScreen)))
    await pilot.press("escape")
    await _until(pilot, lambda: app.screen is stage)


def _listed(palette: Any) -> bool:
    """The palette shows its commands (they are gathered by a worker after it opens)."""
    from textual.command import CommandList

    lists = palette.query(CommandList)
    return bool(lists) and lists.first().option_count > 0


async def _new_scene_keys(folder: Path, figures: dict[str, list[tuple[float, float]]]) -> None:
    """`w` again, on fresh closed stages (the first `w` of a console is measured each time)."""
    from promptdesk.tui.app import create_app
    from promptdesk.tui.screens.wizard import WizardScreen

    for _ in range(REPEATS - 1):
        gc.collect()
        session, options = _session(folder, 2)
        app = create_app(session=session, options=options, cwd=folder)
        async with app.run_test(size=SIZE) as pilot:
            frames = Frames(app)
            await _until(pilot, lambda: session.state.status == "closed" and app.screen.bridge.worker.is_finished)
            figures["key_new_scene_ms"].append(await latency(pilot, frames, ("w",),
                                                             lambda: isinstance(app.screen, WizardScreen)))


async def _take(run_dir: Path, figures: dict[str, list[tuple[float, float]]]) -> None:
    """A take from beat 2 of the run: Enter in the take dialog to the take's stage."""
    from promptdesk.tui.app import create_app
    from promptdesk.tui.screens.stage import StageScreen
    from promptdesk.tui.screens.take_dialog import TakeDialog

    for _ in range(REPEATS):
        gc.collect()
        app = create_app(replay=run_dir)
        async with app.run_test(size=SIZE) as pilot:
            frames = Frames(app)
            await pilot.press("b", "b", "b", "f")
            await _until(pilot, lambda: isinstance(app.screen, TakeDialog))
            await pilot.press(*"The window blows open")
            figures["take_start_ms"].append(await latency(pilot, frames, ("enter",),
                                                          lambda: isinstance(app.screen, StageScreen)))
            stage = app.screen
            await stage.bridge.close()


async def _measure() -> dict[str, float]:
    names = ("key_theme_ms", "key_palette_ms", "key_note_ms", "key_help_ms", "key_replay_ms", "key_replay_ready_ms",
             "key_replay_typed_ms", "key_replay_cold_ms", "key_new_scene_ms", "take_start_ms")
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "scenes").mkdir()
        run_dir = await _stage_keys(folder, figures)
        await _new_scene_keys(folder, figures)
        await _take(run_dir, figures)
    result: dict[str, float] = {}
    for name, values in figures.items():
        result[name] = round(statistics.median(wall for wall, _ in values), 1)
        result[name.replace("_ms", "_cpu_ms")] = round(statistics.median(cpu for _, cpu in values), 1)
    return result


def run() -> dict[str, float]:
    """Run the benchmark once and return its figures (medians, in milliseconds)."""
    return asyncio.run(_measure())


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key}: {value}")
