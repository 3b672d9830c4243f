"""Files a person brings are parsed within bounds: a YAML alias bomb or an alias loop is refused
before any data is built, nesting 1,000 or 100,000 deep is refused (never a RecursionError), and a
damaged `private.json` or `events.jsonl` is answered with a refusal or a skipped line, never a
traceback. Each refusal exits 2 naming the file, the line when known, and what to fix."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from promptdesk.core.casting.scene_file import load_scene
from promptdesk.core.characters.loading import load_character
from promptdesk.core.cli.main import main
from promptdesk.core.errors import CharacterLoadError, InvalidConfig
from helpers import CHARACTERS, SCENES
from in_child import in_child

CAST = "name: s\ncharacters: [ann, ben]\n"


def alias_bomb(levels: int) -> str:
    """The classic "billion laughs": each anchor a list of nine aliases of the one before."""
    lines = [CAST.strip(), 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_the_alias_bomb_of_the_report_is_refused_in_milliseconds_naming_file_and_line(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(10))
    assert len(path.read_bytes()) < 600
    started = time.perf_counter()
    outcome = in_child(lambda: load_scene(path), seconds=5)
    assert outcome.error == "InvalidConfig", outcome
    assert time.perf_counter() - started < 3
    assert f"{path}:" in outcome.message and "alias" in outcome.message and "write the values out" in outcome.message


def test_a_smaller_bomb_is_refused_before_the_size_check_walks_it(tmp_path):
    """Seven levels (4.8 million strings once expanded) took seconds to walk; refused at once now."""
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(7))
    started = time.perf_counter()
    with pytest.raises(InvalidConfig, match="alias"):
        load_scene(path)
    assert time.perf_counter() - started < 0.5


def test_the_batch_refuses_the_bomb_with_exit_2_and_no_run_folder(tmp_path):
    (tmp_path / "bomb.yaml").write_text(alias_bomb(10))
    args = ["--batch", str(tmp_path / "bomb.yaml"), "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run")]
    outcome = in_child(lambda: main(args), seconds=10)
    assert outcome.value == "2", outcome
    assert "bomb.yaml:" in outcome.stderr and "Traceback" not in outcome.stderr
    assert not (tmp_path / "run").exists()


def test_an_alias_inside_the_node_it_names_is_a_loop_and_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text(CAST + "limits: &me [1, *me]\n")
    outcome = in_child(lambda: load_scene(path), seconds=5)
    assert outcome.error == "InvalidConfig", outcome
    assert f"{path}:3: limits:" in outcome.message and "loop" in outcome.message


def test_a_scene_read_from_a_pipe_is_bounded_too(tmp_path):
    """`--batch <(generate-scene)`: a pipe has no size to check first, so reading stops at the limit."""
    import os
    import threading
    read_end, write_end = os.pipe()

    def write() -> None:
        with open(write_end, "wb") as pipe:
            try:
                pipe.write(CAST.encode() + b"# padding\n" * 120_000)
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with pytest.raises(InvalidConfig, match="over the limit of 1 MB"):
            load_scene(Path(f"/dev/fd/{read_end}"))
    finally:
        os.close(read_end)
        writer.join()


def test_a_few_small_anchors_still_load(tmp_path):
    path = tmp_path / "anchors.yaml"
    path.write_text("name: s\nprompt: A scene.\ncharacters: [ann, ben]\ncast:\n  ann: &fast {provider: offline}\n  ben: *fast\n")
    assert set(load_scene(path).cast) == {"ann", "ben"}


def test_limits_nested_a_thousand_deep_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text(CAST + "limits: " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(InvalidConfig) as caught:
        load_scene(path)
    assert caught.value.message.startswith(f"{path}:3: limits: ") and "nested more than 64 levels" in caught.value.message


def test_a_scene_nested_deep_exits_2_in_the_batch(tmp_path, capsys):
    (tmp_path / "s.yaml").write_text(CAST + "limits: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n")
    assert main(["--batch", str(tmp_path / "s.yaml"), "--characters-dir", str(CHARACTERS)]) == 2
    err = capsys.readouterr().err
    assert "s.yaml:3: limits:" in err and "flatten" in err


@pytest.mark.parametrize("value", ["2020-02-30", "!!float x", "!!int 0x", "!!timestamp 2020-99-99"])
def test_a_value_yaml_cannot_build_is_refused_naming_its_line(tmp_path, capsys, value):
    (tmp_path / "s.yaml").write_text(CAST + "title: x\nseed: " + value + "\n")
    assert main(["--batch", str(tmp_path / "s.yaml"), "--characters-dir", str(CHARACTERS)]) == 2
    assert "s.yaml:4:7: seed: invalid YAML: a value cannot be read" in capsys.readouterr().err


def test_front_matter_yaml_cannot_build_is_read_line_by_line(tmp_path):
    dirs = agent(tmp_path, "---\nname: Deep Diver\ncreated: 2020-02-30\n---\nI go deep.\n")
    assert load_character("deep", dirs).name == "Deep Diver"


def agent(tmp_path: Path, text: str) -> list[Path]:
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "deep.md").write_text(text)
    return [folder]


def test_front_matter_nested_a_thousand_deep_is_refused_naming_file_and_line(tmp_path):
    dirs = agent(tmp_path, "---\nname: deep\ntools: " + "[" * 1000 + "]" * 1000 + "\n---\nI go deep.\n")
    with pytest.raises(CharacterLoadError) as caught:
        load_character("deep", dirs)
    assert f"{dirs[0] / 'deep.md'}:3: the front matter's lists and mappings are nested" in caught.value.message


def test_a_front_matter_alias_bomb_is_refused(tmp_path):
    bomb = alias_bomb(10).replace(CAST, "")
    dirs = agent(tmp_path, "---\nname: deep\n" + bomb + "---\nI go deep.\n")
    outcome = in_child(lambda: load_character("deep", dirs), seconds=5)
    assert outcome.error == "CharacterLoadError" and "alias" in outcome.message, outcome


def test_a_profile_over_1_mb_is_refused_before_it_is_read(tmp_path):
    dirs = agent(tmp_path, "# Deep\n\n" + "I go on.\n" * 150_000)
    with pytest.raises(CharacterLoadError, match="over the limit of 1 MB"):
        load_character("deep", dirs)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("text", [
    '{"spec": "chara_card_v2", "spec_version": "2.0", "data": ' + DEEP + "}",
    '{"type": "TinyPerson", "persona": {"name": "Deep", "skills": ' + DEEP + "}}",
    '{"name": "Deep", "first_mes": "hi", "extensions": ' + "{\"a\": " * 500 + "1" + "}" * 500 + "}",
], ids=["card", "tinyperson", "card-500-objects"])
def test_json_nested_deep_is_refused_by_import_with_exit_2(tmp_path, capsys, text):
    (tmp_path / "deep.json").write_text(text)
    assert main(["import", str(tmp_path / "deep.json"), "--to", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "deep.json: lists and objects are nested more than 64 levels deep" in err and "nothing was imported" in err


def test_a_card_nested_deep_cast_directly_exits_2(tmp_path, capsys):
    (tmp_path / "deep.json").write_text('{"name": "Deep", "personality": "x", "data": ' + DEEP + "}")
    (tmp_path / "s.yaml").write_text("name: s\nprompt: A scene.\ncharacters: [deep.json, alice]\nisolation: a\ncoordinator: C\n")
    assert main(["--batch", str(tmp_path / "s.yaml"), "--characters-dir", str(CHARACTERS)]) == 2
    assert "Character 'deep' (a card):" in capsys.readouterr().err


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("hostile") / "run"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--characters-dir", str(CHARACTERS), "--isolation", "b",
                 "--coordinator", "C", "--seed", "1", "--max-beats", "1", "--out", str(run), "--journals", "none",
                 "--quiet"]) == 0
    return run


def damaged(a_run: Path, tmp_path: Path, name: str, text: str) -> Path:
    run = tmp_path / "run"
    shutil.copytree(a_run, run)
    (run / name).write_text(text)
    return run


@pytest.mark.parametrize("text", ['{"version": 1, "cast": 5}', '{"version": 1, "cast": {"alice": 3}}',
                                  '{"version": 1, "cast": {}, "scene": []}', "[" * 100_000 + "]" * 100_000, "[]"],
                         ids=["cast-5", "member-3", "scene-list", "deep", "list"])
def test_a_private_json_of_the_wrong_shape_is_refused_by_audit_and_resume(a_run, tmp_path, capsys, text):
    run = damaged(a_run, tmp_path, "private.json", text)
    for command in ("audit", "resume"):
        assert main([command, str(run)]) == 2, command
        err = capsys.readouterr().err
        assert "NOT_A_RUN" in err and "private.json" in err and "Traceback" not in err, err


def test_a_private_json_of_the_wrong_shape_names_the_fields(a_run, tmp_path, capsys):
    run = damaged(a_run, tmp_path, "private.json", '{"version": 1, "cast": 5}')
    assert main(["audit", str(run)]) == 2
    err = capsys.readouterr().err
    assert "cast: Input should be a valid dictionary (got 5)" in err and "scene: Field required" in err


def test_metrics_and_compare_say_the_audit_is_unavailable_for_a_damaged_private_json(a_run, tmp_path, capsys):
    run = damaged(a_run, tmp_path, "private.json", '{"version": 1, "cast": 5}')
    assert main(["metrics", str(run), "--json"]) == 0
    assert "unavailable" in json.loads(capsys.readouterr().out)["audit"]
    assert main(["compare", str(run), str(a_run), "--csv"]) == 0
    assert "unavailable" in capsys.readouterr().out


def test_an_events_line_nested_deep_is_skipped_with_a_warning(a_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(a_run, run)
    with open(run / "events.jsonl", "a") as log:
        log.write('{"t": 1, "from": "x", "type": "note", "extra": ' + DEEP + "}\n")
    assert main(["metrics", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["beats"] == 1
    from promptdesk.core.record.recorder import read_events
    warnings: list[str] = []
    assert len(read_events(run, warn=warnings.append)) == len(read_events(a_run))
    assert len(warnings) == 1 and "nested more than 64 levels" in warnings[0]


def test_a_run_folder_saved_with_byte_order_marks_is_read_as_written(a_run, tmp_path, capsys):
    """An editor on Windows opens each file with a byte order mark when it saves: `events.jsonl`'s first
    line (the start event), `prompts.jsonl`, `private.json` and `metadata.json` are read past it. The
    audit called such a run INCOMPLETE ("Unexpected UTF-8 BOM"), `rebuild` and `resume` refused it, and
    `metrics` called its scene unknown."""
    run = tmp_path / "run"
    shutil.copytree(a_run, run)
    for name in ("events.jsonl", "prompts.jsonl", "private.json", "metadata.json"):
        (run / name).write_bytes(b"\xef\xbb\xbf" + (run / name).read_bytes())
    assert main(["audit", str(run)]) == 0
    assert "Audit clean" in capsys.readouterr().out
    assert main(["metrics", str(run), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["scene"] == "the-apology" and "skipped" not in out.err
    assert main(["rebuild", str(run)]) == 0


def test_an_events_line_over_the_limit_is_passed_over_unread(tmp_path):
    from promptdesk.core.record.recorder import bounded_lines
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"first\n" + b"x" * 5000 + b"\nlast")
    with open(path, "rb") as handle:
        assert list(bounded_lines(handle, 1000)) == [b"first", None, b"last"]


def test_the_sweep_plan_loader_is_bounded_like_a_scene(tmp_path):
    from promptdesk.core.casting.scene_file import read_yaml
    (tmp_path / "sweep.yaml").write_text(alias_bomb(10))
    with pytest.raises(InvalidConfig, match="sweep.yaml:.*alias"):
        read_yaml(tmp_path / "sweep.yaml", "Sweep plan")
    (tmp_path / "sweep.yaml").write_text("scene: x.yaml\nseeds: [1, 2]\n")
    assert read_yaml(tmp_path / "sweep.yaml", "Sweep plan") == {"scene": "x.yaml", "seeds": [1, 2]}


def test_a_key_given_twice_in_a_scene_is_refused_naming_both_lines(tmp_path, capsys):
    """YAML keeps the last of two equal keys silently: a scene whose `title:` (or a perspective)
    is given twice is refused, naming the key and its two lines, and nothing is played."""
    (tmp_path / "s.yaml").write_text(CAST + "title: First\nperspectives:\n  ann: a\n  ann: b\ntitle: Second\n")
    assert main(["--batch", str(tmp_path / "s.yaml"), "--characters-dir", str(CHARACTERS), "--out",
                 str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "s.yaml:6: perspectives: the key 'ann' is given twice in one mapping (lines 5 and 6); keep one" in err
    assert not (tmp_path / "run").exists()
    (tmp_path / "s.yaml").write_text(CAST + "title: First\ntitle: Second\n")
    with pytest.raises(InvalidConfig, match=r"s.yaml:4: title: the key 'title' is given twice .*lines 3 and 4"):
        load_scene(tmp_path / "s.yaml")


def test_equal_keys_in_different_mappings_and_merge_keys_still_load(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: s\nprompt: A scene.\ncharacters: [ann, ben]\nfast: &fast {provider: offline}\n"
                    .replace("fast: &fast {provider: offline}\n", "")
                    + "cast:\n  ann: &fast {provider: offline}\n  ben:\n    <<: *fast\n    provider: offline\n"
                    "perspectives: {ann: x, ben: x}\n")
    assert set(load_scene(path).cast) == {"ann", "ben"}


def test_a_key_given_twice_in_front_matter_is_refused_naming_the_files_lines(tmp_path):
    dirs = agent(tmp_path, "---\nname: Deep Diver\ndescription: x\nname: DIRECTOR\n---\nI go deep.\n")
    with pytest.raises(CharacterLoadError) as caught:
        load_character("deep", dirs)
    assert caught.value.message == (f"Character 'deep': {dirs[0] / 'deep.md'}:4: the front matter's key 'name' is "
                                    "given twice (lines 2 and 4); keep one.")


@pytest.mark.parametrize("value, name", [("yes", "yes"), ("No", "No"), ("007", "007"), ("2020-01-01", "2020-01-01"),
                                         ("1e3", "1e3"), ("'quoted: yes'", "quoted: yes")])
def test_a_name_yaml_reads_as_another_type_is_the_name_as_written(tmp_path, value, name):
    """`name: No` is a boolean to YAML and `name: 007` the number 7: the name is what was written,
    never the file's slug in its place without a word."""
    dirs = agent(tmp_path, f"---\nname: {value}\ndescription: {value}\n---\nI go deep.\n")
    character = load_character("deep", dirs)
    assert (character.name, character.description) == (name, name)


