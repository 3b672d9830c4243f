"""What a first-time director reads: every transcript line readable in both themes, the Session panel,
the key bar and the dialogs saying what they mean at every size, and each key that cannot act saying why."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest
from test_tui_console_finish import contrast
from tui_support import screen_text, wait_for

from promptdesk.core.record.events import CloseEvent, GenericEvent, SpeakEvent
from promptdesk.tui.app import create_app
from promptdesk.tui.scripted import ScriptedSession
from promptdesk.tui.widgets.transcript import Transcript

CAST = {"alice": "Alice", "bob": "Bob", "charlie": "Charlie", "dana": "Dana", "eve": "Eve", "fay": "Fay",
        "gus": "Gus", "hal": "Hal"}
"""Eight actors: every speaker colour of a theme."""


def every_role() -> list:
    """A beat whose lines use every role the transcript styles: names, speech, target, tone, gesture,
    interruption, reaction, silence, world event, notes, system line, close."""
    def said(slug: str, **kw) -> SpeakEvent:
        return SpeakEvent(t=0, **{"from": slug}, beat=1, **kw)
    return [
        GenericEvent(t=0, **{"from": "coordinator"}, type="start", text="Scene started",
                     scene={"title": "The Apology", "setting": "Office conference room"}),
        GenericEvent(t=0, **{"from": "coordinator"}, type="beat", text="Beat 1", beat=1),
        said("alice", action="speak", target="Bob", tone="firm", nonverbal="folds arms", text="You missed it."),
        said("bob", action="interrupt", interrupt_after="missed", tone="defensive", text="Let me explain."),
        said("charlie", action="react", nonverbal="winces", text=""),
        said("charlie", action="silent", nonverbal="stares at the table", text=""),
        GenericEvent(t=0, **{"from": "operator"}, type="event", text="The phone rings", beat=1),
        GenericEvent(t=0, **{"from": "operator"}, type="note", text="Softer", target="bob", beat=1),
        GenericEvent(t=0, **{"from": "coordinator"}, type="system", text="Bob unable to respond", target="bob",
                     reason="HTTP 500", beat=1),
        *(said(slug, action="speak", text="Agreed.") for slug in ("dana", "eve", "fay", "gus", "hal")),
        CloseEvent(t=0, **{"from": "coordinator"}, text="They agree", reason="natural", goal_achieved=True, beat=1),
    ]


def transcript_cells(app):
    """The style of every visible character of the transcript's text (its borders left out)."""
    region = app.screen.query_one(Transcript).content_region
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        if not region.y <= y < region.bottom:
            continue
        column = 0
        for segment in strip:
            inside = region.x <= column < region.right
            if inside and segment.text.strip() and segment.style is not None:
                yield segment.text.strip(), segment.style
            column += segment.cell_length


@pytest.mark.parametrize("theme", ["light", "dark"])
async def test_every_transcript_line_reads_at_4_5_to_1_in_both_themes_focused_or_not(theme):
    session = ScriptedSession(CAST)
    app = create_app(session=session, theme=theme)
    async with app.run_test(size=(120, 40)) as pilot:
        session.publish(every_role())
        await wait_for(pilot, lambda: "They agree" in screen_text(app), "the lines")
        for focused in (False, True):
            if focused:
                app.screen.query_one(Transcript).focus()
            await pilot.pause()
            cells = list(transcript_cells(app))
            assert any(text == "—" or "silent" in text for text, _ in cells), "the silence is on screen"
            for text, style in cells:
                assert not style.dim and contrast(style) >= 4.5, (theme, focused, text, style, contrast(style))


def key_bar(app) -> str:
    """The key bar's line, every run of spaces made one."""
    return " ".join(screen_text(app).splitlines()[-1].split())


