"""Takes in the console: the Compare screen puts takes of one scene side by side from their branch beat."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from test_takes_compare import make_takes
from tui.app import PromptdeskApp
from tui.screens.compare import CompareScreen
from tui.widgets.takes_view import TakesView


@pytest.fixture(scope="module")
def takes(tmp_path_factory) -> Path:
    return make_takes(tmp_path_factory.mktemp("takes"))


def test_compare_screen_of_two_takes(takes, snap_compare):
    """A parent and its take with a world event at beat 4: the title says the takes are measured from beat
    4; the "Takes from beat 4" panel shows the tree (parent, └─ phone: take of parent from beat 4, world
    event) and a table with a row per beat from 4 and a column per take, the take's world event
    highlighted after » in beat 4, beat 4 flagged ≠ (they diverge there); then the comparison table of
    beats 4 on and a panel per run."""
    folders = [takes / "parent", takes / "phone"]
    assert snap_compare(PromptdeskApp(lambda: CompareScreen(folders, "run")), terminal_size=(120, 50))


async def test_the_takes_table_is_aligned_by_beat_and_marks_the_change(takes):
    folders = [takes / "parent", takes / "phone", takes / "phone-note"]
    app = PromptdeskApp(lambda: CompareScreen(folders, "run"))
    async with app.run_test(size=(160, 50)):
        view = app.screen.query_one(TakesView)
        table = view.query_one("#takes-beats", DataTable)
        rows = [[str(c) for c in table.get_row(key)] for key in table.rows]
        tree = str(view.query_one("#takes-tree", Static).render())
        title = str(app.screen.query_one("#title", Static).render())
        metrics = app.screen.query_one("#comparison", DataTable)
        beats = next([str(c) for c in metrics.get_row(k)] for k in metrics.rows if str(metrics.get_row(k)[0]) == "beats")
    assert [r[0] for r in rows][:3] == ["4 ≠", "5", "6"]
    assert rows[0][2].startswith("» [EVENT: The phone rings") and rows[0][1] != rows[0][2]
    assert rows[2][3].startswith("» [NOTE to Bob: Keep it short]"), "the note of the take of the take, at beat 6"
    assert rows[0][2] == rows[0][3], "the take of the take shares its parent's beats up to 6"
    assert tree.splitlines()[1].startswith("└─ phone (take of parent from beat 4") and "   └─ phone-note" in tree
    assert "3 takes, measured from beat 4" in title
    assert int(beats[1]) < 10, "beats are counted from the branch beat"