@pytest.mark.parametrize("field, value, kind", [("name", "[Ann, Bo]", "a list"), ("name", "{first: Ann}", "a mapping"),
                                                ("description", "\n  - one\n  - two", "a list")])
def test_a_name_or_description_of_a_list_or_mapping_is_refused_naming_its_line(tmp_path, field, value, kind):
    dirs = agent(tmp_path, f"---\ncolor: red\n{field}: {value}\n---\nI go deep.\n")
    with pytest.raises(CharacterLoadError) as caught:
        load_character("deep", dirs)
    assert f"deep.md:3: the front matter's {field} is {kind}, not text" in caught.value.message


def test_a_key_given_twice_in_a_strategy_is_refused_naming_its_line(tmp_path):
    from promptdesk.core.formats.roundtable.strategies import read_strategy

    path = tmp_path / "twice.yaml"
    path.write_text("phases:\n  - name: open\n    prompt: a\n    prompt: b\n")
    with pytest.raises(InvalidConfig, match=r"twice.yaml:4: .*the key 'prompt' is given twice"):
        read_strategy(path)


def test_a_strategy_file_is_read_within_its_bound(tmp_path):
    """A strategy over 1 MB is refused without being read whole; one in another encoding names the byte."""
    from promptdesk.core.formats.roundtable.strategies import STRATEGY_MAX_BYTES, read_strategy

    path = tmp_path / "big.yaml"
    path.write_bytes(b"phases: [{name: a, goal: b}]\n#" + b"x" * STRATEGY_MAX_BYTES)
    with pytest.raises(InvalidConfig, match=r"big.yaml: a strategy file is at most 1,048,576 bytes"):
        read_strategy(path)
    path.write_bytes("phases: [{name: caf\u00e9, goal: b}]\n".encode("latin-1"))
    with pytest.raises(InvalidConfig, match=r"big.yaml: not valid UTF-8 \(byte 19\)"):
        read_strategy(path)


