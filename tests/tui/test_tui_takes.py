"""Takes in the console: the Compare screen puts takes of one scene side by side from their branch beat."""

from __future__ import annotations

import shutil
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from promptdesk.core.record.recorder import read_events
from test_takes_compare import make_takes
from promptdesk.tui.app import PromptdeskApp, create_app
from promptdesk.tui.screens.compare import CompareScreen
from promptdesk.tui.widgets.takes_view import TakesView


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
    assert 'note to Bob: "Keep it short"' in tree, "the actor by name, not by slug"
    assert "a run and 2 takes of it, measured from beat 4" in title
    assert int(beats[1]) < 10, "beats are counted from the branch beat"


async def step_to_beat(pilot, screen, beat: int) -> None:
    """Press `b` until the replay's current beat is `beat`."""
    for _ in range(60):
        if screen.beat == beat and screen.playback.shown > 0:
            return
        await pilot.press("b")
    raise AssertionError(f"beat {beat} never came on stage")


async def test_f_in_replay_takes_the_scene_again_live_and_the_palette_lists_the_takes(takes, tmp_path):
    from promptdesk.tui.app import create_app
    from promptdesk.tui.screens.replay import ReplayScreen
    from promptdesk.tui.screens.stage import StageScreen
    from promptdesk.tui.screens.take_dialog import TakeDialog
    from promptdesk.tui.widgets.transcript import Transcript
    from tui_support import wait_for

    parent = tmp_path / "runs" / "parent"
    shutil.copytree(takes / "parent", parent)
    app = create_app(replay=parent)
    async with app.run_test(size=(140, 45)) as pilot:
        replay = app.screen
        await step_to_beat(pilot, replay, 3)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, TakeDialog), "the take dialog")
        assert "from the start of beat 3" in str(app.screen.query_one("#explanation").render())
        await pilot.press(*"The window blows open", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StageScreen), "the take's stage")
        stage = app.screen
        assert "take of parent from beat 3" in str(stage.query_one("#title").render())
        await wait_for(pilot, lambda: stage.session.state.status == "closed", "the take's close", limit=20000)
        stage.flush()
        lines = stage.query_one(Transcript).plain_lines()
        opened = next(i for i, line in enumerate(lines) if "Take of parent from beat 3" in line)
        assert any(line.startswith(("Alice", "Bob", "Charlie")) for line in lines[:opened]), "the parent's beats first"
        assert any("The window blows open" in line for line in lines[opened:])
        take = Path(stage.session.state.run_dir)
        assert take.parent == parent.parent and take.name.startswith("parent-take3-")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), "back to the replay")
        listed = [c for c in app.get_system_commands(app.screen) if c.title.startswith("Take: ")]
        assert [c.title for c in listed] == [f"Take: {take.name}"]
        assert 'From beat 3: world event "The window blows open"' in listed[0].help
        listed[0].callback()
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.run_dir == take
                       and bool(app.screen.query("#speech")), "its replay, on screen")
        await pilot.press("end")
        await wait_for(pilot, lambda: app.screen.playback.done, "the take replayed to its end")
    event = next(e for e in read_events(take) if e.type == "branch")
    assert event.beat == 3 and event.model_extra["change"] == {"event": "The window blows open"}


@asynccontextmanager
async def take_dialog(kind: str, answers: list):
    """The take dialog over a Compare screen, for Alice and Bob, its kind of change set to `kind`;
    what it answers goes to `answers`. Yields the app and its pilot."""
    from textual.widgets import Select

    from promptdesk.tui.screens.take_dialog import TakeDialog

    app = PromptdeskApp(lambda: CompareScreen([], "run"))
    async with app.run_test(size=(120, 40)) as pilot:
        app.push_screen(TakeDialog("parent", 2, {"alice": "Alice", "bob": "Bob"}), answers.append)
        await pilot.pause()
        app.screen.query_one("#kind", Select).value = kind
        await pilot.pause()
        yield app, pilot


async def test_the_take_dialog_gives_a_note_to_one_actor_or_nothing(tmp_path):
    from promptdesk.core.record.takes import Change
    from promptdesk.tui.screens.take_dialog import NOTE_TO, NOTHING

    answers = []
    for kind, text in ((NOTE_TO + "bob", "Own it"), (NOTHING, ""), ("__note__", "Slower")):
        async with take_dialog(kind, answers) as (app, pilot):
            await pilot.press(*text) if text else None
            await pilot.click("#start")
            await pilot.pause()
    assert answers == [Change(note="Own it", to="bob"), Change(), Change(note="Slower")]


