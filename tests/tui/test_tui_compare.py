"""The Compare screen (a snapshot) and the beat timeline widget, over hand-written run logs."""

from __future__ import annotations

from pathlib import Path

from promptdesk.core.experiments.compare import folders_of
from promptdesk.core.record.recorder import read_events
from test_compare import make_stats_sweep, make_sweep
from test_metrics import HAND_COUNTED, write_run
from promptdesk.tui.app import PromptdeskApp
from textual.widgets import DataTable, Static

from promptdesk.tui.screens.compare import CompareScreen, RunPanel
from promptdesk.tui.widgets.beat_timeline import BeatTimeline


def test_compare_screen_of_a_sweep(tmp_path, snap_compare):
    """A sweep of two conditions × two seeds: the title line; the comparison table (metric rows, columns
    a-C and b-C with mean ± sd (n=2), `success` unknown, nothing starred: two seeds cannot make a
    difference significant); the differences table (n pairs, b − a, 95% CI, d_z, p, p (Holm), seeds for
    80% power; `success` and `echo`, unknown in every run, say "too few pairs" where p would be); the notes
    (paired by seed, the test, the adjustment); then a panel per run: its outcome line (close, goal, success unknown, beats), Alice's and
    Bob's timeline rows (blue █ per beat Alice spoke), the legend, a talk-share bar per actor, and the
    spend-per-beat sparkline."""
    folders, by = folders_of([make_sweep(tmp_path / "sweep")])
    assert snap_compare(PromptdeskApp(lambda: CompareScreen(folders, by)), terminal_size=(120, 50))


async def test_the_compare_screen_gives_the_differences_and_each_runs_recorded_success(tmp_path):
    folders, by = folders_of([make_stats_sweep(tmp_path / "sweep")])
    app = PromptdeskApp(lambda: CompareScreen(folders, by))
    async with app.run_test(size=(160, 50)):
        screen = app.screen
        comparison = screen.query_one("#comparison", DataTable)
        rows = [[str(c) for c in comparison.get_row(key)] for key in comparison.rows]
        differences = screen.query_one("#differences", DataTable)
        pairs = [[str(c) for c in differences.get_row(key)] for key in differences.rows]
        summary = str(screen.query_one("#summary", Static).render())
        outcomes = {panel.folder.name: str(panel.query_one(Static).render()) for panel in screen.query(RunPanel)}
    assert ["success", "0.8 ± 0.447 (n=5)", "unknown", "unknown"] in rows and ["turns"] == \
        [r[0] for r in rows if r[0].startswith("turns")]
    turns = next(p for p in pairs if p[:3] == ["turns", "a-C", "b-C"])
    assert (turns[3], turns[4], turns[5], turns[7], turns[8], turns[9]) == ("5", "+4.4", "unbounded", "0.062", "0.500", "9")
    prose = " ".join(summary.split())
    assert "Paired by seed" in prose and "No difference is significant at 0.05 after adjustment." in prose
    assert "natural, goal not achieved, not a success, 3 beats" in outcomes["a-C-seed2"]
    assert "goal not achieved, success, 2 beats" in outcomes["a-C-seed1"]
    assert "success unknown" in outcomes["b-B-seed1"]


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


async def test_the_stage_keeps_a_live_beat_timeline_shown_from_the_palette(workspace):
    from promptdesk.tui.app import create_app
    from tui_support import session_for, wait_for
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: session.state.status == "closed", "the close")
        stage = app.screen
        stage.flush()
        timeline = stage.query_one(BeatTimeline)
        assert timeline.has_class("-hidden")
        next(c for c in stage.commands() if c.title == "Beat timeline").callback()
        await pilot.pause()
        assert not timeline.has_class("-hidden") and timeline.region.height == 4
        rows = timeline.render().plain.splitlines()
    assert [row.split()[0] for row in rows[:3]] == ["Alice", "Bob", "Charlie"]
    assert sum(row.count("█") + row.count("▲") + row.count("◆") for row in rows[:3]) == \
        sum(1 for e in read_events(Path(session.state.run_dir)) if e.type == "speak" and e.action != "silent")


async def test_compare_runs_from_the_palette_asks_for_folders_and_names_a_bad_one(tmp_path):
    sweep = make_sweep(tmp_path / "sweep")
    app = PromptdeskApp(lambda: CompareScreen([sweep / "a-C-seed1"], "run"))
    async with app.run_test(size=(120, 40)) as pilot:
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Compare runs")
        command.callback()
        await pilot.pause()
        await pilot.press(*str(tmp_path / "nothing-here"), "enter")
        await pilot.pause()
        problem = str(app.screen.query_one("#problem").render())
        assert "not a run folder" in problem
        app.screen.query_one("Input").value = str(sweep)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.by == "condition" and list(app.screen.comparison.columns) == ["a-C", "b-C"]


