"""Spec 000/002's smaller requirements: the trade-off table with a headless refusal, the actor system
prompt read from `actor/system-prompt.md` (or the scene's own), the scene number in the transcript's
title, the journal prompt word for word, and the roundtable's stored `action:` keys."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from promptdesk.core.casting.choices import COORDINATOR, ISOLATION
from promptdesk.core.cli.main import main
from promptdesk import resources
from promptdesk.core.engine.briefing import JOURNAL_PROMPT
from promptdesk.core.engine.journals import entry_of
from promptdesk.core.record.prompt_log import read_requests
from helpers import CHARACTERS, ROOT, SCENES, example_scene, run_session
from in_child import in_child

APOLOGY = SCENES / "the-apology.yaml"


def flat(text: str) -> str:
    return " ".join(text.split())


def batch(*args: str) -> int:
    return main(["--batch", *args, "--quiet", "--journals", "none", "--characters-dir", str(CHARACTERS)])


@pytest.mark.parametrize("given", [["--isolation", "a"], ["--coordinator", "C"], []])
def test_a_headless_run_without_both_choices_prints_the_tradeoffs_with_its_refusal(given, capsys, tmp_path):
    assert batch(str(APOLOGY), *given, "--out", str(tmp_path / "run")) == 2
    err = flat(capsys.readouterr().err)
    assert "both pre-experiment choices are required" in err
    for choice in (ISOLATION, COORDINATOR):
        assert flat(choice.question) in err
        for option in choice.options:
            assert f"--{choice.name} {option.key} {flat(option.title)}" in err
            assert flat("Trade-off: " + option.tradeoff) in err
    assert not (tmp_path / "run").exists()


def system_prompts(run_dir: Path) -> list[str]:
    return [r["request"]["system"] for r in read_requests(run_dir) if r["purpose"] == "turn"]


def test_the_shipped_actor_system_prompt_is_read_from_its_file():
    shipped = resources.system_prompt_file()
    assert shipped.resolve() == ROOT / "actor" / "system-prompt.md"
    text = shipped.read_text(encoding="utf-8").strip()
    assert text.startswith("You are an actor.") and "[TO: <name>, TONE: <emotion>]" in text


async def test_each_briefing_opens_with_the_actor_system_prompt_file(tmp_path, monkeypatch):
    shipped = tmp_path / "shipped.md"
    shipped.write_text("You are an actor of the shipped file, edited.\n")
    monkeypatch.setattr("promptdesk.resources.system_prompt_file", lambda: shipped)
    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 2}), isolation="a", coordinator="C")
    prompts = system_prompts(run.dir)
    assert prompts and all(p.startswith("You are an actor of the shipped file, edited.\n\n## YOUR CHARACTER") for p in prompts)


def test_a_scene_names_its_own_actor_system_prompt_file(tmp_path):
    folder = tmp_path / "scenes"
    folder.mkdir()
    data = yaml.safe_load(APOLOGY.read_text())
    data.update(system_prompt="prompts/stage.md", limits={**data.get("limits", {}), "max_beats": 2})
    (folder / "prompts").mkdir()
    (folder / "prompts" / "stage.md").write_text("  You are an actor on a small stage.  \n")
    scene = folder / "apology.yaml"
    scene.write_text(yaml.safe_dump(data))
    assert batch(str(scene), "--isolation", "b", "--coordinator", "C", "--out", str(tmp_path / "run")) == 0
    prompts = system_prompts(tmp_path / "run")
    assert prompts and all(p.startswith("You are an actor on a small stage.\n\n## YOUR CHARACTER") for p in prompts)


@pytest.mark.parametrize("content", [None, "", b"\xff\xfe not utf-8"])
def test_an_unreadable_or_empty_system_prompt_is_refused_before_anything_is_recorded(content, tmp_path, capsys):
    data = yaml.safe_load(APOLOGY.read_text())
    data["system_prompt"] = "actor.md"
    if content is not None:
        (tmp_path / "actor.md").write_bytes(content if isinstance(content, bytes) else content.encode())
    scene = tmp_path / "apology.yaml"
    scene.write_text(yaml.safe_dump(data))
    assert batch(str(scene), "--isolation", "b", "--coordinator", "C", "--out", str(tmp_path / "run")) == 2
    err = capsys.readouterr().err
    assert "INVALID_CONFIG" in err and str(tmp_path / "actor.md") in err and "system_prompt:" in err
    assert not (tmp_path / "run").exists()


def transcript_title(run_dir: Path) -> str:
    return (run_dir / "transcript.md").read_text().splitlines()[0]


def test_the_transcript_title_numbers_the_scene_by_its_runs_else_by_its_number(tmp_path):
    assert batch(str(APOLOGY), "--isolation", "b", "--coordinator", "C", "--max-beats", "2") == 0
    assert batch(str(APOLOGY), "--isolation", "b", "--coordinator", "C", "--max-beats", "2") == 0
    runs = sorted(Path("runs").iterdir())
    assert [transcript_title(r) for r in runs] == ["# Scene 001 — The Apology", "# Scene 002 — The Apology"]
    data = yaml.safe_load(APOLOGY.read_text()) | {"number": 7}
    numbered = tmp_path / "numbered.yaml"
    numbered.write_text(yaml.safe_dump(data))
    assert batch(str(numbered), "--isolation", "b", "--coordinator", "C", "--max-beats", "2",
                 "--out", str(tmp_path / "seven")) == 0
    assert transcript_title(tmp_path / "seven") == "# Scene 007 — The Apology"
    assert batch(str(APOLOGY), "--isolation", "b", "--coordinator", "C", "--max-beats", "2",
                 "--out", str(tmp_path / "out")) == 0
    assert transcript_title(tmp_path / "out") == "# The Apology"


SPEC_000_JOURNAL_PROMPT = (
    "The scene has ended. Step partly back — not out of the character, but into reflective mode. Write a brief "
    "journal entry (200–500 words) in the character's first-person voice about what happened in the scene, what "
    "surprised them, what they're left thinking, what they might do or feel differently next time. This will "
    "become part of the character's memory for the next scene they're in.")


def test_the_journal_prompt_is_spec_000s_word_for_word():
    assert JOURNAL_PROMPT == SPEC_000_JOURNAL_PROMPT


def test_a_journal_reply_in_the_turn_form_keeps_its_speech_and_never_its_thinking():
    assert entry_of("  Dear diary, today was long.  ") == "Dear diary, today was long."
    assert entry_of("<thinking>secret plan</thinking>\n<speech>Dear diary, it went well.</speech>") == \
        "Dear diary, it went well."
    broken = entry_of("<thinking>secret plan</thinking> Dear diary, <speech>it went well.")
    assert "secret plan" not in broken and "<" not in broken and "Dear diary" in broken


@pytest.mark.parametrize("reply", [
    "<think>I must not say the ring is in the well.</think>\nDear diary, today I met Bob.",
    "<thinking type=\"inner\">I must not say the ring is in the well.</thinking>Dear diary, today I met Bob.",
    "<reasoning>I must not say the ring is in the well.</reasoning> Dear diary, <speech>today I met Bob.",
    "<thinking>x</thinking>Dear diary, today I met Bob.\n```\nnote: I must not say the ring is in the well.\n```",
    "Dear diary, today I met Bob. <think>I must not say the ring is in the well",
    "I must not say the ring is in the well.\n</think>\n\nDear diary, today I met Bob.",  # the template opened it
])
def test_a_journal_reply_never_keeps_what_the_protocol_holds_private(reply):
    """A reasoning model's `<think>` preamble, any other tag's inside, a fence: private, as in a turn."""
    entry = entry_of(reply)
    assert "ring" not in entry and "<" not in entry
    assert "Dear diary" in entry and "today I met Bob" in entry


async def test_a_run_sends_the_verbatim_journal_prompt(tmp_path):
    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 3}), isolation="a",
                            coordinator="C", journals=tmp_path / "journals")
    journal_requests = [r for r in read_requests(run.dir) if r["purpose"] == "journal"]
    assert journal_requests
    for request in journal_requests:
        asked = request["request"]["messages"][-1]["content"]
        assert asked.endswith(SPEC_000_JOURNAL_PROMPT) and "no tags" not in asked


def test_the_roundtables_stored_rounds_carry_their_action_keys(tmp_path):
    out = tmp_path / "room"
    assert batch(str(SCENES / "roundtable-debate.yaml"), "--isolation", "a", "--coordinator", "C", "--out", str(out)) == 0
    session = yaml.safe_load((out / "session.yaml").read_text())
    rounds = session["rounds"]
    assert rounds
    for one in rounds:
        assert one["question"]["action"] == "question" and list(one["question"])[0] == "action"
        assert one["synthesis"]["action"] == "synthesis" and list(one["synthesis"])[0] == "action"


@pytest.mark.parametrize("named", ["/etc/hostname", "~/.bashrc", "../secret.md", "link.md"])
def test_a_system_prompt_outside_the_scene_folder_is_refused_naming_the_field(named, tmp_path, capsys):
    """Every briefing opens with the system prompt file and goes to a model: a scene file handed to
    someone may not name another of their files (absolute, `~`, `..`, or a symlink leading out)."""
    folder = tmp_path / "handed"
    folder.mkdir()
    (tmp_path / "secret.md").write_text("sk-private-key-of-the-user\n")
    (folder / "link.md").symlink_to(tmp_path / "secret.md")
    data = yaml.safe_load(APOLOGY.read_text())
    data["system_prompt"] = named
    scene = folder / "apology.yaml"
    scene.write_text(yaml.safe_dump(data))
    assert batch(str(scene), "--isolation", "b", "--coordinator", "C", "--out", str(tmp_path / "run")) == 2
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate(scene.read_text().splitlines(), 1) if text.startswith("system_prompt:"))
    assert f"apology.yaml:{line}: system_prompt: {named!r} is outside" in err
    assert "outside the scene file's folder" in err and "copy the file into that folder" in err
    assert not (tmp_path / "run").exists()


def test_a_system_prompt_that_is_not_a_regular_file_is_refused_at_once(tmp_path, capsys):
    """A FIFO (a tar can carry one) or a device would block or never end: refused before it is opened."""
    import os

    os.mkfifo(tmp_path / "actor.md")
    data = yaml.safe_load(APOLOGY.read_text())
    data["system_prompt"] = "actor.md"
    scene = tmp_path / "apology.yaml"
    scene.write_text(yaml.safe_dump(data))
    outcome = in_child(lambda: batch(str(scene), "--isolation", "b", "--coordinator", "C", "--out",
                                     str(tmp_path / "run")), seconds=10)
    assert outcome.value == "2", outcome
    assert "is not a regular file" in outcome.stderr
