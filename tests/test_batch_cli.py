"""`promptdesk --batch` end to end: exit codes, messages that name what to fix, Ctrl-C."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from helpers import CHARACTERS, ROOT, SCENES

APOLOGY = str(SCENES / "the-apology.yaml")


@pytest.fixture
def cast_dir(tmp_path) -> Path:
    """A private copy of the example characters, owned by the user (no examples marker): a run
    appends to their journals."""
    copy = tmp_path / "characters"
    shutil.copytree(CHARACTERS, copy, ignore=shutil.ignore_patterns(".promptdesk-examples"))
    return copy


def batch(capsys, *args: str) -> tuple[int, str]:
    code = main(["--batch", *args])
    return code, capsys.readouterr().err


def test_a_batch_run_closes_the_scene_and_names_the_run_folder(tmp_path, capsys, cast_dir, monkeypatch):
    monkeypatch.delenv("PROMPTDESK_JOURNAL_STORE")  # the default store: beside the scene (a copy in tmp_path)
    out = tmp_path / "run"
    scene = shutil.copy(APOLOGY, tmp_path)
    code, err = batch(capsys, scene, "--isolation", "b", "--coordinator", "C", "--seed", "3",
                      "--max-beats", "6", "--out", str(out), "--characters-dir", str(cast_dir))
    assert code == 0
    assert f"Run folder: {out}" in err
    assert "[beat 0] Alice" in err
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["isolation"] == "b" and meta["coordinator"] == "C"
    notes = (out / "notes.md").read_text()
    assert notes.startswith("Isolation:        (b)")
    assert "Alice (alice): provider offline, model improviser" in notes and "not a language model" in notes
    assert "— The Apology" in (cast_dir / "alice" / "journal.md").read_text()
    assert "— The Apology" in (tmp_path / ".promptdesk" / "journals" / "charlie.md").read_text()


def test_batch_refuses_to_start_without_both_choices(tmp_path, capsys):
    code, err = batch(capsys, APOLOGY, "--out", str(tmp_path / "run"))
    assert code == 2
    assert "--isolation" in err and "--coordinator" in err
    assert not (tmp_path / "run").exists()


def test_batch_refuses_to_start_without_the_coordinator_choice(tmp_path, capsys):
    code, err = batch(capsys, APOLOGY, "--isolation", "a", "--out", str(tmp_path / "run"))
    assert code == 2 and "--coordinator" in err and "INVALID_CONFIG" in err


def test_an_unknown_character_fails_fast_with_the_paths_searched(tmp_path, capsys):
    scene = tmp_path / "s.yaml"
    scene.write_text("name: lost\nprompt: A scene.\ncharacters: [alice, nobody-here]\n")
    code, err = batch(capsys, str(scene), "--isolation", "a", "--coordinator", "C",
                      "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run"))
    assert code == 2
    assert "CHARACTER_LOAD_ERROR" in err and "nobody-here" in err
    assert str(CHARACTERS / "nobody-here") in err
    assert not (tmp_path / "run").exists()


def test_bad_yaml_names_the_file_and_the_line(tmp_path, capsys):
    scene = tmp_path / "broken.yaml"
    scene.write_text("name: broken\nprompt: A scene.\ncharacters: [alice, bob\nturns: parallel\n")
    code, err = batch(capsys, str(scene), "--isolation", "a", "--coordinator", "C")
    assert code == 2 and "INVALID_CONFIG" in err and "broken.yaml" in err
    assert any(f":{n}" in err for n in (2, 3, 4))


def test_a_bad_field_names_the_file_the_field_and_the_line(tmp_path, capsys):
    scene = tmp_path / "bad.yaml"
    scene.write_text("name: bad\ncharacters: [alice, bob]\nlimits:\n  max_beats: 0\n")
    code, err = batch(capsys, str(scene), "--isolation", "a", "--coordinator", "C")
    assert code == 2 and "bad.yaml:4" in err and "limits.max_beats" in err


@pytest.mark.parametrize("slug", ["../etc", "a/b", "Alice", "a b", "a\x00b", ""])
def test_a_bad_character_slug_is_refused_before_any_path_is_built(tmp_path, capsys, slug):
    scene = tmp_path / "s.yaml"
    scene.write_text(f"name: s\nprompt: A scene.\ncharacters: [alice, {json.dumps(slug)}]\n")
    code, err = batch(capsys, str(scene), "--isolation", "a", "--coordinator", "C")
    assert code == 2 and "INVALID_CONFIG" in err and "a slug is" in err and "characters[1]" in err


def test_a_missing_scene_file_is_invalid_input(tmp_path, capsys):
    code, err = batch(capsys, str(tmp_path / "nope.yaml"), "--isolation", "a", "--coordinator", "C")
    assert code == 2 and "nope.yaml" in err


def test_a_bad_flag_value_exits_2_naming_the_flag(capsys):
    assert main(["--batch", APOLOGY, "--isolation", "c", "--coordinator", "C"]) == 2
    assert "--isolation" in capsys.readouterr().err


def test_ctrl_c_stops_the_scene_and_every_file_is_still_written(tmp_path, cast_dir):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "promptdesk.core.cli.main", "--batch", APOLOGY, "--isolation", "b", "--coordinator", "C",
         "--out", str(out), "--characters-dir", str(cast_dir), "--seed", "1", "--max-beats", "40"],
        cwd=tmp_path, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    for line in proc.stderr:
        if "[beat 1]" in line or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert "Scene closed: stop" in rest
    records = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [r["type"] for r in records][-1] == "close" and records[-1]["reason"] == "stop"
    assert any(r["type"] == "stop" for r in records)
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json", "notes.md"):
        assert (out / name).is_file()


def test_the_help_and_the_offline_path_import_no_sdk_and_no_textual():
    code = ("import sys, promptdesk.core.cli.main, promptdesk.core.cli.batch, promptdesk.core.casting.build, promptdesk.core.improv.provider\n"
            "bad = [m for m in ('textual', 'rich', 'anthropic', 'openai') if m in sys.modules]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("flags, named", [(["--model", "gpt-4o"], "--model gpt-4o"),
                                          (["--provider", "offline", "--model", "gpt-4o"], "--model gpt-4o"),
                                          (["--base-url", "http://127.0.0.1:9/v1"], "--base-url http://127.0.0.1:9/v1")])
def test_a_model_or_server_for_a_cast_all_on_the_improviser_is_refused_not_recorded(tmp_path, capsys, flags, named):
    """The improviser takes no model and no server: a run would ignore the flag while its notes said
    `model gpt-4o`. Nothing is written."""
    code, err = batch(capsys, APOLOGY, "--isolation", "a", "--coordinator", "C", "--characters-dir", str(CHARACTERS),
                      "--out", str(tmp_path / "run"), *flags)
    assert code == 2 and named in err and "--provider" in err and "offline improviser" in err, err
    assert not (tmp_path / "run").exists()


def test_a_model_flag_reaches_the_actors_not_on_the_improviser(tmp_path, capsys):
    """A mixed cast: `--model` is for the actor on a real provider; the improviser's notes say improviser."""
    scene = tmp_path / "mixed.yaml"
    scene.write_text(Path(APOLOGY).read_text() + "\ncast:\n  alice: {provider: openai-compatible, "
                     "base_url: 'http://127.0.0.1:9/v1', max_retries: 0, timeout_s: 1}\n")
    code, err = batch(capsys, str(scene), "--isolation", "a", "--coordinator", "C", "--characters-dir",
                      str(CHARACTERS), "--out", str(tmp_path / "run"), "--model", "llama3", "--max-beats", "1",
                      "--quiet")
    notes = (tmp_path / "run" / "notes.md").read_text()
    assert "(alice): provider openai-compatible, model llama3" in notes
    assert "(bob): provider offline, model improviser" in notes, notes


