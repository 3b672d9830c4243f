"""`promptdesk --batch --collaborate GOAL ...` and `--batch` on a `format: collaborate` scene file."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.cli.main import main
from helpers import SCENES

FAIRY = "Write a 2‑paragraph fairy tale—Claude drafts, GPT edits, alternate until done (≤4 rounds)."


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    """No provider key: the default pair stays on the offline improviser (and the network is never used)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def batch(capsys, *args: str) -> tuple[int, str]:
    code = main(["--batch", *args])
    return code, capsys.readouterr().err


def test_a_collaboration_runs_headless_from_flags_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    code, err = batch(capsys, "--collaborate", FAIRY, "--participants", "gpt,claude", "--max-rounds", "4",
                      "--first", "claude", "--isolation", "b", "--coordinator", "C", "--seed", "1", "--out", str(out))
    assert code == 0, err
    assert '[round 1] Claude "' in err and "[round 1] [HANDOFF → GPT: " in err
    assert "[ROUND" not in err, "a roundtable line in a collaboration's output"
    assert "Scene closed: final (goal achieved) after 4 rounds" in err
    meta = json.loads((out / "metadata.json").read_text())
    assert (meta["format"], meta["maxRounds"], meta["reason"]) == ("collaborate", 4, "final")
    assert "phase" not in meta and "consensusCount" not in meta
    assert (out / "notes.md").read_text().splitlines()[0].startswith("Isolation:        (b)")
    notice = "gpt \u2192 offline improviser: OPENAI_API_KEY is not set; map it with --cast gpt=\u2026"
    assert notice in err and notice in (out / "notes.md").read_text()