async def test_the_journal_steps_spend_is_shown_apart_from_the_last_beat(tmp_path):
    """The journal calls come after the close (recorded at the last beat): their tokens are not the
    last beat's, and the panel names them apart."""
    from test_metrics import call
    free = [{k: v for k, v in r.items() if k != "cost_usd"} for r in HAND_COUNTED]
    journal = call(13.0, "alice", 4, input_tokens=900, output_tokens=500) | {"purpose": "journal"}
    write_run(tmp_path / "run", [*free, journal])
    app = PromptdeskApp(lambda: CompareScreen([tmp_path / "run"], "run"))
    async with app.run_test(size=(120, 40)):
        panel = app.screen.query_one(RunPanel)
        from textual.widgets import Label, Sparkline
        data = list(panel.query_one(Sparkline).data)
        labels = [str(label.render()) for label in panel.query(Label)]
    assert data == [20.0, 0.0, 10.0, 0.0, 0.0]
    assert "journal step, after the close: 500" in labels


LONG = "Dr. Evangeline Montgomery-Smythe, Senior Partner"


def long_named_compare(tmp_path: Path) -> PromptdeskApp:
    """The compare screen of one hand-counted run whose Alice is called `LONG`."""
    records = [dict(r) for r in HAND_COUNTED]
    records[0] = records[0] | {"cast": {"alice": LONG, "bob": "Bob", "charlie": "Charlie"}}
    write_run(tmp_path / "run", records)
    return PromptdeskApp(lambda: CompareScreen([tmp_path / "run"], "run"))


async def test_a_long_name_beside_its_talk_share_bar_is_cut_with_its_whole_name_as_tooltip(tmp_path):
    app = long_named_compare(tmp_path)
    async with app.run_test(size=(120, 40)):
        labels = [(str(label.render()), str(label.tooltip)) for label in app.screen.query(".share Label")]
    assert labels[0] == ("Dr. Evangeli…", LONG) and ("Bob", "Bob") in labels


async def test_a_long_name_never_runs_under_the_compare_charts(tmp_path):
    """The timeline's beats start in the same column as the talk-share bars' (a long name is cut)."""
    from tui_support import screen_text

    app = long_named_compare(tmp_path)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.pause()
        rows = str(app.screen.query_one(BeatTimeline).render()).splitlines()
        assert rows[0].startswith("Dr. Evangeli… ") and LONG not in screen_text(app)
        assert len({len(row) - len(row[14:]) for row in rows[:3]}) == 1
        assert rows[1].startswith("Bob           ")


async def test_a_name_beside_its_talk_share_bar_is_cut_by_cells_and_its_tooltip_is_literal(tmp_path):
    """A name written as markup (`[/]`) was the bar's tooltip as markup: hovering it raised a MarkupError.
    A name of wide characters was cut by characters, so it ran past its 14 cells."""
    import json
    import shutil

    from rich.cells import cell_len
    from textual.widgets import Label
    from textual.widgets._tooltip import Tooltip

    run = shutil.copytree(Path(__file__).parent / "fixtures" / "replay-run", tmp_path / "run")
    lines = (run / "events.jsonl").read_text().splitlines()
    start = json.loads(lines[0])
    start["cast"].update(alice="[/]", bob="山田太郎山田太郎山田太郎🎭")
    (run / "events.jsonl").write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    folders, by = folders_of([run])
    app = PromptdeskApp(lambda: CompareScreen(folders, by))
    app.TOOLTIP_DELAY = 0.001
    async with app.run_test(size=(140, 45), tooltips=True) as pilot:
        labels = {str(label.render()): label for label in app.screen.query(".share Label").results(Label)}
        assert "[/]" in labels
        wide = next(text for text in labels if text.startswith("山田"))
        assert cell_len(wide) <= 14 and wide.endswith("…"), wide
        await pilot.hover(labels["[/]"])
        tooltip = app.screen.get_child_by_type(Tooltip)
        for _ in range(200):
            if tooltip.display:
                break
            await pilot.pause()
        assert tooltip.display and str(tooltip.render()) == "[/]"
        assert app.is_running


def test_the_timeline_lines_its_beats_up_by_cells_under_names_of_wide_characters(tmp_path):
    """A name of wide characters was padded and cut by characters: its row's beats stood right of the
    others', so a beat read under the wrong column."""
    from rich.cells import cell_len

    events = read_events(write_run(tmp_path / "run", HAND_COUNTED))
    names = {"alice": "山田太郎🎭", "bob": "Bob", "charlie": "長い名前の登場人物です本当に長い"}
    rows = BeatTimeline(names, events).render().plain.splitlines()[:3]
    plain = BeatTimeline({"alice": "Alice", "bob": "Bob", "charlie": "Charlie"}, events).render().plain.splitlines()
    beats = [row[-4:] for row in plain[:3]]
    assert [row[-4:] for row in rows] == beats
    assert len({cell_len(row) for row in rows}) == 1, rows
    assert rows[2].startswith("長い名前の登…")