async def test_f_is_dimmed_for_a_run_that_cannot_be_taken_again_and_a_press_says_why(tmp_path, monkeypatch):
    from promptdesk.tui.screens.replay import ReplayScreen, branchable

    fixture = Path(__file__).parent / "fixtures" / "replay-run"
    assert not (fixture / "private.json").exists() and not branchable(fixture, read_events(fixture))
    assert ReplayScreen.BINDINGS[-2].key == "f"
    for keymap, key in (("", "f"), ("replay.take=g", "g")):
        monkeypatch.setenv("PROMPTDESK_KEYMAP", keymap)
        app = create_app(replay=fixture)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press(key)
            await pilot.pause()
            told = [n.message for n in app._notifications]
            assert told == ["Take: not now, this run's folder has no private.json (the start record a take is "
                            "rebuilt from)."], keymap
            assert isinstance(app.screen, ReplayScreen)


async def test_the_compare_screen_of_a_sweep_of_takes_groups_by_retake_and_change(takes, tmp_path):
    import asyncio

    from promptdesk.core.cli.main import main
    from promptdesk.core.experiments.compare import folders_of

    out = tmp_path / "sweep"
    assert await asyncio.to_thread(main, ["sweep", "--branch-from", str(takes / "parent"), "--at-beat", "4", "--event", "The lights go out",
                 "--seeds", "1-2", "--out", str(out)]) == 0
    folders, by = folders_of([out])
    app = PromptdeskApp(lambda: CompareScreen(folders, by))
    async with app.run_test(size=(160, 50)):
        screen = app.screen
        assert list(screen.comparison.columns) == ["retake", "change"]
        assert all(len(runs) == 2 for runs in screen.comparison.columns.values())


def visible_words(app, widget) -> str:
    """What shows of `widget` on the screen, its borders taken out and every run of spaces and line
    breaks made one space (a sentence wrapped over several rows reads as one line)."""
    import re

    region = widget.region
    rows = [strip.crop(region.x, region.right).text for y, strip in enumerate(app.screen._compositor.render_strips())
            if region.y <= y < region.bottom]
    return " ".join(re.sub(r"[█▀▄▊▎▔▁│┃╭╮╰╯─━]", " ", "\n".join(rows)).split())


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (140, 45)])
async def test_the_take_dialog_shows_its_whole_explanation_at_every_size(size):
    """What a take keeps and plays again is the console's only explanation of it: every word shows."""
    from promptdesk.tui.screens.take_dialog import TakeDialog, explanation

    app = PromptdeskApp(lambda: CompareScreen([], "run"))
    async with app.run_test(size=size) as pilot:
        app.push_screen(TakeDialog("the-apology-20261128-084124", 2, {"alice": "Alice", "bob": "Bob"}))
        await pilot.pause()
        await pilot.pause()
        words = visible_words(app, app.screen.query_one("VerticalScroll"))
    said = explanation("the-apology-20261128-084124", 2)
    assert said in words, (said, words)
    assert "beats 0 to 1 are kept as recorded" in said and "beat 2 and every beat after it are played again" in said
    assert "Start the take" in words, "the button is on screen too"


def test_a_take_from_the_first_beats_says_what_is_kept_in_the_singular_or_that_nothing_is():
    from promptdesk.tui.screens.take_dialog import explanation

    assert "beat 0 is kept as recorded" in explanation("run", 1)
    assert "nothing of it is kept" in explanation("run", 0)


async def test_a_take_from_a_beat_past_the_end_says_why_and_starts_nothing(takes, tmp_path):
    from promptdesk.core.record.takes import Change
    from promptdesk.tui.app import create_app
    from promptdesk.tui.screens.replay import ReplayScreen

    runs = tmp_path / "runs"
    parent = runs / "parent"
    shutil.copytree(takes / "parent", parent)
    app = create_app(replay=parent)
    told: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        replay = app.screen
        last = max(e.beat for e in replay.playback.events if e.type == "beat")
        app.notify = lambda message, **kw: told.append(str(message))  # type: ignore[method-assign]
        replay.start_take(last + 1, Change(event="The window blows open"))
        await pilot.pause()
        assert app.screen is replay and isinstance(app.screen, ReplayScreen)
    assert told == [f"Beat {last + 1} was never begun in this run: a take starts at a beat the run played."]
    assert [p.name for p in runs.iterdir()] == ["parent"], "no take's folder was made"


async def test_a_take_asked_with_no_text_says_what_to_type_and_stays_open():
    """`Start the take` (or enter) with a world event or a note left blank says what is missing and
    how to take the scene with no change; nothing is started."""
    from promptdesk.tui.screens.take_dialog import TakeDialog

    answers = []
    for kind, what in (("__event__", "the world event"), ("note:bob", "the note")):
        async with take_dialog(kind, answers) as (app, pilot):
            await pilot.press("space", "space", "enter")
            await pilot.pause()
            assert isinstance(app.screen, TakeDialog)
            messages = [n.message for n in app._notifications]
            assert any(f"type {what} first" in m and "Nothing: the same scene again" in m for m in messages), messages
    assert answers == []