@asynccontextmanager
async def held_stage(workspace, pace: float):
    """The console on a real session of the workspace's scene at `pace`, held at its first beat;
    yields the app, its pilot and the session, then stops the scene and waits for its close."""
    from tui_support import held, hold_at, session_for

    session = hold_at(session_for(workspace, pace=pace))
    app = create_app(session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        stage = await held(pilot, session)
        yield app, pilot, session
        session.stop()
        await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")


def told(app) -> list[str]:
    return [n.message for n in app._notifications]


class TestTheSuggestion:
    """`y`: in the key bar while a suggestion waits, a suggestion (never a fact) in the transcript, and
    nothing to offer once the scene has closed; a withheld one never shows its words."""

    async def test_y_shows_while_a_suggestion_waits_and_nothing_is_offered_after_the_close(self, workspace):
        from tui_support import held, hold_at, session_for

        from promptdesk.tui.widgets.state_panel import StatePanel, render_state

        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            stage = await held(pilot, session)
            assert "Inject suggestion" not in key_bar(app), "nothing suggested yet"
            session.suggest("The lights flicker and go out")
            await wait_for(pilot, lambda: "y Inject suggestion" in key_bar(app), "y in the key bar")
            session.stop()
            await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")
            stage.refresh_state()
            await pilot.pause()
            panel = render_state(stage.query_one(StatePanel).snapshot).plain
            assert "(y: inject)" not in panel and "The lights flicker and go out (never injected)" in panel
            assert "Inject suggestion" not in key_bar(app)
            await pilot.press("y")
            await pilot.pause()
            assert "Inject suggestion: not now, the scene has closed." in told(app)

    def test_a_suggested_event_reads_as_a_suggestion_and_a_withheld_one_shows_no_words(self):
        from promptdesk.tui.lines import Cast
        from promptdesk.tui.render import transcript_line

        cast = Cast(CAST)

        def decision(**extra) -> GenericEvent:
            return GenericEvent(t=0, **{"from": "coordinator"}, type="decision", text="A fire alarm goes off", beat=2,
                                decision="suggest_event", **extra)

        line = transcript_line(decision(), cast).plain
        assert line.startswith("✦ Coordinator suggests a world event (not in the scene unless injected): ")
        assert transcript_line(decision(withheld="it carries words of Bob's perspective"), cast) is None
        accepted = GenericEvent(t=0, **{"from": "operator"}, type="event", text="A fire alarm goes off", beat=3,
                                suggested_by="coordinator")
        assert transcript_line(accepted, cast).plain == \
            "⚡ EVENT (from you, suggested by the coordinator): A fire alarm goes off"
        nudge = GenericEvent(t=0, **{"from": "coordinator"}, type="decision", text="Wrap up", target="bob",
                             decision="nudge", beat=4)
        assert transcript_line(nudge, cast).plain == "✦ Coordinator nudges Bob: Wrap up"


class TestKeysThatCannotAct:
    async def test_a_on_a_collaboration_says_why(self, workspace):
        from tui_support import session_for

        session = session_for(workspace, "hiking-plan.yaml", isolation="a", coordinator="C")
        app = create_app(session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            app.screen.set_focus(None)
            await pilot.press("a")
            await pilot.pause()
            assert "Decide: not now, a collaboration never waits for your decision (only a roundtable's escalation " \
                   "does)." in told(app)

    async def test_v_on_a_stage_where_every_pane_shows_says_so_and_opens_nothing(self):
        from promptdesk.tui.widgets.pane_picker import PanePicker

        app = create_app(session=ScriptedSession(dict(list(CAST.items())[:3])))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("v")
            await pilot.pause()
            assert not isinstance(app.screen, PanePicker)
            assert "Panes: not now, every actor's thinking pane is shown (3 of 3)." in told(app)

    async def test_the_pane_checklist_marks_a_ticked_actor_with_a_tick_and_an_unticked_one_with_nothing(self):
        from textual.app import App

        from promptdesk.tui.widgets.pane_picker import PanePicker

        class Picking(App):
            def on_mount(self) -> None:
                self.push_screen(PanePicker({"alice": "Alice", "bob": "Bob"}, ["alice"], 8))

        app = Picking()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            rows = screen_text(app)
        alice = next(row for row in rows.splitlines() if "Alice" in row)
        bob = next(row for row in rows.splitlines() if "Bob" in row)
        assert "▐✓▌" in alice and "▐ ▌" in bob, (alice, bob)
        assert "X" not in alice + bob


def summary_words(app) -> str:
    """The confirm step's summary as the width of the screen lays it out, every run of spaces made one."""
    from rich.console import Console

    console = Console(width=app.size.width - 4, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(app.screen.query_one("#summary").content)
    return " ".join(console.export_text().split())


async def confirm_summary(workspace, size: tuple[int, int], **choices) -> str:
    """The wizard walked to its confirm step with these choices at `size`: the summary's words."""
    from tui_support import wizard_app, wizard_step

    app = wizard_app(workspace, **choices)
    async with app.run_test(size=size) as pilot:
        for _ in range(5):
            await pilot.press("ctrl+n")
            await pilot.pause()
        assert wizard_step(app) == "confirm"
        return summary_words(app)


class TestTheWizard:
    async def test_the_confirm_step_names_the_judge_its_address_and_what_leaves_the_machine(self, workspace):
        """A scene on the offline improviser whose judge is an OpenAI model (role B): the confirm step says
        the judge reads every beat's speech at its address and that this leaves the machine."""
        import yaml

        path = workspace / "scenes" / "the-apology.yaml"
        data = yaml.safe_load(path.read_text())
        data["judge"] = {"name": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"}
        path.write_text(yaml.safe_dump(data))
        for size in ((140, 45), (80, 24)):
            summary = await confirm_summary(workspace, size, isolation="b", coordinator="B")
            assert "Actors the offline improviser" in summary
            assert "Judge openai, model gpt-4o-mini, at http://127.0.0.1:9/v1; it reads every beat's speech " \
                   "(role B)" in summary
            assert "Sent out every beat's speech, to the judge (openai)" in summary
            assert "model default" not in summary and "Provider " not in summary

    async def test_with_every_call_offline_the_confirm_step_says_nothing_leaves_the_machine(self, workspace):
        summary = await confirm_summary(workspace, (120, 40), isolation="a", coordinator="C")
        assert "Judge none: role C's rules decide in code, no call is made" in summary
        assert "Sent out nothing: every call is answered on this machine" in summary

    async def test_question_mark_in_the_scene_path_shows_the_keys_and_types_nothing(self, workspace):
        from tui_support import wizard_app

        from promptdesk.tui.screens.help import HelpScreen

        app = wizard_app(workspace, None)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            app.screen.query_one("#scene-path").focus()
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen.query_one("#scene-path").value == ""

    async def test_after_w_the_choices_given_on_the_command_line_are_not_chosen_again(self, workspace):
        from tui_support import run_options

        from promptdesk.tui.screens.wizard import WizardScreen

        session = ScriptedSession({"alice": "Alice"})
        options = run_options(workspace, isolation="b", coordinator="C")
        app = create_app(session=session, options=options, cwd=workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            session.stop()
            await wait_for(pilot, lambda: app.screen.bridge.worker is not None and app.screen.bridge.worker.is_finished,
                           "the close")
            await pilot.press("w")
            await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen), "the wizard")
            wizard = app.screen
            await wizard.steps_mounted()
            wizard.load(workspace / "scenes" / "the-apology.yaml")
            await pilot.pause()
            assert wizard.scene is not None, "the scene file sets neither choice"
            assert wizard.picker("isolation").value is None and wizard.picker("coordinator").value is None

    async def test_a_list_opened_on_its_blank_value_highlights_it_so_down_enter_picks_the_first_option(self, workspace):
        """Opened with the mouse (Textual's keys highlight a row themselves), the blank row is highlighted."""
        from test_tui_wizard_steps import to_provider
        from tui_support import wizard_app

        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            protocol = app.screen.query_one("#protocol")
            protocol.scroll_visible(animate=False)
            await pilot.pause()
            await pilot.click("#protocol")
            await pilot.pause()
            assert protocol.expanded, "opened by a click"
            await pilot.press("down", "enter")
            await pilot.pause()
            assert protocol.value == "tags"

    async def test_the_reply_protocol_is_a_scenes_only_and_its_json_option_names_the_providers_it_needs(
            self, workspace):
        from test_tui_wizard_steps import to_provider
        from tui_support import wizard_app

        from promptdesk.tui.widgets.provider_form import ProviderForm
        from promptdesk.tui.widgets.run_fields import PROTOCOLS

        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            form = app.screen.query_one(ProviderForm)
            assert app.screen.query_one("#protocol").display
            for choice in ("collaborate", "roundtable", "single"):
                form.format = choice
                await pilot.pause()
                assert not app.screen.query_one("#protocol").display, choice
            form.format = "scene"
            form.query_one("#provider").value = "offline"
            app.screen.query_one("#protocol").value = "json"
            await pilot.pause()
            refusal = form.problem()
        option = dict((value, label) for label, value in PROTOCOLS)["json"]
        named = refusal[refusal.index("(") + 1:refusal.index(")")]
        assert named in option, (named, option)

    async def test_claude_codes_model_field_speaks_of_no_server(self, workspace):
        from test_tui_wizard_steps import to_provider
        from tui_support import wizard_app

        from promptdesk.tui.widgets.provider_form import ProviderForm

        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            app.screen.query_one(ProviderForm).query_one("#provider").value = "claude-code"
            await pilot.pause()
            label = str(app.screen.query_one("#model-label").render())
        assert "server" not in label and "Claude Code" in label


class TestDialogsAndPalette:
    async def test_left_and_right_move_between_the_quit_dialogs_buttons(self):
        from promptdesk.tui.widgets.confirm_modal import ConfirmModal

        app = create_app(session=ScriptedSession({"alice": "Alice"}))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: app.screen.bridge.live, "the scene running")
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal), "the quit dialog")
            assert app.screen.focused.id == "no"
            await pilot.press("left")
            assert app.screen.focused.id == "yes"
            await pilot.press("right")
            assert app.screen.focused.id == "no"
            await pilot.press("n")

    async def test_the_palette_lists_quit_once_and_its_keys_command_is_the_help_that_esc_closes(self):
        from promptdesk.tui.screens.help import HelpScreen

        app = create_app(session=ScriptedSession({"alice": "Alice"}))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.screen.bridge.live, "the scene running")
            titles = [command.title for command in app.get_system_commands(app.screen)]
            assert titles.count("Quit") == 1 and titles.count("Keys") == 1, titles
            keys = next(c for c in app.get_system_commands(app.screen) if c.title == "Keys")
            keys.callback()
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen)

    def test_the_rooms_words_have_no_backticks(self):
        from promptdesk.tui.formats.room_commands import USAGE, RoomError, parse_room

        said = [USAGE] + [parse_room(text, {"gpt", "claude"}).message for text in
                          ("", "@gpt", "@router talk", "@router collaborate gpt claude", "@nobody hi",
                           "@router collaborate gpt gpt: x", "@router collaborate gpt claude:  ")]
        assert all(isinstance(parse_room(t, {"gpt"}), RoomError) for t in ("", "@gpt"))
        assert not [text for text in said if "`" in text], said


