"""Journals: a run killed during its journal step is resumed by writing the missing entries; a journal
heading holds no escape code; `--journals` must name a folder."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from promptdesk.core.casting.resume import prepare
from promptdesk.core.cli.main import main
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.recorder import read_events
from helpers import CHARACTERS, SCENES, example_scene, make_scene, run_session

DERIVED = ("events.json", "transcript.md", "transcript.txt", "metadata.json")


async def journaled_run(tmp_path: Path, **scene):
    """The Apology (3 beats), every journal in its own store under tmp_path, appended by the run."""
    store = tmp_path / "store"
    run = await run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 3}, **scene), isolation="b",
                            coordinator="C", write_character_journals=True, journals=str(store))
    return run, store


def kill_in_journal_step(run_dir: Path, entries_kept: int, torn: bool = False) -> list[dict]:
    """Leave the folder as a kill -9 during the journal step would: the log ends after the close and
    `entries_kept` journal events (then, if `torn`, half a line), prompts.jsonl holds the journal
    requests only if an entry was kept (the step sends them all at once), and no derived file was written. Returns the kept entries."""
    lines = (run_dir / "events.jsonl").read_text().split("\n")[:-1]
    records = [json.loads(line) for line in lines]
    close = next(i for i, r in enumerate(records) if r["type"] == "close")
    journal_at = [i for i, r in enumerate(records) if r["type"] == "journal"]
    end = journal_at[entries_kept - 1] + 1 if entries_kept else close + 1
    kept = "".join(line + "\n" for line in lines[:end])
    (run_dir / "events.jsonl").write_text(kept + (lines[end][:30] if torn else ""))
    if not entries_kept:  # killed before the step asked anyone; once it asks, it asks everyone at once
        prompts = (run_dir / "prompts.jsonl").read_text().split("\n")[:-1]
        asked = [i for i, line in enumerate(prompts) if json.loads(line).get("purpose") == "journal"]
        (run_dir / "prompts.jsonl").write_text("".join(line + "\n" for line in prompts[:asked[0]]))
    for name in DERIVED:
        (run_dir / name).unlink()
    shutil.rmtree(run_dir / "journals")
    return [records[i] for i in journal_at[:entries_kept]]


def entries(run_dir: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event in read_events(run_dir):
        if event.type == "journal":
            found.setdefault(event.from_, []).append(event.text)
    return found


async def resume(run_dir: Path):
    session = prepare(run_dir)
    session.clock = VirtualClock()
    return await session.run()


async def test_a_kill_after_the_close_and_before_any_entry_resumes_and_writes_every_entry(tmp_path, capsys):
    whole, store = await journaled_run(tmp_path)
    assert sorted(entries(whole.dir)) == ["alice", "bob", "charlie"]
    kill_in_journal_step(whole.dir, 0)
    shutil.rmtree(store)  # the store as it was before the journal step: nothing appended yet
    assert await asyncio.to_thread(main, ["resume", str(whole.dir), "--quiet"]) == 0
    assert f"Resuming {whole.dir} in its journal step." in capsys.readouterr().err
    written = entries(whole.dir)
    assert sorted(written) == ["alice", "bob", "charlie"] and all(len(v) == 1 for v in written.values())
    for slug, [entry] in written.items():
        journal = (store / f"{slug}.md").read_text()
        assert journal.count("— The Apology") == 1 and entry.strip()[:80] in journal
        assert (whole.dir / "journals" / f"{slug}.md").is_file()
    events = read_events(whole.dir)
    assert [e.type for e in events].count("close") == 1
    [seam] = [e for e in events if e.type == "resume"]
    assert seam.reason == "journals" and "Alice" in seam.text
    assert all((whole.dir / name).is_file() for name in DERIVED)
    assert json.loads((whole.dir / "metadata.json").read_text())["reason"] == "max_beats_exceeded"
    report = audit_run(whole.dir)
    assert report.clean, (report.leaks, report.problems)


async def test_a_kill_mid_step_writes_only_what_is_missing_and_appends_a_recorded_entry_once(tmp_path):
    whole, store = await journaled_run(tmp_path)
    first, second = kill_in_journal_step(whole.dir, 2, torn=True)
    missing = ({"alice", "bob", "charlie"} - {first["from"], second["from"]}).pop()
    (store / f"{second['from']}.md").unlink()  # killed after recording its entry, before appending it
    (store / f"{missing}.md").unlink()
    asked_before = (whole.dir / "prompts.jsonl").read_text().count('"purpose": "journal"')
    result = await resume(whole.dir)
    assert result.close_reason == "max_beats_exceeded"
    written = entries(whole.dir)
    assert sorted(written) == ["alice", "bob", "charlie"] and all(len(v) == 1 for v in written.values())
    assert written[first["from"]] == [first["text"]] and written[second["from"]] == [second["text"]]
    assert (whole.dir / "prompts.jsonl").read_text().count('"purpose": "journal"') == asked_before + 1
    for record in (first, second):
        journal = (store / f"{record['from']}.md").read_text()
        assert journal.count(record["text"].strip()[:80]) == 1, f"{record['from']}'s entry must be there once"
    assert (store / f"{missing}.md").read_text().count("— The Apology") == 1
    moved = (whole.dir / "superseded.jsonl").read_text().splitlines()
    assert len(moved) == 1 and len(moved[0]) == 30, "the torn line leaves the log"
    report = audit_run(whole.dir)
    assert report.clean, (report.leaks, report.problems)


@pytest.mark.parametrize("cut", ["in the entry", "in the heading", "after the heading's marks"])
async def test_an_entry_torn_in_its_append_is_replaced_whole_never_appended_twice(tmp_path, cut):
    """A kill (or a power loss) part way through appending an entry leaves its block torn at the end
    of the character's journal: the resume replaces that torn block with the whole entry, once."""
    whole, store = await journaled_run(tmp_path)
    first, second = kill_in_journal_step(whole.dir, 2)
    journal = store / f"{second['from']}.md"
    text = journal.read_text()
    block = text.rindex("\n## ")
    body = text.index("\n\n", block + 1) + 2
    at = {"in the entry": body + len(second["text"].strip()) // 2, "in the heading": block + 12,
          "after the heading's marks": block + 4}[cut]
    journal.write_text(text[:at])
    await resume(whole.dir)
    repaired = journal.read_text()
    assert repaired.count("\u2014 The Apology") == 1 and repaired.count(second["text"].strip()) == 1
    assert repaired[:block] == text[:block] and repaired[block + 20:] == text[block + 20:], "as if never torn"
    assert entries(whole.dir)[second["from"]] == [second["text"]]


