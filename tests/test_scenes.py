"""Scene files: the examples load, defaults fill in, and every error names file, field and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.casting.scene_file import ProviderSpec, Scene, load_scene, scene_from_dict

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "prompt: Alice and Bob settle an old quarrel while Charlie listens.\n"
"""Appended to `GOOD` where it must load: a scene needs a prompt (its lines stay where they are)."""
GOOD = """\
name: the-test
characters: [alice, bob, charlie]
perspectives:
  alice: Only Alice knows this.
  bob: Only Bob knows this.
events:
  - at_beat: 2
    text: Thunder
  - at_beat: 4
    text: Door slams
limits:
  max_beats: 10
"""


def scene_file(tmp_path: Path, text: str) -> Path:
    """Write a scene file and return its path."""
    path = tmp_path / "scenes" / "x.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problem(tmp_path: Path, text: str) -> str:
    """The InvalidConfig message that loading `text` produces."""
    path = scene_file(tmp_path, text)
    with pytest.raises(InvalidConfig) as caught:
        load_scene(path)
    return caught.value.message


def edit(old: str, new: str) -> str:
    """GOOD with one fragment replaced (the fragment must be there)."""
    assert old in GOOD
    return GOOD.replace(old, new, 1)


def test_apology_example_matches_spec_004_appendix_a():
    scene = load_scene(ROOT / "scenes" / "the-apology.yaml")
    assert (scene.name, scene.title, scene.format, scene.turns) == ("the-apology", "The Apology", "scene", "parallel")
    assert scene.characters == ["alice", "bob", "charlie"] and scene.initial_speaker == "alice"
    assert scene.setting == "Office conference room, afternoon" and scene.goal
    assert set(scene.perspectives) == {"alice", "bob", "charlie"} and scene.coordinator_notes
    assert [(e.at_beat, e.text) for e in scene.events] == [(5, "Phone rings loudly on the conference table")]
    assert scene.limits.max_beats == 30
    assert scene.provider == ProviderSpec(name="offline", latency_ms=(150, 900))
    assert scene.isolation is None and scene.coordinator is None


def test_morning_kitchen_example_matches_spec_000():
    scene = load_scene(ROOT / "scenes" / "morning-kitchen.yaml")
    assert scene.characters == ["maria-stern", "sam-reed"] and scene.turns == "sequential"
    assert scene.perspective_for("maria-stern") != scene.perspective_for("sam-reed")
    assert scene.provider.name == "offline"
    assert scene.isolation is None and scene.coordinator is None


def test_defaults_title_from_name_and_first_character_speaks_first(tmp_path):
    scene = load_scene(scene_file(tmp_path, GOOD + PROMPT))
    assert scene.title == "The Test" and scene.initial_speaker == "alice"
    assert scene.format == "scene" and scene.turns == "parallel"
    assert scene.limits.model_dump() == {"max_beats": 10, "soft_cap_per_character": 40,
                                         "hard_cap_per_character": 60, "stall_beats": 3,
                                         "min_turns_per_character": 2, "wind_down_at": 0.8, "window": 10}
    assert scene.provider == ProviderSpec() and scene.judge is None and scene.seed is None


def test_empty_text_keys_mean_no_text(tmp_path):
    scene = load_scene(scene_file(tmp_path, GOOD + PROMPT + "goal:\nsetting:\n"))
    assert scene.goal == "" and scene.setting == ""


def test_perspective_for_gives_only_that_characters_perspective(tmp_path):
    scene = load_scene(scene_file(tmp_path, GOOD + PROMPT))
    assert scene.perspective_for("alice") == "Only Alice knows this."
    assert scene.perspective_for("charlie") == ""


def test_provider_for_merges_the_cast_override_over_the_scene_provider():
    scene = scene_from_dict({
        "name": "s", "prompt": "A scene.", "characters": ["alice", "bob", "charlie"],
        "provider": {"name": "openai", "model": "gpt-x", "timeout_s": 5, "latency_ms": [1, 2]},
        "cast": {"alice": {"provider": "anthropic", "model": "claude-x"},
                 "bob": {"latency_ms": [10, 20]},
                 "charlie": {"name": "anthropic"}}})
    assert scene.provider_for("alice") == ProviderSpec(name="anthropic", model="claude-x", timeout_s=5), \
        "the offline improviser's latency_ms is not carried over to another provider either"
    assert scene.provider_for("bob") == ProviderSpec(name="openai", model="gpt-x", timeout_s=5, latency_ms=(10, 20))
    assert scene.provider_for("charlie").model is None, "another provider's model is not carried over"
    assert scene_from_dict({"name": "s", "prompt": "A scene.", "characters": ["a", "b"]}).provider_for("a") == ProviderSpec()


def test_judge_and_seed_and_choices_are_read(tmp_path):
    scene = load_scene(scene_file(tmp_path, GOOD + PROMPT + "judge: {name: anthropic, model: claude-j}\nseed: 7\n"
                                                   "isolation: b\ncoordinator: C\n"))
    assert scene.judge == ProviderSpec(name="anthropic", model="claude-j")
    assert (scene.seed, scene.isolation, scene.coordinator) == (7, "b", "C")


def test_bad_yaml_syntax_names_file_line_and_nearest_key(tmp_path):
    message = problem(tmp_path, edit("  max_beats: 10\n", "  max_beats: [10\n"))
    path = tmp_path / "scenes" / "x.yaml"
    assert message.startswith(f"{path}:")
    line = int(message.split(":")[1])
    assert line == 13 and "limits: invalid YAML: while parsing a flow sequence (line 12)" in message


def test_unknown_key_typo_names_line_and_suggests_the_key(tmp_path):
    message = problem(tmp_path, edit("  max_beats: 10\n", "  max_beat: 10\n"))
    assert message == f"{tmp_path / 'scenes' / 'x.yaml'}:12: limits.max_beat: unknown key 'max_beat' " \
                      "(did you mean 'max_beats'?)"


def test_unknown_top_level_key_is_refused(tmp_path):
    message = problem(tmp_path, GOOD + "charaters: [dave]\n")
    assert message.endswith(":13: charaters: unknown key 'charaters' (did you mean 'characters'?)")


def test_max_beats_must_be_positive(tmp_path):
    message = problem(tmp_path, edit("max_beats: 10", "max_beats: 0"))
    assert message.endswith("x.yaml:12: limits.max_beats: Input should be greater than 0 (got 0)")


def test_initial_speaker_must_be_in_the_cast(tmp_path):
    message = problem(tmp_path, GOOD + "initial_speaker: dave\n")
    assert message.endswith("x.yaml:13: initial_speaker: 'dave' is not in characters (alice, bob, charlie)")


def test_perspective_keys_must_be_in_the_cast(tmp_path):
    message = problem(tmp_path, edit("  bob: Only Bob", "  dave: Only Bob"))
    assert message.endswith("x.yaml:5: perspectives.dave: 'dave' is not in characters (alice, bob, charlie)")


def test_cast_override_keys_must_be_in_the_cast(tmp_path):
    message = problem(tmp_path, GOOD + "cast:\n  alice: {provider: openai}\n  eve: {provider: openai}\n")
    assert message.endswith("x.yaml:15: cast.eve: 'eve' is not in characters (alice, bob, charlie)")


def test_isolation_is_exactly_a_or_b(tmp_path):
    for bad in ('"(a)"', "A", "c"):
        message = problem(tmp_path, GOOD + f"isolation: {bad}\n")
        assert "x.yaml:13: isolation: Input should be 'a' or 'b' (got " in message


def test_coordinator_is_exactly_A_B_or_C(tmp_path):
    message = problem(tmp_path, GOOD + "coordinator: c\n")
    assert "x.yaml:13: coordinator: Input should be 'A', 'B' or 'C' (got 'c')" in message


def test_event_text_is_required(tmp_path):
    message = problem(tmp_path, edit("    text: Door slams\n", ""))
    assert message.endswith("x.yaml:9: events[1].text: Field required")


def test_event_text_must_not_be_blank_and_beat_not_negative(tmp_path):
    message = problem(tmp_path, edit("at_beat: 2\n    text: Thunder", "at_beat: -1\n    text: '  '"))
    assert "x.yaml:7: events[0].at_beat: Input should be greater than or equal to 0 (got -1)" in message
    assert "x.yaml:8: events[0].text: String should have at least 1 character" in message


def test_soft_cap_must_not_exceed_hard_cap(tmp_path):
    message = problem(tmp_path, GOOD + "  soft_cap_per_character: 70\n  hard_cap_per_character: 60\n")
    assert message.endswith("x.yaml:13: limits.soft_cap_per_character: soft_cap_per_character (70) must not "
                            "exceed hard_cap_per_character (60)")


def test_soft_cap_is_checked_against_the_default_hard_cap(tmp_path):
    message = problem(tmp_path, GOOD + "  soft_cap_per_character: 61\n")
    assert "limits.soft_cap_per_character: soft_cap_per_character (61) must not exceed" in message


def test_top_level_must_be_a_mapping(tmp_path):
    message = problem(tmp_path, "- name: x\n- characters: [a, b]\n")
    assert message.startswith(f"{tmp_path / 'scenes' / 'x.yaml'}:1: (top level): a scene must be a mapping")
    assert "this file is a list" in message


def test_empty_file_is_reported(tmp_path):
    assert "this file is empty" in problem(tmp_path, "# nothing here\n")


def test_missing_file_is_reported(tmp_path):
    with pytest.raises(InvalidConfig, match=r"Scene file .*nope\.yaml not found"):
        load_scene(tmp_path / "nope.yaml")


def test_missing_required_keys_are_reported(tmp_path):
    message = problem(tmp_path, "title: Only a title\n")
    assert "x.yaml:1: characters: Field required" in message and "x.yaml:1: name: Field required" in message


def test_scene_name_is_a_slug(tmp_path):
    message = problem(tmp_path, edit("name: the-test", "name: ../escape"))
    assert "x.yaml:1: name: Invalid scene name '../escape'" in message


def test_character_slugs_are_validated_with_their_line(tmp_path):
    message = problem(tmp_path, edit("characters: [alice, bob, charlie]",
                                     "characters:\n  - alice\n  - Bob Smith\n  - charlie"))
    assert "x.yaml:4: characters[1]: Invalid character 'Bob Smith'" in message


def test_characters_must_be_unique(tmp_path):
    message = problem(tmp_path, edit("[alice, bob, charlie]", "[alice, bob, alice]"))
    assert "x.yaml:2: characters[2]: 'alice' is listed twice" in message


def test_cast_size_is_one_to_fifty_and_the_limit_is_named(tmp_path):
    assert "characters: List should have at least 1 item" in problem(tmp_path, "name: s\nprompt: A scene.\ncharacters: []\n")
    fifty = ", ".join(f"c{i}" for i in range(50))
    for fmt in ("scene", "roundtable"):
        scene = load_scene(scene_file(tmp_path, f"name: s\nformat: {fmt}\nprompt: A scene.\ngoal: a plan\ncharacters: [{fifty}]\n"))
        assert len(scene.characters) == 50
        message = problem(tmp_path, f"name: s\nformat: {fmt}\nprompt: A scene.\ngoal: a plan\ncharacters: [{fifty}, c50]\n")
        assert f"characters: format {fmt} plays at most 50 characters (the cast limit, MAX_CAST), got 51: remove 1" \
            in message


def test_collaborate_stays_two_assistants(tmp_path):
    message = problem(tmp_path, "name: s\nformat: collaborate\ncharacters: [alice, bob, charlie]\n")
    assert "format collaborate plays at most 2 characters (two assistants" in message
    assert "got 3: remove 1" in message


def test_every_format_names_its_own_smallest_cast(tmp_path):
    assert "a scene needs at least 2 characters" in problem(tmp_path, "name: s\nprompt: A scene.\ncharacters: [alice]\n")
    assert "one participant alone is a single call" in problem(
        tmp_path, "name: s\nformat: collaborate\ngoal: g\ncharacters: [alice]\n")
    single = load_scene(scene_file(tmp_path, "name: s\nformat: collaborate\ngoal: g\ncharacters: [alice]\n"
                                             "collaborate: {max_rounds: 1}\n"))
    assert single.characters == ["alice"]
    assert "a roundtable needs at least 2 characters" in problem(
        tmp_path, "name: s\nformat: roundtable\nroundtable: {topic: t}\ncharacters: [alice]\n")
    scene = load_scene(scene_file(tmp_path, "name: s\nformat: collaborate\ngoal: g\ncharacters: [alice, bob]\n"))
    assert scene.characters == ["alice", "bob"]


def test_latency_range_must_be_ordered_and_provider_known(tmp_path):
    message = problem(tmp_path, GOOD + "provider: {name: ollama, latency_ms: [900, 100]}\n")
    assert ("x.yaml:13: provider.name: Input should be 'offline', 'anthropic', 'openai', "
            "'openai-compatible' or 'claude-code' (got 'ollama')") in message
    assert "x.yaml:13: provider.latency_ms: latency_ms must be [lo, hi] with lo <= hi, got [900, 100]" in message


def test_cast_override_takes_provider_or_name_not_both(tmp_path):
    message = problem(tmp_path, GOOD + "cast:\n  alice: {provider: openai, name: anthropic}\n")
    assert "x.yaml:14: cast.alice: give `provider` or `name`, not both" in message


def test_multiple_errors_are_all_reported_one_per_line_in_file_order(tmp_path):
    text = edit("name: the-test", "name: The Test")
    text = text.replace("    text: Door slams\n", "").replace("max_beats: 10", "max_beats: 0")
    lines = problem(tmp_path, text + "isolation: x\n").splitlines()
    assert [line.split(": ", 1)[0].rsplit(":", 1)[1] for line in lines] == ["1", "9", "11", "12"]
    assert [line.split(": ")[1] for line in lines] == ["name", "events[1].text", "limits.max_beats", "isolation"]


def test_scene_from_dict_names_the_source_and_field():
    with pytest.raises(InvalidConfig) as caught:
        scene_from_dict({"name": "s", "prompt": "A scene.", "characters": ["a", "b"], "limits": {"max_beats": -1}}, source="cli")
    assert caught.value.message == "cli: limits.max_beats: Input should be greater than 0 (got -1)"


def test_scene_is_a_pydantic_model_that_round_trips(tmp_path):
    scene = load_scene(scene_file(tmp_path, GOOD + PROMPT))
    assert isinstance(scene, Scene)
    assert Scene.model_validate(scene.model_dump()) == scene


@pytest.mark.parametrize("key, typed", [("wind_down", "off"), ("wind_down", "Off"), ("suggested_events", "off"),
                                        ("suggested_events", "OFF")])
def test_off_written_unquoted_as_the_docs_show_is_off_not_a_yaml_false(tmp_path, key, typed):
    scene = load_scene(scene_file(tmp_path, f"name: s\nprompt: A scene.\ncharacters: [alice, bob]\n{key}: {typed}\n"))
    assert getattr(scene, key) == "off"


def test_another_yaml_boolean_for_a_choice_is_refused_naming_the_choices(tmp_path):
    message = problem(tmp_path, "name: s\nprompt: A scene.\ncharacters: [alice, bob]\nwind_down: yes\n")
    assert "wind_down: Input should be 'timing', 'action' or 'off'" in message


@pytest.mark.parametrize("markers, bad", [('["", sorry]', 0), ("[sorry, '   ']", 1)])
def test_a_blank_goal_marker_is_refused_since_every_speech_holds_it(tmp_path, markers, bad):
    message = problem(tmp_path, f"name: s\nprompt: A scene.\ncharacters: [alice, bob]\ngoal_markers: {markers}\n")
    assert f"goal_markers[{bad}]" in message and "blank" in message


def test_a_list_or_mapping_key_whose_items_are_all_commented_out_means_none(tmp_path):
    path = tmp_path / "quiet.yaml"
    path.write_text("name: quiet\ncharacters: [alice, bob]\nsetting: A room\nprompt: They talk.\n"
                    "events:\n#  - at_beat: 3\n#    text: A phone rings\ngoal_markers:\n# - sorry\n"
                    "cast:\n#  alice: {provider: anthropic}\nperspectives:\n", encoding="utf-8")
    scene = load_scene(path)
    assert (scene.events, scene.goal_markers, scene.cast, scene.perspectives) == ([], [], {}, {})
    path.write_text(path.read_text().replace("events:\n", "events: 3\n"), encoding="utf-8")
    with pytest.raises(InvalidConfig, match="events"):
        load_scene(path)
