"""The setup wizard: must present, must record; scene and cast errors in place; a full offline run."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import RadioButton
from tui_support import screen_text, wait_for, wizard_app, wizard_step

from promptdesk.core.casting.notes import choice_lines
from promptdesk.tui.screens.stage import StageScreen
from promptdesk.tui.widgets.cast_check import CastCheck
from promptdesk.tui.widgets.provider_form import ProviderForm
from promptdesk.tui.widgets.scene_picker import ScenePicker
from promptdesk.tui.widgets.state_panel import StatePanel
from promptdesk.tui.widgets.transcript import Transcript

SIZE = (120, 40)


def pressed(app, name: str) -> list[str]:
    return [b.name for b in app.screen.query(f"#step-{name} RadioButton").results(RadioButton) if b.value]


class TestMustPresent:
    async def test_nothing_is_preselected_and_there_is_no_way_forward_without_both_choices(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+n", "ctrl+n")
            assert wizard_step(app) == "isolation"
            assert pressed(app, "isolation") == [] and app.screen.picker("isolation").value is None
            assert app.screen.check_action("next", ()) is None
            await pilot.press("ctrl+n")
            await pilot.click("#next")
            assert wizard_step(app) == "isolation"
            await pilot.press("b", "ctrl+n")
            assert wizard_step(app) == "coordinator"
            assert pressed(app, "coordinator") == [] and app.screen.check_action("next", ()) is None
            await pilot.press("ctrl+n")
            assert wizard_step(app) == "coordinator"
            await pilot.press("c", "ctrl+n")
            assert wizard_step(app) == "provider"

    async def test_the_trade_offs_of_spec_000_are_on_screen(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+n", "ctrl+n")
            text = screen_text(app)
            assert "Sub-agent per actor" in text and "More reproducible" in text and "Trade-off" in text
            await pilot.press("a", "ctrl+n")
            text = screen_text(app)
            assert "routing bias" in text and "Best for pilots" in text and "Pure code" in text

    async def test_choices_in_the_scene_file_are_shown_as_chosen_and_can_be_changed(self, workspace):
        scene = workspace / "scenes" / "the-apology.yaml"
        scene.write_text(scene.read_text() + "\nisolation: a\ncoordinator: B\n")
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+n", "ctrl+n")
            assert pressed(app, "isolation") == ["a"]
            assert "scene file" in str(app.screen.query_one("#step-isolation .source").render())
            await pilot.press("b")
            assert pressed(app, "isolation") == ["b"] and app.screen.picker("isolation").value == "b"
            await pilot.press("ctrl+n")
            assert pressed(app, "coordinator") == ["B"]
            await pilot.press("c")
            assert app.screen.picker("coordinator").value == "C"
            assert app.screen.run_options().coordinator == "C"

    async def test_choices_given_as_flags_are_shown_as_chosen(self, workspace):
        app = wizard_app(workspace, isolation="a", coordinator="C")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+n", "ctrl+n")
            assert pressed(app, "isolation") == ["a"]
            assert "command line" in str(app.screen.query_one("#step-isolation .source").render())


class TestSceneAndCast:
    async def test_a_missing_character_is_reported_in_place_and_blocks_the_way(self, workspace):
        scene = workspace / "scenes" / "the-apology.yaml"
        scene.write_text(scene.read_text().replace("[alice, bob, charlie]", "[alice, bob, zed]")
                         .replace("\n  charlie: |", "\n  zed: |"))
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+n")
            check = app.screen.query_one(CastCheck)
            assert wizard_step(app) == "cast" and not check.ok
            assert "CHARACTER_LOAD_ERROR" in str(check.render()) and "zed" in str(check.render())
            await pilot.press("ctrl+n")
            assert wizard_step(app) == "cast"

    async def test_an_invalid_scene_file_shows_the_engine_message(self, workspace):
        (workspace / "scenes" / "broken.yaml").write_text("name: broken\nprompt: A scene.\ncharacters: [alice]\nturns: sideways\n")
        app = wizard_app(workspace, scene="broken.yaml")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            status = str(app.screen.query_one("#step-scene .status").render())
            assert "INVALID_CONFIG" in status and "turns" in status
            assert app.screen.check_action("next", ()) is None

    async def test_every_scene_file_is_listed_and_a_path_can_be_typed(self, workspace):
        app = wizard_app(workspace, scene=None)
        async with app.run_test(size=SIZE) as pilot:
            picker = app.screen.query_one(ScenePicker)
            assert picker.files == sorted((workspace / "scenes").glob("*.yaml"))
            assert "scenes/the-apology.yaml" in screen_text(app)
            picker.query_one("#scene-path").value = "scenes/morning-kitchen.yaml"
            picker.query_one("#scene-path").focus()
            await pilot.press("enter")
            assert app.screen.scene.name == "morning-kitchen" and wizard_step(app) == "cast"


    async def test_a_typed_name_too_long_for_the_file_system_is_said_in_place(self, workspace):
        """200 Cyrillic letters are 400 bytes, past the 255 a file name may hold: Enter on them ended the
        console in an OSError traceback (File name too long) from the look for the file."""
        app = wizard_app(workspace, scene=None)
        async with app.run_test(size=SIZE) as pilot:
            picker = app.screen.query_one(ScenePicker)
            picker.query_one("#scene-path").value = "ж" * 200
            picker.query_one("#scene-path").focus()
            await pilot.press("enter")
            await pilot.pause()
            status = str(app.screen.query_one("#step-scene .status").render())
            assert "INVALID_CONFIG: Cannot read scene file" in status and "File name too long" in status
            assert wizard_step(app) == "scene" and app.screen.check_action("next", ()) is None

    async def test_in_an_empty_folder_the_shipped_examples_are_listed_as_examples_and_play(self, tmp_path,
                                                                                         monkeypatch):
        """An operator with no scenes of their own sees every example Promptdesk ships, marked as one;
        picking one passes the cast check with the examples' own characters."""
        from promptdesk import resources
        from promptdesk.tui.app import create_app
        from tui_support import run_options

        monkeypatch.chdir(tmp_path)
        app = create_app(scene=None, options=run_options(tmp_path), cwd=tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            picker = app.screen.query_one(ScenePicker)
            assert [p.stem for p in picker.files] == list(resources.example_scenes())
            assert picker.examples == set(picker.files)
            assert "example: the-apology" in screen_text(app)
            picker.query_one("#scene-path").value = "morning-kitchen"
            picker.query_one("#scene-path").focus()
            await pilot.press("enter")
            assert app.screen.scene.name == "morning-kitchen" and wizard_step(app) == "cast"
            await pilot.pause()
            assert app.screen.ready(), screen_text(app)

    async def test_an_example_whose_name_scenes_uses_is_not_listed_twice(self, workspace):
        app = wizard_app(workspace, scene=None)
        async with app.run_test(size=SIZE):
            picker = app.screen.query_one(ScenePicker)
            assert picker.examples == set() and "example:" not in screen_text(app)


async def test_a_full_offline_scene_runs_from_the_wizard_to_its_close(workspace):
    app = wizard_app(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n", "ctrl+n", "b", "ctrl+n", "c", "ctrl+n", "ctrl+n", "ctrl+n")
        assert isinstance(app.screen, StageScreen)
        stage = app.screen
        await wait_for(pilot, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished, "the close")
        await wait_for(pilot, lambda: stage.query_one(StatePanel).snapshot.status == "closed", "the panel")
        run_dir = Path(stage.session.state.run_dir)
        for name in ("notes.md", "events.jsonl", "events.json", "transcript.md", "transcript.txt", "metadata.json",
                     "prompts.jsonl"):
            assert (run_dir / name).is_file(), name
        assert (run_dir / "notes.md").read_text().splitlines()[:2] == choice_lines("b", "C")
        lines = stage.query_one(Transcript).plain_lines()
        assert any(line.startswith(("Alice", "Bob", "Charlie")) and '"' in line for line in lines)
        assert any(line.startswith("■ Scene closed") for line in lines)


class TestFormat:
    """The wizard offers the format (Single call | Collaborate | Scene | Roundtable), preset from the file."""

    async def test_the_format_is_preset_from_the_scene_file(self, workspace):
        for scene, fmt, label in (("the-apology.yaml", "scene", "Scene"), ("hiking-plan.yaml", "collaborate",
                                                                            "Collaborate"),
                                  ("roundtable-free.yaml", "roundtable", "Roundtable")):
            app = wizard_app(workspace, scene=scene)
            async with app.run_test(size=SIZE) as pilot:
                await pilot.press("ctrl+n", "ctrl+n", "a", "ctrl+n", "c", "ctrl+n")
                assert wizard_step(app) == "provider" and app.screen.query_one(ProviderForm).format == fmt
                assert "Format (preset from the scene file)" in screen_text(app) and label in screen_text(app)

    async def test_a_single_call_runs_one_participant_for_one_round_and_opens_the_room(self, workspace):
        app = wizard_app(workspace, scene="hiking-plan.yaml")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+n", "ctrl+n", "a", "ctrl+n", "c", "ctrl+n")
            app.screen.query_one(ProviderForm).format = "single"
            await pilot.press("ctrl+n")
            assert wizard_step(app) == "confirm" and "Single call" in screen_text(app)
            await pilot.press("ctrl+n")
            stage = app.screen
            assert isinstance(stage, StageScreen) and stage.has_room
            await wait_for(pilot, lambda: stage.bridge.worker is not None and stage.bridge.worker.is_finished, "the close")
            assert list(stage.session.state.cast) == ["gpt"] and stage.session.format_state.max_rounds == 1
            assert (stage.session.state.isolation, stage.session.state.coordinator) == ("a", "C")

    async def test_a_format_that_does_not_fit_the_scene_says_why_and_does_not_start(self, workspace):
        app = wizard_app(workspace, scene="hiking-plan.yaml")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+n", "ctrl+n", "a", "ctrl+n", "c", "ctrl+n")
            app.screen.query_one(ProviderForm).format = "scene"
            await pilot.press("ctrl+n", "ctrl+n")
            assert wizard_step(app) == "confirm"
            error = str(app.screen.query_one("#start-error").render())
            assert error.startswith("Cannot start:") and "Scene prompt is required" in error, error


class TestProviderStep:
    """The provider step says what it needs, naming the field, before Start."""

    async def to_provider(self, pilot, app) -> ProviderForm:
        await pilot.press("ctrl+n", "ctrl+n", "a", "ctrl+n", "c", "ctrl+n")
        assert wizard_step(app) == "provider"
        return app.screen.query_one(ProviderForm)

    async def test_offline_needs_nothing_and_no_placeholder_reads_as_a_value(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            form = await self.to_provider(pilot, app)
            assert form.problem() is None
            text = screen_text(app)
            assert "Model (blank: the offline improviser, its only model)" in text
            for field in ("#model", "#base-url"):
                placeholder = form.query_one(field).placeholder
                assert placeholder.startswith("(") and placeholder.endswith(")"), placeholder

    async def test_a_missing_api_key_is_said_on_the_step_and_blocks_start(self, workspace, monkeypatch):
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            form = await self.to_provider(pilot, app)
            form.query_one("#provider").value = "anthropic"
            await pilot.pause()
            assert "Model: anthropic needs a model name (it has no default model here)." in screen_text(app)
            form.query_one("#model").value = "claude-test"
            await pilot.pause()
            assert "API key: ANTHROPIC_API_KEY is not set in the environment" in screen_text(app)
            assert app.screen.check_action("next", ()) is None
            await pilot.press("ctrl+n")
            assert wizard_step(app) == "provider"
            monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
            form.show_needs()
            app.screen._answered()
            assert app.screen.check_action("next", ())

    async def test_an_openai_compatible_server_needs_its_base_url_named_as_the_field(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            form = await self.to_provider(pilot, app)
            form.query_one("#provider").value = "openai-compatible"
            await pilot.pause()
            form.query_one("#model").value = "llama3"
            await pilot.pause()
            assert "Base URL: openai-compatible needs your server's address." in screen_text(app)
            assert "Base URL (required: your server's address" in screen_text(app)

    async def test_a_concurrency_limit_is_asked_checked_and_passed_to_the_run(self, workspace):
        app = wizard_app(workspace)
        async with app.run_test(size=SIZE) as pilot:
            form = await self.to_provider(pilot, app)
            assert "Max concurrency (blank: no limit; 1 for a server that serves one request" in screen_text(app)
            assert "max_concurrency" not in app.screen.run_options().provider_settings
            form.query_one("#max-concurrency").value = "0"
            await pilot.pause()
            assert "Max concurrency: give a positive whole number" in screen_text(app)
            assert app.screen.check_action("next", ()) is None
            form.query_one("#max-concurrency").value = "1"
            await pilot.pause()
            assert form.problem() is None
            assert app.screen.run_options().provider_settings["max_concurrency"] == 1


def test_engine_messages_about_flags_name_the_form_field_instead():
    from promptdesk.tui.widgets.provider_form import in_form_words

    message = "the anthropic provider needs a model: set `model` in the scene's provider (or pass --model)"
    assert in_form_words(message).endswith("(or fill in the Model field)")
    assert in_form_words("needs a base URL (--base-url or `base_url`)") == \
        "needs a base URL (the Base URL field or `base_url`)"