async def test_a_finished_journal_step_is_still_closed_cleanly(tmp_path, capsys):
    whole, _ = await journaled_run(tmp_path)
    before = (whole.dir / "events.jsonl").read_text()
    assert await asyncio.to_thread(main, ["resume", str(whole.dir)]) == 2
    assert "closed cleanly" in capsys.readouterr().err
    assert (whole.dir / "events.jsonl").read_text() == before


async def test_a_journal_heading_holds_no_escape_code_and_stays_on_one_line(tmp_path):
    title = "\x1b]0;pwned\x07The \x1b[2JApology\n## 2099-01-01 00:00 \u2014 forged heading\x9b31m"
    _, store = await journaled_run(tmp_path, title=title)
    for slug in ("alice", "bob", "charlie"):
        journal = (store / f"{slug}.md").read_text()
        assert not any(ch in journal for ch in "\x1b\x07\x9b")
        headings = [line for line in journal.splitlines() if line.startswith("## ")]
        assert headings[-1].endswith("\u2014 The Apology ## 2099-01-01 00:00 \u2014 forged heading")
        assert not any(h.startswith("## 2099") for h in headings), "the title cannot start a heading of its own"


@pytest.mark.parametrize("flag_or_scene", ["flag", "scene"])
def test_journals_naming_a_file_is_refused_naming_the_setting(tmp_path, capsys, flag_or_scene):
    target = tmp_path / "notes.txt"
    target.write_text("my notes\n")
    out = tmp_path / "run"
    args = ["--isolation", "a", "--coordinator", "C", "--characters-dir", str(CHARACTERS), "--out", str(out)]
    if flag_or_scene == "flag":
        code = main(["--batch", str(SCENES / "the-apology.yaml"), "--journals", str(target), *args])
    else:
        scene = tmp_path / "scene.yaml"
        scene.write_text((SCENES / "the-apology.yaml").read_text() + f"\njournals: {target.name}\n")
        code = main(["--batch", str(scene), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert ("--journals" if flag_or_scene == "flag" else "`journals:`") in err and "is a file" in err
    assert target.read_text() == "my notes\n" and not out.exists()


def test_journals_under_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("x")
    code = main(["--batch", str(SCENES / "the-apology.yaml"), "--journals", str(tmp_path / "notes.txt" / "j"),
                 "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"),
                 "--characters-dir", str(CHARACTERS)])
    err = capsys.readouterr().err
    assert code == 2 and "--journals" in err and "is a file" in err


async def test_a_run_without_memory_resumed_writes_no_journal_anywhere(tmp_path, monkeypatch):
    """`--journals none` records no journal path: a resumed run must not invent one (it wrote `./None`),
    and, like the run it continues, it takes no journal step (no call, no entry)."""
    from test_resume import kill_mid_beat

    monkeypatch.chdir(tmp_path)
    run = await run_session(tmp_path, make_scene(characters=["alice", "bob"], limits={"max_beats": 4}),
                            isolation="a", coordinator="C", write_character_journals=True, journals="none")
    kill_mid_beat(run.dir, 2)
    await resume(run.dir)
    assert run.records()[-1]["type"] == "close"
    assert not [r for r in run.records() if r["type"] == "journal" or r.get("purpose") == "journal"]
    assert not (run.dir / "journals").exists() or not list((run.dir / "journals").iterdir())
    assert not (tmp_path / "None").exists() and not list(tmp_path.glob("*.md"))


def test_the_store_variable_moves_the_default_store_and_must_be_a_folder(tmp_path, capsys, monkeypatch):
    scene = shutil.copy(SCENES / "the-apology.yaml", tmp_path / "the-apology.yaml")
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("PROMPTDESK_JOURNAL_STORE", str(elsewhere))
    args = ["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--max-beats", "2",
            "--characters-dir", str(CHARACTERS)]
    assert main([*args, "--out", str(tmp_path / "run")]) == 0, capsys.readouterr().err
    assert "— The Apology" in (elsewhere / "alice.md").read_text()
    assert not (tmp_path / ".promptdesk").exists()
    monkeypatch.setenv("PROMPTDESK_JOURNAL_STORE", str(tmp_path / "the-apology.yaml"))
    assert main([*args, "--out", str(tmp_path / "run2")]) == 2
    assert "PROMPTDESK_JOURNAL_STORE" in capsys.readouterr().err and not (tmp_path / "run2").exists()