class TestTheStage:
    async def test_the_queued_line_says_whom_a_note_is_for(self, workspace):
        from textual.widgets import Input, Select
        from tui_support import held, hold_at, session_for

        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            stage = await held(pilot, session)
            await pilot.press("n")
            await pilot.pause()
            app.screen.query_one(Select).value = "bob"
            app.screen.query_one(Input).focus()
            await pilot.press(*"Own it", "enter")
            await pilot.pause()
            assert "⧗ Queued, delivered after the resume: note to Bob “Own it”" in screen_text(app)
            assert "Director's note to Bob queued, delivered after the resume" in told(app), "the toast agrees with the queued line"
            session.stop()
            await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")

    async def test_a_note_to_an_actor_who_left_the_stage_says_why_and_queues_nothing(self, workspace):
        from tui_support import held, hold_at, session_for

        from promptdesk.tui.widgets.input_modal import DirectorNote
        from promptdesk.tui.widgets.queued_line import QueuedLine

        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            stage = await held(pilot, session)
            session.health.unavailable["bob"] = "HTTP 401: invalid key"
            stage.send_direction(DirectorNote("Own it", "bob"))
            await pilot.pause()
            assert not stage.query_one(QueuedLine).queued and not session._pending
            assert any(m.startswith("Director's note to Bob not sent: Bob is no longer on the stage (HTTP 401")
                       for m in told(app)), told(app)
            session.stop()
            await wait_for(pilot, lambda: stage.bridge.worker.is_finished, "the close")

    async def test_pace_zero_reads_off_in_the_toast_as_in_the_panel(self, workspace):
        async with held_stage(workspace, pace=0.5) as (app, pilot, session):
            await pilot.press("minus")
            await pilot.pause()
            assert "Pace: off (each beat starts as soon as the last one ends)" in told(app)
            assert not any("at least 0 s" in m for m in told(app))

    async def test_pace_keys_at_their_bounds_say_the_pace_cannot_go_further(self, workspace):
        async with held_stage(workspace, pace=59.5) as (app, pilot, session):
            await pilot.press("plus")
            await pilot.pause()
            assert told(app)[-1] == "Pace: at least 60 s per beat"
            await pilot.press("plus")
            await pilot.pause()
            assert told(app)[-1] == "Pace: at least 60 s per beat, the slowest it goes (- makes it faster)"
            session.set_pace(0)
            await pilot.press("minus")
            await pilot.pause()
            assert told(app)[-1] == "Pace: already off (each beat starts as soon as the last one ends; + slows it)"

    async def test_the_title_says_closing_while_the_journals_are_written(self):
        session = ScriptedSession({"alice": "Alice"})
        app = create_app(session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: " · live · " in screen_text(app).splitlines()[0], "live")
            session.state.status = "closing"
            app.screen.refresh_state()
            await pilot.pause()
            title = screen_text(app).splitlines()[0]
            assert " · closing · " in title and " live " not in title
            session.stop()


