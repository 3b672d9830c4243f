"""The wizard's steps keep the keys where the operator is and say what each one still needs: focus never
stays on a hidden step, the reason Next is dimmed is on screen, and the Next key says it when pressed."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input
from tui_support import screen_text, wizard_app, wizard_step

from promptdesk.tui.app import create_app
from promptdesk.tui.screens.wizard import STEPS, WizardScreen
from promptdesk.tui.widgets.cast_check import CastCheck

SMALL = (80, 24)


def break_the_cast(workspace: Path) -> None:
    scene = workspace / "scenes" / "the-apology.yaml"
    scene.write_text(scene.read_text().replace("[alice, bob, charlie]", "[alice, bob, zed]")
                     .replace("\n  charlie: |", "\n  zed: |"))


class TestFocus:
    async def test_after_a_failed_cast_check_letters_are_keys_not_text_and_q_quits(self, workspace):
        break_the_cast(workspace)
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("ctrl+n")
            assert wizard_step(app) == "cast" and not app.screen.ready()
            focused = app.focused
            assert focused is not None and focused.display and focused.id == "step-cast", focused
            await pilot.press("x", "t", "y")
            assert app.theme_name == "light"
            await pilot.press("escape")
            assert wizard_step(app) == "scene"
            assert app.screen.query_one("#scene-path", Input).value == "scenes/the-apology.yaml"
            await pilot.press("ctrl+n", "q")
            await pilot.pause()
        assert app.return_code == 0

    async def test_a_name_typed_on_the_scene_list_goes_to_the_path_field_even_from_q_or_t(self, workspace):
        """Step 1 says "or type the path…" with its list focused: the characters typed there start the
        path, so `quarrel` neither quits nor `the-apology` switches the theme; enter picks what was typed."""
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            assert app.focused is not None and app.focused.id != "scene-path"
            theme = app.theme_name
            await pilot.press(*"quarrel")
            await pilot.pause()
            assert app.is_running and app.theme_name == theme
            field = app.screen.query_one("#scene-path", Input)
            assert field.value == "quarrel" and app.focused is field
            await pilot.press("shift+tab")
            assert app.focused is not field
            await pilot.press(*"the-apology")
            await pilot.pause()
            assert field.value == "the-apology" and app.theme_name == theme, "typing again starts a new path"
            await pilot.press("enter")
            await pilot.pause()
            assert wizard_step(app) == "cast"
            assert "Every character was found" in screen_text(app)

    async def test_on_the_scene_list_where_q_is_typed_the_key_bar_offers_ctrl_q_to_quit(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.pause()
            bar = screen_text(app).splitlines()[-1]
            assert "^q Quit" in bar and "q Quit" not in bar.replace("^q Quit", ""), bar
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app.return_code == 0

    async def test_every_step_focuses_a_widget_of_its_own(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            for keys in ((), ("ctrl+n",), ("ctrl+n",), ("b", "ctrl+n"), ("c", "ctrl+n"), ("ctrl+n",)):
                await pilot.press(*keys)
                shown = app.screen.query_one(f"#step-{wizard_step(app)}")
                assert app.focused is not None and (app.focused is shown or shown in app.focused.ancestors
                                                    or app.focused.id == "next"), (wizard_step(app), app.focused)
            assert wizard_step(app) == "confirm"
            for _ in STEPS[1:]:
                await pilot.press("escape")
            assert wizard_step(app) == "scene" and app.focused is not None and app.focused.id != "scene-path"


class TestWhyNextIsDimmed:
    async def test_the_reason_is_on_screen_at_80x24_and_the_next_key_says_it(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("ctrl+n", "ctrl+n")
            assert wizard_step(app) == "isolation"
            assert "choose an option first (press a or b)" in screen_text(app)
            await pilot.press("ctrl+n")
            await pilot.pause()
            assert wizard_step(app) == "isolation"
            assert [n.message for n in app._notifications] == ["Next: choose an option first (press a or b)."]
            await pilot.press("a")
            assert "choose an option first" not in screen_text(app)

    async def test_a_failed_cast_check_says_what_to_do(self, workspace):
        break_the_cast(workspace)
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("ctrl+n")
            assert "the cast check failed" in screen_text(app)


class TestChoiceStep:
    async def test_at_80x24_the_options_are_on_screen_and_chosen_rows_have_their_own_glyph(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("ctrl+n", "ctrl+n")
            rows = [line for line in screen_text(app).splitlines() if "(a) Sub-agent per actor" in line
                    and "▐" in line or "(b) Separate API conversation per actor" in line and "▐" in line]
            assert len(rows) == 2 and all("▐○▌" in row for row in rows), rows
            await pilot.press("b")
            rows = {("a" if "(a)" in line else "b"): line for line in screen_text(app).splitlines()
                    if "▐" in line and ("(a) Sub" in line or "(b) Separate" in line)}
            assert "▐○▌" in rows["a"] and "▐●▌" in rows["b"], rows

    async def test_nothing_is_preselected_goes_once_an_option_is_chosen(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("ctrl+n", "ctrl+n")
            assert "Nothing is pre-selected" in screen_text(app)
            await pilot.press("b")
            text = screen_text(app)
            assert "Nothing is pre-selected" not in text
            assert "Chosen: (b) Separate API conversation per actor. Press a to change it." in text


async def to_provider(pilot, app) -> None:
    await pilot.press("ctrl+n", "ctrl+n", "a", "ctrl+n", "c", "ctrl+n")
    assert wizard_step(app) == "provider"


class TestSceneList:
    async def test_the_scene_list_shows_each_scene_by_its_title(self, workspace):
        app = wizard_app(workspace, scene=None)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.pause()
            text = screen_text(app)
            assert "The Apology  scenes/the-apology.yaml" in text
            assert "A Weekend Hiking Plan  scenes/hiking-plan.yaml" in text


class TestProviderStep:
    async def test_a_model_typed_for_one_provider_does_not_stay_for_another(self, workspace):
        from promptdesk.tui.widgets.provider_form import ProviderForm

        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            form = app.screen.query_one(ProviderForm)
            form.query_one("#provider").value = "openai-compatible"
            await pilot.pause()
            form.query_one("#model").value = "llama3"
            await pilot.pause()
            form.query_one("#provider").value = "anthropic"
            await pilot.pause()
            assert form.values == ("anthropic", None, None)
            form.query_one("#provider").value = "openai-compatible"
            await pilot.pause()
            assert form.values == ("openai-compatible", "llama3", None)

    async def test_the_hint_speaks_of_the_offline_improviser_only_when_it_is_chosen(self, workspace):
        from promptdesk.tui.widgets.provider_form import ProviderForm

        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            hint = app.screen.query_one("#provider-hint")
            assert "improviser" in str(hint.render())
            app.screen.query_one(ProviderForm).query_one("#provider").value = "anthropic"
            await pilot.pause()
            assert "improviser" not in str(hint.render()) and "ANTHROPIC_API_KEY" in str(hint.render())

    async def test_seed_and_max_beats_reach_the_run_and_the_confirm_step(self, workspace):
        app = wizard_app(workspace, seed=None)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            assert not app.screen.query_one("#first").display and not app.screen.query_one("#max_rounds").display
            app.screen.query_one("#seed").value = "42"
            app.screen.query_one("#max_beats").value = "5"
            await pilot.pause()
            await pilot.press("ctrl+n")
            assert wizard_step(app) == "confirm"
            options = app.screen.run_options()
            assert (options.seed, options.max_beats) == (42, 5)
            text = screen_text(app)
            for row in ("Seed        42", "Max beats   5", "Actors      the offline improviser", "Judge       none",
                        "Sent out    nothing", "Pace        "):
                assert row in text, row

    async def test_the_reply_protocol_reaches_the_run_and_the_confirm_step_and_json_needs_a_constraining_provider(
            self, workspace, monkeypatch):
        from promptdesk.tui.widgets.provider_form import ProviderForm

        monkeypatch.setenv("OPENAI_API_KEY", "sk-wizard")
        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            choice = app.screen.query_one("#protocol")
            assert choice.display and "tags" in str(choice.prompt)
            choice.value = "json"
            await pilot.pause()
            assert "Reply protocol: json needs a provider that can constrain its output" in screen_text(app)
            assert app.screen.check_action("next", ()) is None
            form = app.screen.query_one(ProviderForm)
            form.query_one("#provider").value = "openai-compatible"
            await pilot.pause()
            form.query_one("#base-url").value = "http://127.0.0.1:9/v1"
            form.query_one("#model").value = "local-model"
            await pilot.pause()
            await pilot.press("ctrl+n")
            assert wizard_step(app) == "confirm", app.screen.why_not()
            assert app.screen.run_options().protocol == "json"
            assert "Protocol    json (every actor's replies)" in screen_text(app)

    async def test_a_blank_reply_protocol_is_the_scene_files(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            await pilot.press("ctrl+n")
            assert app.screen.run_options().protocol is None
            assert "Protocol    tags (as the scene file says)" in screen_text(app)

    async def test_a_max_beats_of_zero_is_named_and_blocks_next(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            app.screen.query_one("#max_beats").value = "0"
            await pilot.pause()
            assert "Max beats: 1 or more, or blank." in screen_text(app)
            assert app.screen.check_action("next", ()) is None

    async def test_a_collaboration_offers_its_first_speaker_and_round_cap(self, workspace):
        app = wizard_app(workspace, scene="hiking-plan.yaml")
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            assert not app.screen.query_one("#max_beats").display
            app.screen.query_one("#first").value = "claude"
            app.screen.query_one("#max_rounds").value = "3"
            await pilot.pause()
            scene = app.screen.chosen_scene()
            assert scene.initial_speaker == "claude"
            assert (scene.section("collaborate").first, scene.section("collaborate").max_rounds) == ("claude", 3)
            await pilot.press("ctrl+n")
            text = screen_text(app)
            first = app.screen.query_one(CastCheck).names["claude"]  # by the name the cast check found
            assert f"First       {first}" in text and "Rounds      at most 3" in text

    async def test_a_format_that_leaves_cast_members_out_says_so(self, workspace):
        from promptdesk.tui.widgets.provider_form import ProviderForm

        app = wizard_app(workspace)
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            app.screen.query_one(ProviderForm).format = "collaborate"
            await pilot.pause()
            note = "Collaborate takes the scene's first 2 characters (alice, bob): charlie is left out."
            assert note in screen_text(app)
            app.screen.query_one(ProviderForm).format = "single"
            await pilot.pause()
            note = "Single call takes only the scene's first character (alice): bob and charlie are left out."
            assert note in screen_text(app)
            await pilot.press("ctrl+n")
            assert "bob and charlie are left out" in screen_text(app)

    async def test_a_roundtable_confirm_shows_its_topic_and_strategy(self, workspace):
        app = wizard_app(workspace, scene="roundtable-free.yaml")
        async with app.run_test(size=(120, 40)) as pilot:
            await to_provider(pilot, app)
            await pilot.press("ctrl+n")
            text = screen_text(app)
            assert "Topic       How should we share the on-call rota" in text
            assert "Strategy    free" in text
            assert "Setting" not in text and "Goal " not in text


class TestNewScene:
    async def test_a_closed_stage_goes_back_to_the_wizard_with_the_last_choices_suggested_only(self, workspace):
        from textual.widgets import OptionList

        from promptdesk.tui.screens.stage import StageScreen
        from tui_support import wait_for

        app = wizard_app(workspace, max_beats=2)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("ctrl+n", "ctrl+n", "b", "ctrl+n", "c", "ctrl+n")
            app.screen.query_one("#seed").value = "11"
            await pilot.press("ctrl+n", "ctrl+n")
            stage = app.screen
            assert isinstance(stage, StageScreen)
            await wait_for(pilot, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished, "close")
            await wait_for(pilot, lambda: stage.check_action("new_scene", ()) is True, "closed")
            await pilot.press("w")
            await pilot.pause()
            assert wizard_step(app) == "scene" and app.screen.scene is None
            assert app.screen.check_action("next", ()) is None
            picker = app.screen.query_one(OptionList)
            assert picker.highlighted is not None
            assert app.screen.query_one("#step-scene").files[picker.highlighted].name == "the-apology.yaml"
            await pilot.press("enter", "ctrl+n")
            assert wizard_step(app) == "isolation" and app.screen.picker("isolation").value is None
            assert "Last scene: (b) Separate API conversation per actor (press b" in screen_text(app)
            await pilot.press("a", "ctrl+n")
            assert app.screen.picker("coordinator").value is None
            await pilot.press("c", "ctrl+n")
            assert app.screen.query_one("#seed").value == "11"

    async def test_new_scene_is_in_the_palette_of_a_closed_stage(self, workspace):
        from promptdesk.tui.screens.stage import StageScreen
        from tui_support import session_for, wait_for

        session = session_for(workspace, max_beats=1)
        app = create_app(session=session)
        async with app.run_test(size=(120, 40)) as pilot:
            stage = app.screen
            assert isinstance(stage, StageScreen)
            await wait_for(pilot, lambda: stage.check_action("new_scene", ()) is True, "closed")
            titles = [c.title for c in app.get_system_commands(stage)]
            assert "New scene" in titles
            next(c for c in app.get_system_commands(stage) if c.title == "New scene").callback()
            await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen), "the wizard")


async def test_seed_and_max_beats_given_on_the_command_line_fill_their_fields_in(workspace):
    app = wizard_app(workspace, seed=9, max_beats=4)
    async with app.run_test(size=(120, 40)) as pilot:
        await to_provider(pilot, app)
        assert (app.screen.query_one("#seed").value, app.screen.query_one("#max_beats").value) == ("9", "4")


async def test_a_scene_path_typed_fixed_and_entered_twice_picks_what_was_typed_each_time(workspace):
    """The path field takes enter, backspace and characters in the order they came."""
    from textual import events

    app = wizard_app(workspace, scene=None)
    async with app.run_test(size=SMALL) as pilot:
        field = app.screen.query_one("#scene-path", Input)
        field.focus()
        await pilot.pause()
        for key in [*"nowhereX", "backspace", "Y", "enter"]:
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await pilot.pause()
        await pilot.pause()
        assert "nowhereY" in screen_text(app) and "nowhereX" not in screen_text(app)
        await pilot.press("ctrl+u", *"the-apology", "enter")
        await pilot.pause()
        assert wizard_step(app) == "cast"
