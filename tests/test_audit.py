"""`promptdesk audit RUN_DIR`: every recorded request re-checked against the run's private material,
from the run folder alone; exit 0 clean, 1 leak, 2 not a run."""

from __future__ import annotations

import json
import re
import os
import stat

import pytest

from promptdesk.core.record.audit import audit_run
from promptdesk.core.cli.main import main
from promptdesk.core.errors import NotARun, PromptdeskError
from promptdesk.core.record.prompt_log import PromptLogWriter, read_prompts
from promptdesk.core.providers.base import ChatMessage, Request
from helpers import example_scene


@pytest.fixture
async def apology_b(run_scene):
    return await run_scene(example_scene("the-apology"), isolation="b", coordinator="C", before_run=watch_spawns)


SEEN_AT_SPAWN: dict[str, bool] = {}


def watch_spawns(session) -> None:
    """Note, at each actor's spawn, whether the start record was already on disk."""
    def seen(event) -> None:
        if event.type == "spawn":
            SEEN_AT_SPAWN[event.target] = (session.recorder.run_dir / "private.json").is_file()
    session.subscribe(seen)


def private_words(run, slug: str) -> str:
    """Ten words in a row of `slug`'s thinking that are `slug`'s alone: no three of them in a row were
    spoken, announced or thought by anyone else (a thought that quotes a line or a world event, or a
    stock phrase every actor thinks, would be excused)."""
    records = run.records()
    def shingles(text: str) -> set[str]:
        words = re.findall(r"[a-z0-9']+", text.lower())
        return {" ".join(words[i:i + 3]) for i in range(len(words) - 2)}
    elsewhere = set().union(*(shingles(r.get("raw") or r.get("text") or "") for r in records
                              if r["type"] in ("speak", "event", "note") or (r["type"] == "think" and r["from"] != slug)))
    for record in records:
        words = record["text"].split() if record["type"] == "think" and record["from"] == slug else []
        for start in range(len(words) - 9):
            window = " ".join(words[start:start + 10])
            if not shingles(window) & elsewhere:
                return window
    raise AssertionError(f"no private run of words in {slug}'s thinking")


def private(run) -> dict:
    return json.loads((run.dir / "private.json").read_text())


