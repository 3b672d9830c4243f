"""A closed stage makes its replay ready off screen while it waits; `o` then shows that very screen.

Nothing is made ready while the scene plays; a replay is shown once (the next `o` gets a new one);
`o` before it is ready builds it as before; a ready replay goes with its stage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tui_support import session_for, wait_for

from promptdesk.tui import replay_ready
from promptdesk.tui.app import create_app
from promptdesk.tui.screens.replay import ReplayScreen

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _at_once(monkeypatch):
    """Ready a millisecond after the close, so that no test waits on the wall clock for it."""
    monkeypatch.setattr(replay_ready, "READY_AFTER_S", 0.001)
    monkeypatch.setattr(replay_ready, "SETTLE_S", 0.001)


async def test_a_closed_stage_readies_its_replay_and_o_shows_that_one(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        assert stage.replay.screen is None, "nothing is made ready while the scene plays"
        await wait_for(pilot, lambda: stage.replay.screen is not None, "the ready replay")
        ready = stage.replay.screen
        assert session.state.status == "closed"
        assert isinstance(ready, ReplayScreen) and ready.run_dir == Path(session.state.run_dir)
        assert ready.is_running and ready not in app.screen_stack, "mounted, not shown"
        await pilot.press("o")
        assert app.screen is ready and stage.replay.screen is None
        await pilot.press("end")
        assert ready.playback.done
        await pilot.press("escape")
        assert app.screen is stage
        await wait_for(pilot, lambda: stage.replay.screen is not None, "the next ready replay")
        assert stage.replay.screen is ready, "the replay shown is kept and made ready again"
        assert ready.playback.shown == 0 and not ready.playback.done and not ready.playback.playing, "rewound"


async def test_o_before_the_replay_is_ready_builds_it_then(workspace, monkeypatch):
    monkeypatch.setattr(replay_ready, "READY_AFTER_S", 60.0)
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished, "the close")
        await pilot.pause()
        assert stage.replay.screen is None
        await pilot.press("o")
        assert isinstance(app.screen, ReplayScreen) and app.screen.run_dir == Path(session.state.run_dir)


async def test_a_ready_replay_goes_with_its_stage(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: stage.replay.screen is not None, "the ready replay")
        ready = stage.replay.screen
        stage.replay.discard()
        await wait_for(pilot, lambda: not ready.is_attached, "the ready replay removed")
        assert stage.replay.screen is None


async def test_a_replay_discarded_while_it_is_still_mounting_goes_quietly(workspace, monkeypatch):
    made = replay_ready.ReplayReady._make
    caught: list = []

    def make_then_discard(self) -> None:
        made(self)
        if self.screen is not None and not caught:
            caught.append(self.screen)
            assert not self.screen.is_mounted, "the replay is discarded before it has mounted"
            self.discard()

    monkeypatch.setattr(replay_ready.ReplayReady, "_make", make_then_discard)
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: bool(caught), "a replay made ready")
        await wait_for(pilot, lambda: not caught[0].is_attached, "the discarded replay removed")
        assert stage.replay.screen is None and app.screen is stage
        await pilot.press("o")
        assert isinstance(app.screen, ReplayScreen) and app.screen is not caught[0]


def _picture(app) -> str:
    return re.sub(r"terminal-\d+", "terminal", app.export_screenshot())


async def test_a_ready_replay_is_laid_out_off_screen_and_shows_as_one_built_at_once(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: stage.replay.screen is not None and stage.replay.settled, "the replay laid out")
        ready = stage.replay.screen
        assert ready.size == app.size and ready not in app.screen_stack
        await pilot.press("t")  # a theme chosen while the replay waits off screen is the one it shows
        await pilot.press("o")
        assert app.screen is ready
        await pilot.pause(0.1)
        shown = _picture(app)
        await pilot.press("escape")
        stage.replay.discard()
        await pilot.pause()
        await pilot.press("o")
        assert app.screen is not ready
        await pilot.pause(0.1)
        assert _picture(app) == shown


async def test_a_kept_replay_opens_again_as_a_new_one_would(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: stage.replay.settled, "the replay laid out")
        await pilot.press("o")
        kept = app.screen
        await pilot.press("end", "x")
        view = kept.pane_view()
        view.show_panes(list(view.cast.names)[:1])
        assert kept.playback.done and view.shown != list(view.cast.names)
        await pilot.press("escape", "o")  # typed ahead: nothing made ready yet, the kept one is rewound
        assert app.screen is kept and kept.playback.shown == 0 and view.shown == list(view.cast.names)
        await pilot.press("end")
        await pilot.press("escape")
        # ready: laid out, or done trying (on a loaded machine the layouts may run out: `o` then lays it out)
        await wait_for(pilot, lambda: stage.replay.screen is kept and (stage.replay.settled or stage.replay._timer is None),
                       "the kept replay ready")
        await pilot.press("o")
        await wait_for(pilot, lambda: not app.screen._layout_required, "the replay drawn")
        again = _picture(app)
        await pilot.press("escape")
        stage.replay.discard()
        await wait_for(pilot, lambda: not kept.is_attached, "the kept replay removed with discard")
        assert not app.is_screen_installed(kept)
        await pilot.press("o")
        assert app.screen is not kept and isinstance(app.screen, ReplayScreen)
        await wait_for(pilot, lambda: not app.screen._layout_required, "the new replay drawn")
        await pilot.pause()
        assert _picture(app) == again


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 5, 8, 13, 21, 34, 55])
async def test_the_app_closing_while_a_replay_is_made_ready_closes_cleanly(workspace, monkeypatch, steps):
    """The app closes `steps` turns of the event loop after a replay began to be made ready: at one of
    them it is still composing, and the close must neither fail nor draw into what it removed."""
    import asyncio

    made = replay_ready.ReplayReady._make
    caught: list = []

    def make_and_note(self) -> None:
        made(self)
        if self.screen is not None:
            caught.append(self.screen)

    monkeypatch.setattr(replay_ready.ReplayReady, "_make", make_and_note)
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=SIZE):
        for _ in range(100_000):
            if caught:
                break
            await asyncio.sleep(0)
        for _ in range(steps):
            await asyncio.sleep(0)
    assert caught, "a replay was made ready"
