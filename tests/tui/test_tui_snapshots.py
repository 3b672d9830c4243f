"""Snapshots of the console at 120x40: the wizard, a live stage with three actors, a replay.

Every scene here is played by the seeded offline improviser on a virtual clock, so the pictures
are the same on every machine. Update with `pytest tests/tui/test_tui_snapshots.py --snapshot-update`
after looking at the report.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tui_support import held, hold_at, session_for, wait_for, wizard_app

from promptdesk.tui.app import create_app

SIZE = (120, 40)


@pytest.fixture
def here(workspace: Path) -> Path:
    """The workspace, with the run folders named relatively so that they print the same everywhere."""
    return workspace


def test_wizard_presents_the_first_choice_with_nothing_selected(here, snap_compare):
    """The wizard on "Choice 1 of 2 — How to enforce actor isolation": a sentence on what both options
    guarantee, spec 000's table (Option | In Promptdesk | Trade-off) with rows (a) and (b), two radio
    buttons with neither selected, "Nothing is pre-selected. Press a or b…", Back and Next at the
    bottom right with Next greyed out, and the footer's "^n Next" dimmed."""
    app = wizard_app(here)
    assert snap_compare(app, press=["ctrl+n", "ctrl+n"], terminal_size=SIZE)


def held_stage(here: Path, name: str):
    """The Apology, live, paused by the operator as beat 3 began; returns the app and a `run_before`."""
    session = hold_at(session_for(here, latency=True, out=Path(f"runs/{name}")), beat=3)

    async def run_before(pilot) -> None:
        await held(pilot, session)

    return create_app(session=session), run_before


def test_stage_at_80x24(here, snap_compare):
    """The same held stage in an 80x24 terminal: the title, the transcript (wrapped) beside a 30-column
    Session panel (Beats 4 of 30, Status paused, Pace off), three thinking panes side by side marked
    PRIVATE, and a compact footer that starts with "q Quit"."""
    app, held = held_stage(here, "the-apology-80x24")
    assert snap_compare(app, terminal_size=(80, 24), run_before=held)


def test_stage_at_200x50(here, snap_compare):
    """The same held stage in a 200x50 terminal: a wide transcript with every line on one row, the Session
    panel with every row (Format … Run folder), three tall thinking panes with "PRIVATE · name" titles and
    "never routed" below, and the full footer (q Quit, s Stop, … + Slower, - Faster, … t Theme)."""
    app, held = held_stage(here, "the-apology-200x50")
    assert snap_compare(app, terminal_size=(200, 50), run_before=held)


def test_stage_with_three_actors_held_at_beat_three(here, snap_compare):
    """The Apology, live, paused by the operator as beat 3 began (it holds before beat 4): the transcript
    (scene title, beat rules,
    coloured speaker names with → target, (tone), *gesture* and the quoted words, silences, the
    "‖ Scene paused by the operator" line); the Session panel on the right (scene · parallel,
    (b) thread per actor, C — pure code, Beat 4 of 30, Status paused, tokens, turns per actor, run
    folder runs/the-apology-snapshot); below, three "PRIVATE · Alice/Bob/Charlie" thinking panes
    side by side; the footer with Pause dimmed and Resume available."""
    session = session_for(here, latency=True, out=Path("runs/the-apology-snapshot"))

    def hold(event) -> None:
        if event.type == "beat" and event.beat == 3 and session.state.status == "running":
            session.pause()

    session.subscribe(hold)

    async def held(pilot) -> None:
        stage = pilot.app.screen
        await wait_for(pilot, lambda: session.state.status == "paused" and not session._tasks, "the pause")
        stage.flush()
        stage.refresh_state()
        await pilot.pause()

    assert snap_compare(create_app(session=session), terminal_size=SIZE, run_before=held)


def test_replay_after_four_beats(here, snap_compare):
    """The replay of a finished run of The Apology (runs/the-apology-replay) after four steps by beat:
    the title "Promptdesk · replay · The Apology", the transcript through beat 2 (the first step plays
    the preamble), the three private thinking panes with the thoughts of those beats, the Session
    panel folded from the events (Beat 2, Status running),
    the position bar "‖ paused · 1x · … s of … s · event n of N" over a partly filled bar, and the footer's
    keys, `f Take` among them."""
    session = session_for(here, latency=True, out=Path("runs/the-apology-replay"))
    asyncio.run(session.run())
    app = create_app(replay=Path("runs/the-apology-replay"))
    assert snap_compare(app, press=["b", "b", "b", "b"], terminal_size=SIZE)
