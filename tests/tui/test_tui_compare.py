"""The Compare screen (a snapshot) and the beat timeline widget, over hand-written run logs."""

from __future__ import annotations

from core.compare import folders_of
from core.recorder import read_events
from test_compare import make_sweep
from test_metrics import HAND_COUNTED, write_run
from tui.app import PromptdeskApp
from tui.screens.compare import CompareScreen
from tui.widgets.beat_timeline import BeatTimeline


def test_compare_screen_of_a_sweep(tmp_path, snap_compare):
    """A sweep of two conditions × two seeds: the title line; the comparison table (metric rows, columns
    a-C and b-C with mean ± sd (n=2), `turns *` and `beats *` marked); the sentence naming the differences
    beyond the spread; then a panel per run: its outcome line, Alice's and Bob's timeline rows (blue █
    per beat Alice spoke), the legend, a talk-share bar per actor, and the spend-per-beat sparkline."""
    folders, by = folders_of([make_sweep(tmp_path / "sweep")])
    assert snap_compare(PromptdeskApp(lambda: CompareScreen(folders, by)), terminal_size=(120, 50))


async def test_the_timeline_grows_as_live_events_arrive(tmp_path):
    events = read_events(write_run(tmp_path / "run", HAND_COUNTED))
    names = {"alice": "Alice", "bob": "Bob", "charlie": "Charlie"}
    widget = BeatTimeline(names)
    app = PromptdeskApp(lambda: CompareScreen([tmp_path / "run"], "run"))
    async with app.run_test() as pilot:
        await app.screen.mount(widget)
        widget.extend(events[:4])
        await pilot.pause()
        first = widget.render().plain.splitlines()
        widget.extend(events[4:])
        await pilot.pause()
        later = widget.render().plain.splitlines()
    assert first[:3] == ["Alice   █ ", "Bob      ▲", "Charlie   "]
    assert later[:3] == ["Alice   █   █", "Bob      ▲   ", "Charlie  ·✗◆ "]