@pytest.mark.parametrize("line, field, expected", [("title: 007", "title", "007"), ("title: 1_000", "title", "1_000"),
                                                   ("title: .nan", "title", ".nan"), ("setting: 4.10", "setting", "4.10"),
                                                   ("name: 007", "name", "007")])
def test_a_text_field_yaml_reads_as_a_number_keeps_the_text_as_written(tmp_path, line, field, expected):
    """`title: 007` is the number 7 to YAML: the title is what was written, not the number's digits."""
    path = tmp_path / "s.yaml"
    path.write_text(CAST.replace("name: s\n", "") + ("" if field == "name" else "name: s\n") + line + "\nprompt: x\n")
    assert getattr(load_scene(path), field) == expected


def test_a_listed_slug_yaml_reads_as_a_number_keeps_its_digits(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: s\nprompt: x\ncharacters: [ann, 0100]\ninitial_speaker: 0100\n")
    scene = load_scene(path)
    assert (scene.characters, scene.initial_speaker) == (["ann", "0100"], "0100")


@pytest.mark.parametrize("line, where", [("limits: {max_beats: yes}", "s.yaml:3: limits.max_beats"),
                                         ("seed: true", "s.yaml:3: seed"), ("pace: on", "s.yaml:3: pace")])
def test_a_number_field_given_a_boolean_is_refused_naming_its_line(tmp_path, capsys, line, where):
    """`max_beats: yes` would play one beat: a number field given yes/no/on/off/true/false is refused."""
    (tmp_path / "s.yaml").write_text(CAST + line + "\nprompt: A scene.\n")
    assert main(["--batch", str(tmp_path / "s.yaml"), "--characters-dir", str(CHARACTERS)]) == 2
    assert f"{where}: a number is needed, not '{line.split(': ')[-1].rstrip('}')}'" in capsys.readouterr().err


@pytest.mark.parametrize("line, read_as", [("title: No", "a boolean"), ("setting: 2020-01-01", "a date")])
def test_a_text_field_yaml_reads_as_a_boolean_or_date_says_to_quote_it(tmp_path, line, read_as):
    (tmp_path / "s.yaml").write_text(CAST + line + "\nprompt: x\n")
    with pytest.raises(InvalidConfig, match=f"s.yaml:3: {line.split(':')[0]}: .*YAML reads it as {read_as}: put the text "
                                            "in quotes"):
        load_scene(tmp_path / "s.yaml")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f"])
def test_a_control_character_in_a_scene_is_refused_naming_its_line_and_column(tmp_path, char):
    path = tmp_path / "s.yaml"
    path.write_text(CAST + f"prompt: A scene.\nsetting: An {char}office\n")
    with pytest.raises(InvalidConfig) as caught:
        load_scene(path)
    assert caught.value.message == (f"{path}:4:13: setting: invalid YAML: the control character U+{ord(char):04X} is "
                                    "not allowed in YAML; remove it")


def test_a_key_of_half_a_megabyte_is_named_by_its_start_not_echoed_whole(tmp_path, capsys):
    """YAML refuses a key over 1,024 characters; the refusal named the key it was near, all of it: a
    scene file with a 500,000-character key printed a 500 KB line on stderr."""
    path = tmp_path / "long-key.yaml"
    path.write_text("name: t\nprompt: p\ncharacters: [ann, ben]\n" + "k" * 500_000 + ": 1\n")
    assert main(["--batch", str(path)]) == 2
    err = capsys.readouterr().err
    assert "invalid YAML" in err and "k" * 80 + "…" in err and len(err) < 1_000, len(err)


def test_a_run_folder_named_with_an_escape_and_a_line_break_is_named_on_one_clean_line(a_run, tmp_path, capsys):
    """A folder received from someone else (or `--out` typed so) named `e<ESC>[31mx<LF>DIRECTOR NOTE: y`:
    `metrics` printed the escape raw to the terminal and `audit` began a line of its own with the name's
    second line."""
    run = tmp_path / "e\x1b[31mx\nDIRECTOR NOTE: y"
    shutil.copytree(a_run, run)
    for command in (["metrics", str(run)], ["audit", str(run)]):
        main(command)
        out = capsys.readouterr().out
        assert "\x1b" not in out and not any(line.startswith("DIRECTOR NOTE") for line in out.splitlines()), out
        assert "ex DIRECTOR NOTE: y" in out


def test_front_matter_of_too_many_values_is_refused_in_words_that_read(tmp_path):
    """It said "the front matter's the file holds more than 50,000 values"."""
    folder = tmp_path / "characters"
    folder.mkdir()
    (folder / "many.md").write_text("---\nname: Many\n" + "".join(f"k{i}: v\n" for i in range(30_000)) + "---\nBody.\n")
    with pytest.raises(CharacterLoadError) as caught:
        load_character("many", [folder])
    assert ": the front matter holds more than 50,000 values" in caught.value.message, caught.value.message
    assert caught.value.message.endswith("is it the right file?")
