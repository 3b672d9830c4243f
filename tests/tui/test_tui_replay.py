"""Replay: a run folder played back from `events.jsonl` alone, by `t`, with no model called."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tui_support import ROOT, screen_text

from promptdesk.tui.app import create_app
from promptdesk.tui.screens.replay import ReplayScreen
from promptdesk.tui.widgets.stage_view import StageView
from promptdesk.tui.widgets.state_panel import StatePanel
from promptdesk.tui.widgets.transcript import Transcript

FIXTURE = Path(__file__).parent / "fixtures" / "replay-run"
SIZE = (120, 40)


class FakeClock:
    """Real seconds, advanced by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def replay_app(run_dir: Path, clock: FakeClock | None = None):
    app = create_app(replay=run_dir)
    if clock is not None:
        app.first_screen = lambda: ReplayScreen(run_dir, clock=clock)
    return app


def speech(screen: ReplayScreen) -> list[str]:
    return [line for line in screen.query_one(Transcript).plain_lines() if line.startswith(("Alice", "Bob", "Charlie"))]


async def test_replay_plays_by_t_at_the_chosen_speed(tmp_path):
    run = shutil.copytree(FIXTURE, tmp_path / "run")
    clock = FakeClock()
    app = replay_app(run, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("space")
        clock.now += 0.9
        screen.advance()
        await pilot.pause()
        assert speech(screen) == ['Alice → Bob (firm) *folds arms*  "We lost the Henderson account."']
        await pilot.press("x", "x")
        assert screen.playback.speed == 16.0
        clock.now += 0.5
        screen.advance()
        await pilot.pause()
        assert screen.playback.done and len(speech(screen)) == 5
        assert screen.query_one(StatePanel).snapshot.close_reason == "natural"


async def test_replay_steps_by_event_and_by_beat_and_replays_thinking(tmp_path):
    app = replay_app(shutil.copytree(FIXTURE, tmp_path / "run"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press(".")
        assert screen.playback.shown == 1
        assert ". Step" in screen_text(app) and "period" not in screen_text(app)
        await pilot.press("b", "b")
        view = screen.query_one(StageView)
        assert view.pane("alice").thoughts == ["He knew. I could see it in the status reports."]
        assert view.pane("bob").thoughts == []
        await pilot.press("b")
        assert view.pane("bob").thoughts == ["Say it now, before she asks."]
        assert "⚡ EVENT (from you): The phone rings" in screen.query_one(Transcript).plain_lines()
        state = screen.query_one(StatePanel).snapshot
        assert (state.beat, state.turns["bob"], state.tokens) == (1, 1, 420)


async def test_replay_scrubs_back_and_forth(tmp_path):
    app = replay_app(shutil.copytree(FIXTURE, tmp_path / "run"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("end")
        assert screen.playback.done and len(speech(screen)) == 5
        await pilot.press("left", "left", "left", "left", "left")
        assert screen.playback.playhead == 2.5
        assert len(speech(screen)) == 3
        assert screen.query_one(StageView).pane("alice").thoughts == ["He knew. I could see it in the status reports."]
        await pilot.press("right")
        assert len(speech(screen)) == 3 and screen.playback.playhead == 3.0
        await pilot.press("home")
        assert screen.playback.shown == 0 and speech(screen) == []


async def test_a_click_on_the_position_bar_scrubs(tmp_path):
    app = replay_app(shutil.copytree(FIXTURE, tmp_path / "run"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        bar = screen.query_one("PlaybackBar")
        await pilot.click(bar, offset=(bar.size.width - 2, 1))
        assert screen.playback.done


def test_replay_loads_no_provider_and_calls_no_model(tmp_path):
    """Replay runs from events.jsonl alone: no provider module and no SDK is ever imported."""
    run = shutil.copytree(FIXTURE, tmp_path / "run")
    script = textwrap.dedent(f"""
        import asyncio, sys
        from pathlib import Path
        from promptdesk.tui.app import create_app

        async def main():
            app = create_app(replay=Path({str(run)!r}))
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.press("end")
                assert app.screen.playback.done
        asyncio.run(main())
        loaded = [m for m in sys.modules if m.startswith(("anthropic", "openai", "promptdesk.core.improv.provider",
                  "promptdesk.core.providers.registry", "promptdesk.core.providers.remote", "promptdesk.core.casting.build", "promptdesk.core.engine.session"))]
        print("LOADED", loaded)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout


def test_what_a_replay_preloads_while_it_waits_for_keys_loads_no_provider(tmp_path):
    """The modules a replay console imports ahead of its keys (the help, the take dialog, ...) are none of
    the engine's setup: a replay loads no provider, ahead of time either."""
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from promptdesk.tui.app import create_app, preload

        app = create_app(replay=Path({str(FIXTURE)!r}))
        preload(app.preloaded)
        loaded = [m for m in sys.modules if m.startswith(("anthropic", "openai", "promptdesk.core.improv.provider",
                  "promptdesk.core.providers.registry", "promptdesk.core.casting.build", "promptdesk.core.engine.session"))]
        print("LOADED", loaded, "promptdesk.tui.screens.help" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "LOADED [] True" in out.stdout, out.stdout