@pytest.mark.parametrize("how, hint", [([str(SCENES / "roundtable-free.yaml")], "roundtable: {max_rounds: N}"),
                                       (["--collaborate", "Plan a picnic"], "--max-rounds")])
def test_max_beats_for_a_format_counted_in_rounds_is_said_to_be_ignored(tmp_path, capsys, how, hint):
    """A script may pass `--max-beats` to every format: a format played in rounds runs, and says
    (stderr and `notes.md`) that the flag does not bound it and what does."""
    code, err = batch(capsys, *how, "--isolation", "a", "--coordinator", "C", "--max-beats", "2",
                      "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run"), "--quiet")
    assert code == 0 and "--max-beats 2 ignored" in err and hint in err, err
    assert "--max-beats 2 ignored" in (tmp_path / "run" / "notes.md").read_text()


def test_on_escalate_for_a_format_that_never_escalates_is_refused_not_ignored(tmp_path, capsys):
    code, err = batch(capsys, APOLOGY, "--isolation", "a", "--coordinator", "C", "--on-escalate", "accept",
                      "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run"))
    assert code == 2 and "--on-escalate" in err and "roundtable" in err, err
    assert "a scene run never escalates" in err, err
    assert not (tmp_path / "run").exists()
    code, err = batch(capsys, "--collaborate", "Plan a picnic", "--isolation", "a", "--coordinator", "C",
                      "--on-escalate", "accept", "--out", str(tmp_path / "run"))
    assert code == 2 and "a collaborate run never escalates" in err, err