class TestTakes:
    async def test_a_takes_folder_is_shown_from_the_working_folder_in_the_panel_the_title_and_on_quit(self, workspace):
        import io
        from pathlib import Path

        from test_tui_takes import step_to_beat
        from tui_support import session_for

        from promptdesk.tui.app import print_run_dirs
        from promptdesk.tui.screens.stage import StageScreen
        from promptdesk.tui.screens.take_dialog import TakeDialog
        from promptdesk.tui.widgets.state_panel import StatePanel, render_state

        parent = Path("runs/parent")
        session = session_for(workspace, out=parent, max_beats=5)
        await session.run()
        app = create_app(replay=(workspace / parent).resolve())
        async with app.run_test(size=(140, 45)) as pilot:
            assert "replay · The Apology · runs/parent" in screen_text(app).splitlines()[0]
            await step_to_beat(pilot, app.screen, 2)
            await pilot.press("f")
            await wait_for(pilot, lambda: isinstance(app.screen, TakeDialog), "the take dialog")
            await pilot.press(*"The window blows open", "enter")
            await wait_for(pilot, lambda: isinstance(app.screen, StageScreen), "the take's stage")
            stage = app.screen
            await wait_for(pilot, lambda: stage.session.state.status == "closed", "the take's close", limit=20000)
            stage.refresh_state()
            panel = render_state(stage.query_one(StatePanel).snapshot, 140).plain
            take = Path(stage.session.state.run_dir)
            assert f"runs/{take.name[:20]}" in panel and str(workspace) not in panel
        printed = io.StringIO()
        print_run_dirs(app.run_dirs, printed)
        assert printed.getvalue() == f"Run folder: runs/{take.name}\n"