def tamper(run_dir, recipient: str, beat: int, extra: str, purpose: str = "turn") -> None:
    """Rewrite `prompts.jsonl` as if the message `recipient` got at `beat` (for `purpose`) had carried
    `extra` (in isolation b, so does every later request of its thread)."""
    writer, lines, at = PromptLogWriter(), [], None
    for record in list(read_prompts(run_dir)):
        request = Request.model_validate({**record.request, "to": record.to, "purpose": record.purpose, "beat": record.beat})
        if record.to == recipient and at is None and record.beat == beat and record.purpose == purpose:
            at = len(request.messages) - 1
        if record.to == recipient and at is not None and len(request.messages) > at and (record.beat or 0) >= beat:
            message = request.messages[at]
            request.messages[at] = ChatMessage(role=message.role, content=message.content + "\n" + extra)
        lines.append(writer.line(record.t, request))
    (run_dir / "prompts.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("isolation", ["a", "b"])
async def test_a_fresh_offline_apology_audits_clean(run_scene, capsys, isolation):
    run = await run_scene(example_scene("the-apology"), isolation=isolation, coordinator="C", audit=False)
    assert main(["audit", str(run.dir)]) == 0
    out = capsys.readouterr().out
    assert "Audit clean" in out and "LEAK" not in out


async def test_the_start_record_holds_every_private_text_and_is_private(apology_b):
    record = private(apology_b)
    assert SEEN_AT_SPAWN == {"alice": True, "bob": True, "charlie": True}
    assert stat.S_IMODE(os.stat(apology_b.dir / "private.json").st_mode) == 0o600
    assert set(record["cast"]) == {"alice", "bob", "charlie"}
    bob = record["cast"]["bob"]
    assert "knew a month before the deadline" in bob["perspective"]
    assert bob["journal"].startswith("## 2026-01-01") and bob["profile"].strip() in bob["briefing"]
    assert "Charlie mediates" in record["coordinator_notes"]
    assert (record["isolation"], record["coordinator"], record["seed"]) == ("b", "C", 1)
    assert record["providers"]["alice"]["name"] == "offline" and record["scene"]["name"] == "the-apology"
    assert "key" not in json.dumps(record["providers"]).lower()


async def test_another_actors_perspective_injected_into_a_prompt_is_named(apology_b, capsys):
    sentence = private(apology_b)["cast"]["bob"]["perspective"].split(".")[1]
    tamper(apology_b.dir, "alice", 2, "By the way: " + sentence.upper() + "!")
    assert main(["audit", str(apology_b.dir)]) == 1
    out = capsys.readouterr().out
    assert "sent to alice (Alice) carries bob's perspective (Bob)" in out
    first = next(line for line in out.splitlines() if line.startswith("LEAK"))
    assert "beat 2" in first and "carried over" not in first
    report = audit_run(apology_b.dir)
    assert not report.clean and {(l.recipient, l.owner, l.kind) for l in report.leaks} == {("alice", "bob", "perspective")}
    later = [l for l in report.leaks if l.carried_from]  # the thread keeps the update it was in (re-sent
    found = {l.line for l in report.leaks if not l.carried_from}  # without its ask: found afresh once)
    assert later and len(found) <= 2 and all(l.carried_from in found for l in later)


async def test_another_actors_thinking_and_the_coordinator_notes_are_named(apology_b):
    tamper(apology_b.dir, "bob", 3, private_words(apology_b, "charlie"))
    notes = private(apology_b)["coordinator_notes"]
    tamper(apology_b.dir, "charlie", 4, notes.split(".")[1])
    leaks = {(l.recipient, l.owner, l.kind) for l in audit_run(apology_b.dir).leaks}
    assert leaks == {("bob", "charlie", "thinking"), ("charlie", "coordinator", "coordinator_notes")}


async def test_thinking_from_a_beat_a_resume_played_again_is_private_too(apology_b):
    thought = "The shredder in the basement still has the March invoices in it"
    (apology_b.dir / "superseded.jsonl").write_text(json.dumps(
        {"t": 0.0, "from": "charlie", "type": "think", "text": thought, "beat": 4}) + "\n")
    assert audit_run(apology_b.dir).clean
    tamper(apology_b.dir, "alice", 5, thought.lower())
    assert {(l.recipient, l.owner, l.kind) for l in audit_run(apology_b.dir).leaks} == {("alice", "charlie", "thinking")}


async def test_an_actors_own_material_and_public_speech_are_not_leaks(apology_b):
    own = private(apology_b)["cast"]["alice"]["perspective"]
    said = next(r["raw"] for r in apology_b.records() if r["type"] == "speak" and r["from"] == "bob" and r.get("raw"))
    tamper(apology_b.dir, "alice", 2, own + "\n" + said)
    assert audit_run(apology_b.dir).clean


async def test_a_record_that_cannot_be_rebuilt_fails_closed(apology_b):
    lines = (apology_b.dir / "prompts.jsonl").read_text().splitlines()
    first_delta = next(i for i, line in enumerate(lines) if '"extends"' in line)
    base = json.loads(lines[first_delta])["extends"]
    del lines[base - 1]
    (apology_b.dir / "prompts.jsonl").write_text("\n".join(lines) + "\n")
    report = audit_run(apology_b.dir)
    assert not report.clean and not report.leaks and "not the previous request" in report.problems[0]


async def test_material_written_into_a_delta_line_by_hand_is_still_named(apology_b, capsys):
    lines = (apology_b.dir / "prompts.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"extends"' in line and '"to": "charlie"' in line)
    edited = json.loads(lines[at])
    edited["append"] = private(apology_b)["cast"]["alice"]["perspective"] + edited["append"]
    lines[at] = json.dumps(edited)
    (apology_b.dir / "prompts.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["audit", str(apology_b.dir)]) == 1
    out = capsys.readouterr().out
    assert f"line {at + 1} " in out and "sent to charlie (Charlie) carries alice's perspective (Alice)" in out
    assert "UNCHECKED" in out and "the file was changed" in out


def test_a_folder_that_is_not_a_run_exits_2(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "missing")]) == 2
    assert "NOT_A_RUN" in capsys.readouterr().err
    (tmp_path / "events.jsonl").write_text("")
    with pytest.raises(NotARun, match="private.json") as caught:
        audit_run(tmp_path)
    assert isinstance(caught.value, PromptdeskError)
    assert main(["audit"]) == 2


async def test_a_thought_counts_as_leaked_only_into_requests_sent_after_it_existed(apology_b):
    """A request sent before a thought was written cannot carry it: the thought copied the request (the
    engine's framing, a line it was told), not the other way round. The same words in a request sent
    after it are a leak."""
    later = max(r["t"] for r in apology_b.records() if r["type"] == "think")
    words = "the crimson ledger under the third floorboard stays hidden tonight"
    tamper(apology_b.dir, "alice", 2, words)
    sent = [r.t for r in read_prompts(apology_b.dir) if r.to == "alice" and r.beat == 2]
    (apology_b.dir / "superseded.jsonl").write_text(json.dumps(
        {"t": later + 100.0, "from": "charlie", "type": "think", "text": words, "beat": 9}) + "\n")
    assert sent and max(sent) < later + 100.0
    assert audit_run(apology_b.dir).clean, "a thought written after the request cannot have leaked into it"
    (apology_b.dir / "superseded.jsonl").write_text(json.dumps(
        {"t": min(sent) - 0.001, "from": "charlie", "type": "think", "text": words, "beat": 1}) + "\n")
    assert {(l.recipient, l.owner, l.kind) for l in audit_run(apology_b.dir).leaks} == {("alice", "charlie", "thinking")}


async def test_on_a_clock_that_stood_still_a_thought_of_a_later_beat_was_not_yet_written(apology_b):
    """The offline improviser without a simulated latency stamps every record with the same `t`: then
    the beats order them. A thought of beat 9 cannot be in a request of beat 2; one of the request's
    own beat, at the same instant, might have been (fail closed)."""
    words = "the crimson ledger under the third floorboard stays hidden tonight"
    tamper(apology_b.dir, "alice", 2, words)
    sent = max(r.t for r in read_prompts(apology_b.dir) if r.to == "alice" and r.beat == 2)
    for beat, clean in ((9, True), (2, False), (1, False)):
        (apology_b.dir / "superseded.jsonl").write_text(json.dumps(
            {"t": sent, "from": "charlie", "type": "think", "text": words, "beat": beat}) + "\n")
        report = audit_run(apology_b.dir)
        assert report.clean is clean, beat
        if not clean:
            assert {(l.recipient, l.owner, l.kind) for l in report.leaks} == {("alice", "charlie", "thinking")}


async def test_the_engines_fixed_words_are_public_even_in_a_thought(apology_b):
    """A thought that copies the engine's own words (its correction prompt, sent to one actor only, so
    no framing learnt from the requests excuses it) does not make the request that carries them a leak."""
    from promptdesk.core.protocol.reply import CORRECTION_PROMPT

    copied = CORRECTION_PROMPT
    (apology_b.dir / "superseded.jsonl").write_text(json.dumps(
        {"t": 0.0, "from": "charlie", "type": "think", "text": copied, "beat": 0}) + "\n")
    tamper(apology_b.dir, "alice", 3, copied)
    assert audit_run(apology_b.dir).clean


@pytest.mark.parametrize("change", [("--event", "Bob blurts out: I knew a month before the deadline and said nothing."),
                                    ("--note", "Tell them you knew a month before the deadline and said nothing.",
                                     "--to", "alice")])
def test_what_the_operator_tells_the_cast_is_disclosed_not_called_a_leak(tmp_path, capsys, change):
    """A take whose change carries Bob's secret: the operator may tell the cast anything, so the audit is
    clean (exit 0), but it says which text of the operator's carries whose material rather than claiming
    the actors were sent no private words."""
    from test_branch import batch, branch, scene_file

    parent = batch(scene_file(tmp_path), tmp_path / "parent")
    assert not audit_run(parent).disclosed
    assert branch(parent, 2, tmp_path / "take", *change) == 0
    report = audit_run(tmp_path / "take")
    assert report.clean and len(report.disclosed) == 1, report.disclosed
    capsys.readouterr()
    assert main(["audit", str(tmp_path / "take")]) == 0
    out = capsys.readouterr().out
    whom = "alice (Alice)" if "--to" in change else "every actor"
    assert re.search(rf"DISCLOSED events.jsonl line \d+ \(.* written by the operator, beat 2\) sent to {re.escape(whom)} "
                     r"carries Bob.s perspective: \"…[a-z ]*knew a month before the deadline", out), out
    assert "beyond what you wrote to the cast yourself (1 text, DISCLOSED above)" in out