@pytest.mark.parametrize("limit", [["--max-beats", "3"], []])
def test_a_world_event_after_the_last_beat_is_named_before_the_run(tmp_path, capsys, limit):
    scene = tmp_path / "late.yaml"
    scene.write_text("name: late\nprompt: Talk.\ncharacters: [alice, bob]\njournals: none\n"
                     "events:\n  - {at_beat: 1, text: The phone rings}\n  - {at_beat: 7, text: The lights go out}\n"
                     + ("" if limit else "limits: {max_beats: 4}\n"))
    code, err = batch(capsys, str(scene), "--isolation", "a", "--coordinator", "C", "--characters-dir",
                      str(CHARACTERS), "--out", str(tmp_path / "run"), "--quiet", *limit)
    assert code == 0, err
    assert "The lights go out" in err and "beat 7" in err and "after the scene's last beat" in err
    assert "The phone rings" not in err
    assert "The lights go out" in (tmp_path / "run" / "notes.md").read_text()


def test_quiet_still_says_which_journal_entries_were_not_kept(tmp_path, capsys, cast_dir):
    """`--quiet` prints the summary only, but a journal entry that could not be added to a character's
    journal (a read-only working folder, a full disk) is not dropped from view: a NOTICE names it."""
    (cast_dir / "bob" / "journal.md").unlink(missing_ok=True)
    (cast_dir / "bob" / "journal.md").mkdir()  # appending to it fails, as a folder that cannot be written does
    code, err = batch(capsys, APOLOGY, "--isolation", "b", "--coordinator", "C", "--seed", "3", "--max-beats", "2",
                      "--characters-dir", str(cast_dir), "--out", str(tmp_path / "run"), "--quiet")
    assert code == 0
    notices = [line for line in err.splitlines() if line.startswith("NOTICE:")]
    assert len(notices) == 1 and "Bob's journal entry is in this run's journals/ but could not be added" in notices[0], err
    assert "[beat" not in err, "quiet prints no turn"


def test_a_long_late_world_event_is_quoted_cut_at_a_word_and_said_to_be_cut(tmp_path, capsys):
    """A world event of more than 80 characters after the last beat was quoted cut mid-word with nothing to say
    so (`… leave the building at on'`), as if that were its text."""
    text = "The power fails and a flood siren sounds; everyone must leave the building at once, by the back stairs."
    scene = tmp_path / "late.yaml"
    scene.write_text(f"name: late\nprompt: Talk.\ncharacters: [alice, bob]\njournals: none\n"
                     f"events:\n  - {{at_beat: 9, text: '{text}'}}\n")
    code, err = batch(capsys, str(scene), "--isolation", "a", "--coordinator", "C", "--characters-dir",
                      str(CHARACTERS), "--out", str(tmp_path / "run"), "--quiet", "--max-beats", "2")
    assert code == 0, err
    assert "leave the building at…'" in err and "at on" not in err, err