SMALL = (60, 20)


class TestSmallTerminals:
    async def test_at_60x20_every_pane_is_titled_the_same_way_and_the_key_bar_is_whole(self, workspace):
        from tui_support import held, hold_at, session_for

        from promptdesk.tui.widgets.thinking_pane import ThinkingPane

        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=SMALL) as pilot:
            await held(pilot, session)
            panes = list(app.screen.query(ThinkingPane))
            titles = [(str(p.border_title), str(p.border_subtitle)) for p in panes]
            assert {subtitle for _, subtitle in titles} == {"PRIVATE"}, titles
            assert [title for title, _ in titles] == ["Alice", "Bob", "Charlie"], titles
            bar = screen_text(app).splitlines()[-1]
            for key in ("q Quit", "t Theme", "r Resume"):
                assert key in bar, (key, bar)
            assert bar.rstrip().endswith(("Theme", "palette")), "no key is cut"
            session.stop()

    async def test_a_wide_stage_titles_every_pane_private_with_its_name(self, workspace):
        from tui_support import held, hold_at, session_for

        from promptdesk.tui.widgets.thinking_pane import ThinkingPane

        session = hold_at(session_for(workspace))
        app = create_app(session=session)
        async with app.run_test(size=(140, 45)) as pilot:
            await held(pilot, session)
            titles = [str(p.border_title) for p in app.screen.query(ThinkingPane)]
            assert titles == ["PRIVATE · Alice", "PRIVATE · Bob", "PRIVATE · Charlie"], titles
            session.stop()

    async def test_the_replay_key_bar_at_80x24_says_quit_whole(self, workspace):
        """A run that can be taken again (its `f Take` too): every key of the replay, Quit whole."""
        from pathlib import Path

        from tui_support import session_for

        session = session_for(workspace, out=Path("runs/short"), max_beats=2)
        await session.run()
        app = create_app(replay=workspace / "runs" / "short")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            bar = key_bar(app)
        assert "f Take" in bar and "t Theme" in bar and "q Quit" in bar, bar

    def test_the_key_bar_drops_words_never_keys_and_keeps_the_first_and_the_last_two(self):
        from promptdesk.tui.widgets.key_bar import Entry, bare_where_needed

        entries = [Entry(keys, words, keys) for keys, words in
                   (("←→", "Scrub"), ("space", "Play"), ("x", "Speed"), (".", "Step"), ("b", "Beat"), ("f", "Take"),
                    ("esc", "Back"), ("t", "Theme"), ("q", "Quit"))]
        for width in (40, 50, 60):
            texts = bare_where_needed(entries, width)
            assert len(" " + " ".join(texts)) <= width or texts[1:-2] == [e.keys for e in entries[1:-2]]
            assert [t.split()[0] for t in texts] == [e.keys for e in entries], "every key is there"
            assert texts[0] == "←→ Scrub" and texts[-2:] == ["t Theme", "q Quit"]


