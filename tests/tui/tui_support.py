"""Support for the console's tests: a private workspace, fast seeded scenes, bounded waiting."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from promptdesk.core.clock import VirtualClock
from promptdesk.core.casting.scene_file import Scene, load_scene
from promptdesk.core.casting.build import RunOptions, build_session

ROOT = Path(__file__).resolve().parents[2]
SEED = 7


def make_workspace(folder: Path) -> Path:
    """Copy the example scenes and characters into `folder` (runs and journals stay there)."""
    shutil.copytree(ROOT / "scenes", folder / "scenes", ignore=shutil.ignore_patterns(".promptdesk"))
    shutil.copytree(ROOT / "characters", folder / "characters")
    return folder


def fast(scene: Scene) -> Scene:
    """The scene with no simulated model latency (the offline improviser answers at once)."""
    return scene.model_copy(update={"provider": scene.provider.model_copy(update={"latency_ms": None})})


def run_options(workspace: Path, **overrides) -> RunOptions:
    """Seeded, private, journal-free run options inside the workspace."""
    values = dict(seed=SEED, runs_root=workspace / "runs", write_character_journals=False, cwd=workspace)
    values.update(overrides)
    return RunOptions(**values)


def session_for(workspace: Path, scene: str = "the-apology.yaml", *, latency: bool = False,
                isolation: str = "b", coordinator: str = "C", **overrides):
    """A real session on the seeded offline improviser, ready to run."""
    loaded = load_scene(workspace / "scenes" / scene)
    if not latency:
        loaded = fast(loaded)
    overrides.setdefault("clock", VirtualClock())
    return build_session(loaded, run_options(workspace, isolation=isolation, coordinator=coordinator, **overrides))


async def wait_for(pilot, condition: Callable[[], bool], what: str = "condition", limit: int = 4000) -> None:
    """Let the app run (bounded number of `pilot.pause()` turns) until `condition()` holds."""
    for _ in range(limit):
        if condition():
            return
        await pilot.pause()
    raise AssertionError(f"timed out waiting for {what}")


def screen_text(app) -> str:
    """Everything on the screen now, as plain text (one line per terminal row)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def wizard_app(workspace: Path, scene: str | None = "the-apology.yaml", **options):
    """The console's setup wizard in `workspace` on `scene` (None: the scene list), with no simulated
    model latency and seeded, private run options (`options` over them)."""
    from promptdesk.tui.app import create_app

    path = workspace / "scenes" / scene if scene else None
    return create_app(scene=path, options=run_options(workspace, **options), cwd=workspace, scene_transform=fast)


def wizard_step(app) -> str:
    """The wizard's step on screen, by name (`promptdesk.tui.screens.wizard.STEPS`)."""
    from promptdesk.tui.screens.wizard import STEPS, WizardScreen

    assert isinstance(app.screen, WizardScreen), app.screen
    return STEPS[app.screen.step]


def hold_at(session, beat: int = 1):
    """Pause the scene (through its control channel) the moment `beat` starts: a fixed point."""
    def on_event(event) -> None:
        if event.type == "beat" and event.beat == beat and session.state.status == "running":
            session.pause()
    session.subscribe(on_event)
    return session


async def held(pilot, session):
    """Wait until the scene is held at its safe point, then show every event and the session panel
    as of then; the stage."""
    await wait_for(pilot, lambda: session.state.status == "paused" and not session._tasks, "the pause to hold")
    stage = pilot.app.screen
    stage.flush()
    stage.refresh_state()
    await pilot.pause()
    return stage
