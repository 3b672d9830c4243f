"""The console's heap between keys (`promptdesk.tui.heap_keeper`): what is alive is kept out of the
collector's full passes, and what becomes garbage is collected when nobody is waiting."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from promptdesk.tui import heap_keeper
from promptdesk.tui.app import create_app
from promptdesk.tui.screens.help import HelpScreen

FIXTURE = Path(__file__).parent / "fixtures" / "replay-run"


class Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def thawed():
    """Each test starts and ends with nothing frozen, no scene live and no settle counted."""
    gc.unfreeze()
    heap_keeper._live_sessions, heap_keeper._settled, heap_keeper._untidy = 0, 0, False
    yield
    heap_keeper._live_sessions, heap_keeper._settled, heap_keeper._untidy = 0, 0, False
    gc.unfreeze()


def frozen_garbage() -> weakref.ref:
    """A cycle that was alive when the heap was settled, and is garbage now."""
    cycle = Cycle()
    heap_keeper.settle()
    ref = weakref.ref(cycle)
    del cycle
    gc.collect()
    return ref


def test_settle_freezes_what_survives_and_only_tidy_collects_it_once_it_is_garbage():
    before = gc.get_freeze_count()
    ref = frozen_garbage()
    assert gc.get_freeze_count() > before
    assert ref() is not None, "a frozen object is out of the collector's reach"
    heap_keeper.tidy()
    assert ref() is None and gc.get_freeze_count() > 0, "tidy collects it and freezes the survivors again"


def test_no_tidy_while_a_scene_is_live_and_one_as_the_last_closes():
    heap_keeper.session_started()
    heap_keeper.session_started()
    ref = frozen_garbage()
    heap_keeper.tidy_if_untidy()
    heap_keeper.session_ended()
    assert ref() is not None and heap_keeper._live_sessions == 1, "one scene is still live: nothing walked"
    heap_keeper.session_ended()
    assert ref() is None and heap_keeper._live_sessions == 0


def test_tidy_if_untidy_does_nothing_after_a_tidy():
    ref = frozen_garbage()
    heap_keeper.tidy_if_untidy()
    assert ref() is None
    kept = Cycle()
    gc.freeze()  # frozen behind the keeper's back: it was told of nothing new
    ref = weakref.ref(kept)
    del kept
    heap_keeper.tidy_if_untidy()
    assert ref() is not None


async def test_the_console_settles_each_screen_and_puts_off_tidying_at_each_key(monkeypatch):
    import promptdesk.tui.app as console

    monkeypatch.setattr(console, "SETTLE_AFTER_S", 1e-6)
    app = create_app(replay=FIXTURE)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        gc.unfreeze()
        await pilot.press("question_mark")
        for _ in range(500):  # loop turns, not wall time: the settle's timer is due at once (a loaded machine draws late)
            await pilot.pause()
            if gc.get_freeze_count():
                break
        assert isinstance(app.screen, HelpScreen)
        assert gc.get_freeze_count() > 0, "the new screen's first frame settled the heap"
        first = app._tidying
        assert first is not None and first._interval == heap_keeper.TIDY_AFTER_S
        await pilot.press("escape")
        await pilot.pause()
        assert app._tidying is not first, "a key starts the wait again"
    assert gc.get_freeze_count() == 0, "the closed console handed everything back"


def test_a_console_driven_without_a_pause_still_gets_its_garbage_back(monkeypatch):
    """Every `SETTLES_PER_TIDY`-th settle is a tidy: what became garbage while frozen is collected
    even when no pause ever comes."""
    monkeypatch.setattr(heap_keeper, "SETTLES_PER_TIDY", 3)
    heap_keeper.tidy()
    ref = frozen_garbage()
    heap_keeper.settle()
    assert ref() is not None
    heap_keeper.settle()
    assert ref() is None