class TestTheEvaluationOnTheConfirmStep:
    async def test_a_scored_scene_names_its_evaluator_and_what_it_reads_leaves_the_machine(self, workspace):
        """A scene evaluated after the close by a remote model: the confirm step says who scores it, on
        which rubric, and that the transcript, goals and secrets are sent to it, though every actor and
        the coordinator are on this machine."""
        import yaml

        path = workspace / "scenes" / "the-apology.yaml"
        data = yaml.safe_load(path.read_text())
        data["evaluate"] = "sotopia"
        data["evaluator"] = {"name": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"}
        path.write_text(yaml.safe_dump(data))
        summary = await confirm_summary(workspace, (140, 45), isolation="b", coordinator="C")
        assert "Evaluation SOTOPIA-EVAL" in summary and "by openai, model gpt-4o-mini, at http://127.0.0.1:9/v1" in summary
        assert "Sent out the transcript and every actor's profile, goal and secret, after the close, to the " \
               "evaluator (openai)" in summary
        assert "nothing: every call is answered on this machine" not in summary


async def test_the_confirm_step_calls_the_cast_and_the_first_speaker_by_their_names(workspace):
    """Characters whose names are not their slugs (another script, a long name) are listed by name
    on the confirm step, as the cast check found them, and a collaboration's first speaker too."""
    (workspace / "characters" / "olga").mkdir()
    (workspace / "characters" / "olga" / "profile.md").write_text("# Ольга Смирнова - Archivist\n\n- Precise\n")
    (workspace / "characters" / "kwame").mkdir()
    (workspace / "characters" / "kwame" / "profile.md").write_text("# Kwame [bold]Mensah[/bold] - Teacher\n")
    (workspace / "scenes" / "zine.yaml").write_text(
        "name: zine\ntitle: Zine\nformat: collaborate\ngoal: Write a welcome paragraph for the zine.\n"
        "characters: [kwame, olga]\ncollaborate: {max_rounds: 3, first: olga}\nprovider: {name: offline}\n")
    from tui_support import wizard_app, wizard_step

    app = wizard_app(workspace, "zine.yaml", isolation="b", coordinator="C")
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(5):
            await pilot.press("ctrl+n")
            await pilot.pause()
        assert wizard_step(app) == "confirm"
        words = summary_words(app)
    assert "Cast Kwame [bold]Mensah[/bold], Ольга Смирнова" in words, words
    assert "First Ольга Смирнова" in words, words
