"""The smaller things in an operator's way (issue 15, item 11): each one as the operator meets it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from textual.widgets import RadioButton, RadioSet
from tui_support import ROOT, screen_text, session_for, wait_for

from promptdesk.core.record.events import GenericEvent
from promptdesk.tui.app import create_app
from promptdesk.tui.scripted import ScriptedSession
from promptdesk.tui.widgets.confirm_modal import ConfirmModal
from promptdesk.tui.widgets.state_panel import StatePanel

NARROW = (80, 24)


def scripted(**kwargs) -> ScriptedSession:
    return ScriptedSession({"alice": "Alice", "bob": "Bob"}, **kwargs)


async def test_the_quit_dialog_shows_its_whole_question_and_its_keys_at_80_columns():
    app = create_app(session=scripted())
    async with app.run_test(size=NARROW) as pilot:
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmModal)
        inside = [line.split("█")[1].strip() for line in screen_text(app).splitlines() if line.count("█") >= 2]
        text = " ".join(part for part in inside if part)
        assert "A scene is running. Stop it and quit? Its run folder will be closed cleanly." in text
        assert "Stop and quit (y)" in text and "Keep watching (n)" in text


async def test_at_80_columns_the_footer_keeps_quit_visible():
    app = create_app(session=scripted())
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        assert "q Quit" in screen_text(app).splitlines()[-1]


async def test_the_title_stops_saying_live_after_the_close_and_the_beats_agree_with_the_record(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        await wait_for(pilot, lambda: " · live · " in screen_text(app).splitlines()[0], "the title saying live")
        await wait_for(pilot, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished, "the close")
        await pilot.pause()
        title = screen_text(app).splitlines()[0]
        assert " · closed · " in title and " live " not in title
        total = json.loads((Path(session.state.run_dir) / "metadata.json").read_text())["totalBeats"]
        assert stage.query_one(StatePanel).snapshot.beats_played == total
        assert f"Beats     {total} of " in screen_text(app)


async def test_the_clock_stands_still_while_paused():
    session = scripted()
    clock = {"now": 0.0}
    session.now = lambda: clock["now"]
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = app.screen
        session.publish([GenericEvent(t=2.0, **{"from": "operator"}, type="pause", text="Scene paused")])
        session.state.status = "paused"
        clock["now"] = 9.0
        await pilot.pause()
        stage.flush()
        stage.refresh_state()
        assert stage.query_one(StatePanel).snapshot.elapsed_s == 2.0
        session.publish([GenericEvent(t=10.0, **{"from": "operator"}, type="resume", text="Scene resumed")])
        session.state.status = "running"
        clock["now"] = 11.0
        await pilot.pause()
        stage.flush()
        stage.refresh_state()
        assert stage.query_one(StatePanel).snapshot.elapsed_s == 3.0


async def test_the_focused_pane_has_a_border_of_its_own():
    app = create_app(session=scripted())
    async with app.run_test(size=(120, 40)) as pilot:
        speech, pane = app.screen.query_one("#speech"), app.screen.query_one("#thinking-alice")
        await pilot.pause()
        assert speech.styles.border_top[0] == "heavy" and pane.styles.border_top[0] == "round"
        await pilot.press("tab")
        await pilot.pause()
        assert speech.styles.border_top[0] == "round" and pane.styles.border_top[0] == "heavy"


async def test_no_radio_row_looks_selected_before_the_operator_chooses(workspace):
    from tui_support import wizard_app

    app = wizard_app(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+n", "ctrl+n")
        await pilot.pause()
        radios = app.screen.query_one("#step-isolation").query_one(RadioSet)
        assert radios.has_focus
        assert not any(b.has_class("-selected") or b.value for b in radios.query(RadioButton))
        await pilot.press("down")
        assert radios.query(RadioButton).first().has_class("-selected")


def test_after_quitting_the_run_folders_are_printed(capsys):
    from promptdesk.tui.app import print_run_dirs

    print_run_dirs(["runs/a-1", "runs/b-2"])
    assert capsys.readouterr().err == "Run folder: runs/a-1\nRun folder: runs/b-2\n"


async def test_the_console_remembers_every_run_folder_it_started(workspace):
    session = session_for(workspace)
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.run_dirs == [str(session.state.run_dir)]


def test_a_first_make_run_says_what_it_is_installing():
    """`make run` on a fresh machine prints what it installs (uv's own progress is not silenced), from the
    lock, without the test tools."""
    out = subprocess.run(["make", "-n", "-B", ".venv/.run-installed"], cwd=ROOT, capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    assert "Installing Promptdesk" in out.stdout
    install = next(line for line in out.stdout.splitlines() if "uv sync" in line)
    assert "--quiet" not in install and " -q" not in install
    assert "--frozen" in install and "--no-dev" in install


async def test_below_60_columns_the_transcript_takes_the_whole_width_and_resizing_gives_the_panel_back():
    """At 40 columns the Session panel (31 wide) left the transcript 7 columns: a word a row. Below 60
    it is hidden (the title still says where the scene is); widened again, it comes back."""
    from promptdesk.tui.widgets.transcript import Transcript

    session = scripted()
    app = create_app(session=session)
    async with app.run_test(size=(40, 12)) as pilot:
        session.publish([GenericEvent(t=0.0, **{"from": "coordinator"}, type="beat", text="Beat 0", beat=0),
                         GenericEvent(t=0.1, **{"from": "operator"}, type="event", text="Lights out", beat=0)])
        stage = app.screen
        await wait_for(pilot, lambda: any("Lights out" in line for line in stage.query_one(Transcript).plain_lines()),
                       "the event's line")
        await pilot.pause()
        assert not stage.query_one(StatePanel).display
        assert stage.query_one(Transcript).size.width >= 36
        assert "⚡ EVENT (from you): Lights out" in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert stage.query_one(StatePanel).display and stage.query_one(StatePanel).size.width > 0


async def test_q_in_the_keys_help_quits_as_the_help_says_it_does_anywhere(workspace):
    """The help lists `q Quit` among the keys that act anywhere, but a dialog hides the app's keys: `q` in
    the help did nothing. It closes the help and quits: asking first while a scene runs, at once otherwise."""
    from tui_support import wizard_app

    from promptdesk.tui.screens.help import HelpScreen

    app = create_app(session=scripted())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        assert "q           Quit" in screen_text(app) or "^q/q        Quit" in screen_text(app)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), "the quit dialog")
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, (ConfirmModal, HelpScreen)), "the stage")
        assert app.is_running

    app = wizard_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, "the console to quit")


async def test_a_thinking_pane_titled_by_a_name_of_wide_characters_shows_it_whole_or_cut_with_an_ellipsis():
    """The pane's title form was chosen by counting characters: a name of wide characters (two cells each)
    was thought to fit beside PRIVATE and the border cut it mid-name (`PRIVATE · 山田太郎山田 …`)."""
    from rich.cells import cell_len

    from promptdesk.tui.widgets.thinking_pane import ThinkingPane

    name = "山田太郎山田太郎"
    app = create_app(session=ScriptedSession({"yamada": name, "bob": "Bob"}))
    async with app.run_test(size=(60, 24)) as pilot:
        await pilot.pause()
        pane = app.screen.query(ThinkingPane).first()
        title = str(pane.border_title)
        assert title == name and str(pane.border_subtitle) == "PRIVATE · no turn yet", title
        assert name in screen_text(app)
        await pilot.resize_terminal(40, 24)
        await pilot.pause()
        title = str(pane.border_title)
        assert title.endswith("…") and cell_len(title) <= pane.outer_size.width - 6, title
        assert title in screen_text(app)


def test_paths_printed_after_the_console_show_escape_sequences_without_acting_on_the_terminal(capsys, tmp_path):
    """A folder named with an escape sequence (`--out`, a path typed) is printed with each control
    character as its escape: the terminal's title is not set, and the name can still be read."""
    import argparse

    from promptdesk.tui.app import print_run_dirs, run_console

    hostile = "runs/x \x1b]0;PWNED\x07 \x1b[2J y"
    print_run_dirs([hostile])
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert err == "Run folder: runs/x \\x1b]0;PWNED\\x07 \\x1b[2J y\n"
    assert run_console(argparse.Namespace(), replay=tmp_path / "a \x1b[31mred\x1b[0m") == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "a \\x1b[31mred\\x1b[0m is not a run folder" in err
