"""Snapshots of the wizard at 80x24 and 140x45: a choice step, the provider step and the confirm step.

Update with `pytest tests/tui/test_tui_wizard_snapshots.py --snapshot-update` after looking at the report.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import wizard_app


SIZES = {"80x24": (80, 24), "140x45": (140, 45)}


def wizard(workspace: Path, scene: str = "the-apology.yaml"):
    """The wizard on `scene`, its run folder named relatively (the same on every machine)."""
    return wizard_app(workspace, scene, runs_root=Path("runs"))


@pytest.mark.parametrize("size", SIZES)
def test_wizard_first_choice_unanswered(workspace, snap_compare, size):
    """"Choice 1 of 2": the two options first, each `▐○▌` (nothing chosen), "Nothing is pre-selected.
    Press a or b…" under them, then the intro and spec 000's table; at the bottom, left of Back and a dimmed
    Next, "Next: choose an option first (press a or b)."; the footer's "^n Next" dimmed."""
    assert snap_compare(wizard(workspace), press=["ctrl+n", "ctrl+n"], terminal_size=SIZES[size])


@pytest.mark.parametrize("size", SIZES)
def test_wizard_first_choice_answered(workspace, snap_compare, size):
    """The same step after `b`: row (b) reads `▐●▌`, row (a) `▐○▌`; the line under them says "Chosen: (b)
    Separate API conversation per actor. Press a to change it."; Next is lit and no reason is shown."""
    assert snap_compare(wizard(workspace), press=["ctrl+n", "ctrl+n", "b"], terminal_size=SIZES[size])


@pytest.mark.parametrize("size", SIZES)
def test_wizard_confirm_of_a_roundtable(workspace, snap_compare, size):
    """The confirm step of the on-call rota roundtable: Scene, Format Roundtable, Topic, Strategy "free
    (sequential answers)", Rounds, Cast, both choices, Actors (the offline improviser, a program on this
    machine), Judge (none, role C), Sent out (nothing), Pace, Seed 7, Run folder (no Protocol row: a
    roundtable answers in its own blocks), and
    "Starting writes notes.md…"; the button reads "Start the scene"."""
    assert snap_compare(wizard(workspace, "roundtable-free.yaml"),
                        press=["ctrl+n", "ctrl+n", "a", "ctrl+n", "c", "ctrl+n", "ctrl+n"],
                        terminal_size=SIZES[size])
