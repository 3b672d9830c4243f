"""Snapshots at the two sizes the console is tried at, 80x24 and 140x45 (the stage at 60x20 too): the stage
(a scene held at beat 3, a roundtable waiting for the operator), the replay and the Compare screen.

Every scene is played by the seeded offline improviser on a virtual clock, so the pictures are the same
on every machine. Update with `pytest tests/tui/test_tui_snapshots_sizes.py --snapshot-update`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_tui_snapshots import held_stage
from tui_support import session_for, wait_for

from promptdesk.tui.app import create_app

SIZES = {"80x24": (80, 24), "140x45": (140, 45)}


STAGE_SIZES = {**SIZES, "60x20": (60, 20)}


@pytest.mark.parametrize("size", STAGE_SIZES)
def test_stage_held_at_beat_three(workspace, snap_compare, size):
    """The title starting "Promptdesk · paused ·"; transcript through beat 3 and "‖ Scene paused by the
    operator"; the Session panel (narrow at 80 columns and less) with Beats 4 of 30, Status paused, the run
    folder broken between names; three thinking panes titled alike ("PRIVATE · Alice" and "only you see
    this" below when wide; at 60x20 "Alice" above and "PRIVATE" below, every pane the same way); a key bar
    of only what acts now, each key whole: q Quit, s Stop, e World event (e Event at 60 columns), n Note,
    r Resume, +- Pace, t Theme (and ^p palette where it fits)."""
    app, held = held_stage(Path.cwd(), f"the-apology-{size}")
    assert snap_compare(app, terminal_size=STAGE_SIZES[size], run_before=held)


@pytest.mark.parametrize("size", SIZES)
def test_roundtable_waiting_for_the_operator(workspace, snap_compare, size):
    """A roundtable whose escalation waits (its dialog closed with esc): no PRIVATE panes, the whole
    transcript; the panel's `Waiting   your decision (a)` on one row; `a Decide` in the footer."""
    from promptdesk.tui.formats.escalation_modal import EscalationModal

    session = session_for(Path.cwd(), "roundtable-debate.yaml", isolation="a", coordinator="C",
                          out=Path(f"runs/roundtable-{size}"))

    async def waiting(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, EscalationModal), "the escalation")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()

    assert snap_compare(create_app(session=session), terminal_size=SIZES[size], run_before=waiting)


@pytest.mark.parametrize("size", SIZES)
def test_replay_after_four_beats(workspace, snap_compare, size):
    """The replay of a finished run after four beat steps: the transcript and thinking so far, the panel
    (narrow at 80 columns), the position bar and the replay's footer."""
    session = session_for(Path.cwd(), latency=True, out=Path(f"runs/the-apology-replay-{size}"))
    asyncio.run(session.run())
    app = create_app(replay=Path(f"runs/the-apology-replay-{size}"))
    assert snap_compare(app, press=["b", "b", "b", "b"], terminal_size=SIZES[size])


@pytest.mark.parametrize("size", SIZES)
def test_compare_screen_of_a_sweep(tmp_path, snap_compare, size):
    """A sweep of two conditions × two seeds: the tables, the notes, then each run's timeline, talk
    shares and spend per beat."""
    from test_compare import make_sweep

    from promptdesk.core.experiments.compare import folders_of
    from promptdesk.tui.app import PromptdeskApp
    from promptdesk.tui.screens.compare import CompareScreen

    folders, by = folders_of([make_sweep(tmp_path / "sweep")])
    assert snap_compare(PromptdeskApp(lambda: CompareScreen(folders, by)), terminal_size=SIZES[size])