def test_the_cap_from_the_flags_bounds_the_rounds(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = batch(capsys, "--collaborate", "Plan a multi-step move.", "--max-rounds", "2",
                      "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 0 and "Scene closed: cap" in err and "after 2 rounds" in err


def test_a_goal_typed_in_bytes_that_are_not_utf8_is_mended_not_a_traceback(tmp_path, capsys, monkeypatch):
    """A shell in Latin-1 passes `caf\xe9` as a byte Python reads as a lone surrogate: the run ended in a
    traceback (`surrogates not allowed`) writing its record; the goal is mended (U+FFFD) as a model's is."""
    monkeypatch.chdir(tmp_path)
    code, err = batch(capsys, "--collaborate", "Write a caf\udce9 menu.", "--max-rounds", "1",
                      "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 0 and "Traceback" not in err, err
    assert "Write a caf\ufffd menu." in (tmp_path / "run" / "events.jsonl").read_text(encoding="utf-8")


def test_the_two_choices_are_still_required(tmp_path, capsys):
    code, err = batch(capsys, "--collaborate", FAIRY, "--isolation", "b", "--out", str(tmp_path / "run"))
    assert code == 2 and "--coordinator A|B|C" in err


def test_batch_without_a_scene_needs_collaborate(capsys):
    code, err = batch(capsys, "--isolation", "b", "--coordinator", "C")
    assert code == 2 and "--batch needs a scene file or a scene's name" in err and "--collaborate GOAL" in err


def test_a_first_speaker_outside_the_participants_is_named(tmp_path, capsys):
    code, err = batch(capsys, "--collaborate", FAIRY, "--first", "bard", "--isolation", "b", "--coordinator", "C",
                      "--out", str(tmp_path / "run"))
    assert code == 2 and "collaborate.first 'bard' is not in characters (gpt, claude)" in err


def test_a_missing_participant_without_a_builtin_persona_fails_fast(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = batch(capsys, "--collaborate", FAIRY, "--participants", "gpt,nobody", "--isolation", "b",
                      "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 2 and "CHARACTER_LOAD_ERROR: Character 'nobody' not found" in err


def test_a_collaborate_scene_file_runs_and_takes_flag_overrides(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = batch(capsys, str(SCENES / "fairy-tale.yaml"), "--isolation", "a", "--coordinator", "C",
                      "--seed", "1", "--out", str(tmp_path / "one"))
    assert code == 0 and "Scene closed: final" in err
    code, err = batch(capsys, str(SCENES / "hiking-plan.yaml"), "--max-rounds", "1", "--isolation", "a",
                      "--coordinator", "C", "--out", str(tmp_path / "two"))
    assert code == 0 and "Scene closed: cap" in err and "after 1 round," in err
    assert "[round 1] scene closed: cap" in err, "a collaboration's lines are placed by round, its close too"


def test_collaborate_flags_do_not_apply_to_a_scene_format_file(tmp_path, capsys):
    code, err = batch(capsys, str(SCENES / "the-apology.yaml"), "--max-rounds", "2", "--isolation", "a",
                      "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 2 and "apply to `format: collaborate` scenes" in err
    assert "cap its beats with `limits: {max_beats: N}` in the scene file" in err
    code, err = batch(capsys, str(SCENES / "roundtable-debate.yaml"), "--max-rounds", "2", "--isolation", "a",
                      "--coordinator", "C", "--out", str(tmp_path / "table"))
    assert code == 2 and "cap its rounds with `roundtable: {max_rounds: N}` in the scene file" in err


def test_a_scene_file_and_a_collaborate_goal_together_are_refused(tmp_path, capsys):
    code, err = batch(capsys, str(SCENES / "fairy-tale.yaml"), "--collaborate", FAIRY, "--isolation", "a",
                      "--coordinator", "C")
    assert code == 2 and "not both" in err


@pytest.mark.parametrize("isolation", ["a", "b"])
def test_the_same_seed_gives_the_same_record_byte_for_byte(tmp_path, capsys, monkeypatch, isolation):
    """On the offline improviser a collaboration is a run like any other: its session id, call ids
    and `ts` come from the seed and the simulated clock, never from the machine."""
    monkeypatch.chdir(tmp_path)
    records = []
    for out in ("first", "second"):
        code, err = batch(capsys, "--collaborate", "Refactor `def add(x): global total` so it is pure.",
                          "--isolation", isolation, "--coordinator", "C", "--seed", "7", "--out", str(tmp_path / out))
        assert code == 0, err
        records.append((tmp_path / out / "events.jsonl").read_bytes())
    assert records[0] == records[1]
    events = [json.loads(line) for line in records[0].splitlines()]
    assert len({e["session_id"] for e in events if "session_id" in e}) == 1
    calls = [e["call_id"] for e in events if e["type"] == "agent_call"]
    assert len(calls) >= 3 and len(set(calls)) == len(calls)
    other = (batch(capsys, "--collaborate", "Refactor `def add(x): global total` so it is pure.", "--isolation",
                   isolation, "--coordinator", "C", "--seed", "8", "--out", str(tmp_path / "third")), tmp_path / "third")
    assert other[0][0] == 0
    third = [json.loads(line) for line in other[1].joinpath("events.jsonl").read_text().splitlines()]
    assert {e["session_id"] for e in third if "session_id" in e}.isdisjoint(e["session_id"] for e in events
                                                                            if "session_id" in e)


def test_one_participant_is_a_single_call_or_nothing(tmp_path, capsys, monkeypatch):
    """Two assistants hand the work back and forth; one alone is a single call (one round), never
    rounds of handing the work to itself."""
    monkeypatch.chdir(tmp_path)
    code, err = batch(capsys, "--collaborate", FAIRY, "--participants", "gpt", "--isolation", "a",
                      "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 2 and "characters: one participant alone is a single call" in err and "--max-rounds 1" in err
    assert not (tmp_path / "run").exists()
    code, err = batch(capsys, "--collaborate", FAIRY, "--participants", "gpt", "--max-rounds", "1", "--isolation", "a",
                      "--coordinator", "C", "--out", str(tmp_path / "single"))
    assert code == 0 and "Scene closed: answered (single call) after 1 round," in err, \
        "said as the console says it, not `cap (goal not achieved)`"
    assert "HANDOFF" not in err and "scene closed: no_handoff" in err, "a single call hands the work to no one"
    assert '"type": "handoff"' not in (tmp_path / "single" / "events.jsonl").read_text()
    system = json.loads((tmp_path / "single" / "prompts.jsonl").read_text().splitlines()[0])["request"]["system"]
    assert "in a single call: no other assistant takes part" in system, "told it answers alone"
    assert "collaborating with another assistant" not in system and "include a concise `handoff`" not in system


@pytest.mark.parametrize("body,named", [
    ("characters: [gpt, claude]\n", "solo.yaml:1: goal: a collaboration needs a `goal`"),
    ("goal: '   '\ncharacters: [gpt, claude]\n", "solo.yaml:3: goal: a collaboration needs a `goal`"),
    ("goal: g\ncharacters: [gpt, claude]\ncollaborate:\n  max_rounds: true\n", "solo.yaml:6: collaborate.max_rounds: Input should be a valid integer (got True)"),
    ("goal: g\ncharacters: [gpt, claude]\ncollaborate:\n  window_items: yes\n", "solo.yaml:6: collaborate.window_items: Input should be a valid integer (got True)"),
])
def test_a_scene_files_mistake_is_named_by_file_line_and_field(tmp_path, capsys, monkeypatch, body, named):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "solo.yaml").write_text("name: solo\nformat: collaborate\n" + body)
    code, err = batch(capsys, "solo.yaml", "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 2 and named in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("role", ["A", "B"])
def test_the_notes_name_no_judge_a_collaboration_never_calls(tmp_path, capsys, monkeypatch, role):
    """The router acts on each envelope: roles A and B call no judge, and the record says so, and
    that the turns are taken one at a time."""
    monkeypatch.chdir(tmp_path)
    code, err = batch(capsys, "--collaborate", FAIRY, "--isolation", "a", "--coordinator", role, "--seed", "1",
                      "--out", str(tmp_path / "run"))
    assert code == 0, err
    notes = (tmp_path / "run" / "notes.md").read_text()
    assert "Coordinator judge" not in notes and "the coordinator role calls no judge in a collaboration" in notes
    assert "(collaborate, sequential turns)" in notes
    assert json.loads((tmp_path / "run" / "metadata.json").read_text())["turns"] == "sequential"
    assert not [line for line in (tmp_path / "run" / "prompts.jsonl").read_text().splitlines()
                if json.loads(line).get("purpose") not in ("envelope", None)]


def test_a_collaboration_is_recorded_taking_one_turn_at_a_time_whatever_turns_says(tmp_path, capsys, monkeypatch):
    """A scene turned into a collaboration (the console's wizard) keeps its `turns:`; what is recorded
    is how a collaboration plays."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pair.yaml").write_text("name: pair\nformat: collaborate\ngoal: g\nturns: parallel\n"
                                        "characters: [gpt, claude]\n")
    code, err = batch(capsys, "pair.yaml", "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 0, err
    assert json.loads((tmp_path / "run" / "metadata.json").read_text())["turns"] == "sequential"


@pytest.mark.parametrize("slug", ["router", "you", "user", "all"])
def test_a_participant_under_one_of_spec_001s_own_names_is_refused(tmp_path, capsys, monkeypatch, slug):
    """`router` and `you` are spec 001's senders, `user` the human's transcript role, `all` the
    audience of a reply without a handoff: a participant of that name would be taken for them."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "characters" / slug
    folder.mkdir(parents=True)
    (folder / "profile.md").write_text(f"# {slug.title()}\n\n## Background\n- a helper\n")
    (tmp_path / "pair.yaml").write_text(f"name: pair\nformat: collaborate\ngoal: g\ncharacters: [gpt, {slug}]\n")
    code, err = batch(capsys, "pair.yaml", "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"))
    assert code == 2 and f"pair.yaml:4: characters: '{slug}' is a name a collaboration keeps for itself" in err
