"""The audit fails closed: a run folder whose `prompts.jsonl` is missing, empty, garbled, or holds
fewer requests than `events.jsonl` records calls for, is not clean (exit 1, naming what is missing),
and neither is one whose `events.jsonl` cannot be read whole. A line torn by a kill is still only a
warning. Metrics, sweeps and compare carry the verdict (`incomplete`), and `audit` takes many run
folders or a sweep folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.metrics import metrics_of
from promptdesk.core.experiments.sweep import read_results
from promptdesk.core.record.audit import audit_run
from helpers import example_scene
from test_sweep import scene_file, sweep_args


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """One offline isolation (a) run (its requests stand whole or as deltas of a shared prefix)."""
    import asyncio

    from helpers import run_session
    root = tmp_path_factory.mktemp("closed")
    run = asyncio.run(run_session(root, example_scene("the-apology", limits={"max_beats": 6}), isolation="a",
                                  coordinator="A"))
    return run.dir


@pytest.fixture
def run(recorded, tmp_path) -> Path:
    return Path(shutil.copytree(recorded, tmp_path / "run"))


def calls(run_dir: Path) -> int:
    return sum(1 for line in (run_dir / "events.jsonl").read_text().splitlines() if json.loads(line)["type"] == "call")


def prompt_lines(run_dir: Path) -> list[str]:
    return (run_dir / "prompts.jsonl").read_text().splitlines(keepends=True)


def leaf(lines: list[str]) -> int:
    """The index of a line in the middle of the log that no later line is a delta of."""
    bases = {json.loads(line).get("extends") for line in lines}
    return next(i for i, line in enumerate(lines) if i >= 3 and json.loads(line)["id"] not in bases)


def audit_cli(run_dir: Path, capsys) -> tuple[int, str, str]:
    code = main(["audit", str(run_dir)])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_untouched_run_is_clean(recorded, capsys):
    code, out, _ = audit_cli(recorded, capsys)
    assert code == 0 and "Audit clean" in out and calls(recorded) == len(prompt_lines(recorded)) > 10
    assert metrics_of(recorded).audit == "clean"


def test_a_missing_prompt_log_is_not_clean(run, capsys):
    (run / "prompts.jsonl").unlink()
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "Audit clean" not in out
    assert f"UNCHECKED prompts.jsonl is missing: the {calls(run)} calls events.jsonl records cannot be checked" in out
    assert "Audit INCOMPLETE" in out
    assert metrics_of(run).audit == "incomplete"


def test_a_prompt_log_that_cannot_be_opened_is_not_clean(run, capsys):
    (run / "prompts.jsonl").unlink()
    (run / "prompts.jsonl").mkdir()
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "UNCHECKED prompts.jsonl cannot be read (Is a directory)" in out


def test_an_empty_prompt_log_is_not_clean(run, capsys):
    (run / "prompts.jsonl").write_text("")
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"prompts.jsonl holds no request, but events.jsonl records {calls(run)} calls" in out


def test_a_prompt_log_cut_short_does_not_cover_the_calls(run, capsys):
    lines = prompt_lines(run)
    (run / "prompts.jsonl").write_text("".join(lines[:-5]))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"prompts.jsonl lacks 5 of the {calls(run)} requests events.jsonl records calls for" in out


def test_a_request_taken_out_of_the_middle_is_named(run, capsys):
    lines = prompt_lines(run)
    whole = [i for i, line in enumerate(lines) if '"request"' in line and i < len(lines) - 4]
    del lines[whole[-1]]
    (run / "prompts.jsonl").write_text("".join(lines))
    report = audit_run(run)
    assert not report.clean and not report.leaks
    assert any("lacks 1 of the" in p for p in report.problems)
    assert any(f"line {whole[-1] + 1} holds request {whole[-1] + 2}: lines were removed, added or moved" in p
               for p in report.problems)


@pytest.mark.parametrize("garble", [
    lambda line: "}{ this is not a request\n",
    lambda line: line[:40] + "\x00\x01" + line[60:],
    lambda line: json.dumps({"note": "hello"}) + "\n",
    lambda line: json.dumps({**json.loads(line), "beat": "four"}) + "\n",
    lambda line: json.dumps({**json.loads(line), "to": 5, "t": "noon"}) + "\n",
    lambda line: json.dumps({**json.loads(line), "id": True}) + "\n",
], ids=["not-json", "bytes-in-the-middle", "json-but-no-request", "beat-not-a-number", "to-not-text", "id-not-a-number"])
def test_a_garbled_prompt_line_is_not_clean(run, capsys, garble):
    lines = prompt_lines(run)
    at = leaf(lines)
    lines[at] = garble(lines[at])
    (run / "prompts.jsonl").write_text("".join(lines))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"UNCHECKED prompts.jsonl line {at + 1} cannot be read" in out
    assert "extends" not in out, "only the garbled line is at fault"


@pytest.mark.parametrize("damage", [
    b"\xff",                          # a byte no UTF-8 text holds
    b"\xe8\xb4",                      # a character cut short (a flipped or lost byte)
    "Zoë's café".encode("latin-1"),  # words saved again in another encoding
    "账本是假的".encode("gbk"),        # a Chinese secret saved again as GBK
], ids=["ff", "cut-character", "latin-1", "gbk"])
def test_a_prompt_line_holding_bytes_of_no_character_is_not_read_as_other_words(run, capsys, damage):
    """A request line with bytes that are no UTF-8 (the engine writes only UTF-8) was damaged after it was
    written: read with those bytes replaced, a leak in it would read as other words and pass. It is
    unchecked, named by its line, and the run is INCOMPLETE, not clean."""
    lines = prompt_lines(run)
    at = leaf(lines)
    raw = [line.encode() for line in lines]
    cut = raw[at].index(b" the ") + 1
    raw[at] = raw[at][:cut] + damage + raw[at][cut:]
    (run / "prompts.jsonl").write_bytes(b"".join(raw))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "Audit INCOMPLETE" in out
    assert f"UNCHECKED prompts.jsonl line {at + 1} cannot be read (the line is not UTF-8 text" in out


def test_the_line_a_kill_tore_is_only_a_warning(run, capsys):
    """A kill mid-write leaves the last line cut off, unended: that request was never sent."""
    line = prompt_lines(run)[-1]
    with open(run / "prompts.jsonl", "a") as log:
        log.write(line[:len(line) // 2])
    code, out, err = audit_cli(run, capsys)
    assert code == 0 and "Audit clean" in out and "torn by a kill" in err


def test_a_torn_line_no_resume_ended_is_garbling(run, capsys):
    lines = prompt_lines(run)
    at = leaf(lines)
    lines[at] = lines[at][:len(lines[at]) // 2] + "\n"
    (run / "prompts.jsonl").write_text("".join(lines))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"UNCHECKED prompts.jsonl line {at + 1} cannot be read" in out


def test_an_event_log_that_cannot_be_read_whole_is_not_clean(run, capsys):
    events = (run / "events.jsonl").read_text().splitlines(keepends=True)
    thought = next(i for i, line in enumerate(events) if '"type": "think"' in line)
    events[thought] = events[thought][:30] + "\ufffd\ufffd garbled\n"
    (run / "events.jsonl").write_text("".join(events))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"UNCHECKED events.jsonl line {thought + 1} cannot be read" in out
    (run / "events.jsonl").write_text("".join(events[1:thought] + events[thought + 1:]))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "events.jsonl has no start event" in out


def test_a_sweep_folder_is_audited_run_by_run_and_carries_the_verdict(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(sweep_args(scene_file(tmp_path), out)) == 0
    assert {row["audit"] for row in read_results(out)} == {"clean"}
    capsys.readouterr()
    assert main(["audit", str(out)]) == 0
    assert "4 runs audited: 4 clean, 0 not clean." in capsys.readouterr().out
    (out / "b-C-seed2" / "prompts.jsonl").unlink()
    assert main(["audit", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "4 runs audited: 3 clean, 1 not clean: b-C-seed2." in printed and "prompts.jsonl is missing" in printed
    assert main(["compare", str(out), "--csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    audit_column = rows[0].split(",").index("audit")
    assert sorted(row.split(",")[audit_column] for row in rows[1:]) == ["clean", "clean", "clean", "incomplete"]


def cut_at(run_dir: Path, where) -> int:
    """Cut `events.jsonl` just before its first line for which `where(event)` holds, as a kill would
    leave it (`prompts.jsonl` keeps every request: each was recorded before it was sent); its index."""
    lines = (run_dir / "events.jsonl").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if where(json.loads(line)))
    (run_dir / "events.jsonl").write_text("".join(lines[:at]))
    return at


def test_a_run_cut_off_mid_beat_is_never_called_clean(run, capsys):
    """Every request of a cut run may be checked and carry nothing: the record is still not whole."""
    cut_at(run, lambda e: e["type"] == "speak" and e.get("beat") == 3)
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "Audit clean" not in out and "Audit INCOMPLETE" in out
    assert f"CUT events.jsonl ends in beat 3 without a close" in out and f"promptdesk resume {run}" in out
    assert "unanswered at the cut" in out, "the requests in flight when the run was cut are counted"
    assert metrics_of(run).audit == "incomplete"


def test_a_run_cut_in_its_journal_step_is_never_called_clean(run, capsys):
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    journals = [e["from"] for e in events if e["type"] == "journal"]
    assert len(journals) == 3, "the recorded run took its journal step"
    cut_at(run, lambda e: e["type"] == "journal" and e["from"] == journals[1])
    code, out, _ = audit_cli(run, capsys)
    names = json.loads((run / "private.json").read_text())["cast"]
    missing = ", ".join(names[slug]["name"] for slug in journals[1:])
    assert code == 1 and f"CUT events.jsonl ends in the journal step after the close without an entry or a failure " \
        f"line for {missing}" in out and f"`promptdesk resume {run}` finishes it" in out


def test_a_run_still_being_written_is_not_called_clean_either(run, capsys):
    from promptdesk.core.record.folder_lock import FolderLock

    cut_at(run, lambda e: e["type"] == "close")
    with FolderLock.take(run, "run"):
        code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"it is still being written (by process {os.getpid()}, a run)" in out and "resume" not in out


def test_a_line_of_the_wrong_type_is_named_by_its_field(run, capsys):
    """A valid JSON line whose field has the wrong type is named by that field, in words a person can
    act on, in either log; a delta whose base is such a line says so."""
    events = (run / "events.jsonl").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(events) if '"type": "speak"' in line)
    events[at] = json.dumps({**json.loads(events[at]), "t": "noon"}) + "\n"
    (run / "events.jsonl").write_text("".join(events))
    lines = prompt_lines(run)
    base = next(i for i, line in enumerate(lines) if any(json.loads(later).get("extends") == json.loads(line)["id"]
                                                          for later in lines[i + 1:]))
    lines[base] = json.dumps({**json.loads(lines[base]), "beat": "four"}) + "\n"
    (run / "prompts.jsonl").write_text("".join(lines))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"UNCHECKED events.jsonl line {at + 1} cannot be read (t: Input should be a valid number" in out
    assert f'UNCHECKED prompts.jsonl line {base + 1} cannot be read ("beat" must be a whole number or null' in out
    assert f"extends request {base + 1}, whose line cannot be read" in out
    assert "validation error" not in out


@pytest.mark.parametrize("field, value, said", [("t", "1e400", "t: Input should be a finite number"),
                                                 ("beat", "-1", "beat: Input should be greater than or equal to 0")])
def test_an_event_out_of_time_or_before_the_first_beat_cannot_be_read(run, capsys, field, value, said):
    """A time that is infinite, or a beat below 0, is no event of a run (the replay showed "Elapsed inf
    s"): the line is named as unreadable and the audit is not clean."""
    events = (run / "events.jsonl").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(events) if '"type": "speak"' in line)
    events[at] = json.dumps(json.loads(events[at]))[:-1] + f', "{field}": {value}}}\n'
    (run / "events.jsonl").write_text("".join(events))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"UNCHECKED events.jsonl line {at + 1} cannot be read ({said}" in out


def test_a_line_cut_short_inside_the_event_log_of_a_resumed_run_is_not_a_kills(run, capsys):
    """A resume moves the event log's torn last line aside, so a resumed run's `events.jsonl` never
    holds a torn line inside it: one that looks torn there is damage (a lost call, a lost thought)."""
    events = (run / "events.jsonl").read_text().splitlines(keepends=True)
    seam = {"t": 0.0, "from": "coordinator", "text": "Run resumed after an interruption", "beat": 1, "type": "resume",
            "reason": "restart", "superseded": 0, "unfinished_requests": []}
    at = next(i for i, line in enumerate(events) if '"type": "call"' in line)
    events[at] = events[at][:len(events[at]) // 2] + "\n"
    (run / "events.jsonl").write_text("".join([*events, json.dumps(seam) + "\n"]))
    code, out, err = audit_cli(run, capsys)
    assert code == 1 and f"UNCHECKED events.jsonl line {at + 1} cannot be read" in out and "torn by a kill" not in err


def test_the_lines_a_resume_moved_aside_must_all_be_there(run, capsys):
    """A resume moves the cut beat's lines (its thoughts among them) to `superseded.jsonl` and its seam
    says how many: a file missing or holding fewer lines leaves thoughts unchecked."""
    events = (run / "events.jsonl").read_text().splitlines(keepends=True)
    seam = {"t": 0.0, "from": "coordinator", "text": "Run resumed after an interruption", "beat": 1, "type": "resume",
            "reason": "restart", "superseded": 3, "unfinished_requests": []}
    (run / "events.jsonl").write_text("".join([*events, json.dumps(seam) + "\n"]))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "UNCHECKED superseded.jsonl is missing, but the resumes' seams in events.jsonl say 3 lines " \
        "were moved there" in out
    beats = [line for line in events if '"type": "beat"' in line]
    (run / "superseded.jsonl").write_text("".join(beats[:2]))
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "UNCHECKED superseded.jsonl holds 2 lines, but" in out
    (run / "superseded.jsonl").write_text("".join(beats[:3]))
    code, out, _ = audit_cli(run, capsys)
    assert code == 0 and "Audit clean" in out


def test_a_run_cut_off_between_beats_says_the_beat_had_finished(run, capsys):
    cut_at(run, lambda e: e["type"] == "beat" and e.get("beat") == 3)
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "CUT events.jsonl ends after beat 2 had finished without a close" in out


def test_the_requests_unanswered_at_a_second_cut_are_counted_from_its_beat_alone(run, capsys):
    """A run resumed once (its seam names earlier requests) and cut again: the count is of the requests
    of the beat it was cut in that no call answers, never less than none."""
    at = cut_at(run, lambda e: e["type"] == "speak" and e.get("beat") == 3)
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    seam = {"t": 0.0, "from": "coordinator", "text": "Run resumed after an interruption", "beat": 1, "type": "resume",
            "reason": "restart", "superseded": 0, "unfinished_requests": [1, 2, 3, 4]}
    (run / "events.jsonl").write_text("".join([*lines[:at // 2], json.dumps(seam) + "\n", *lines[at // 2:]]))
    kept = [line for line in prompt_lines(run) if json.loads(line).get("beat", 0) <= 3]  # sent before the kill
    (run / "prompts.jsonl").write_text("".join(kept))
    calls = [json.loads(line) for line in lines if '"type": "call"' in line and json.loads(line)["beat"] == 3]
    sent = [r for r in map(json.loads, kept) if r.get("beat") == 3]
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and f"; {len(sent) - len(calls)} unanswered at the cut)" in out and len(sent) > len(calls)


def test_the_audit_counts_one_request_as_one():
    from promptdesk.core.record.audit import AuditReport
    report = AuditReport(run_dir=Path("r"), requests=1)
    assert report.summary() == "Audit clean: 1 request in r carries no other owner's private material."
    assert AuditReport(run_dir=Path("r"), requests=2).summary().startswith("Audit clean: 2 requests in r carry ")


def test_requests_of_beats_the_cut_log_lacks_are_unchecked_never_leaks(tmp_path, capsys):
    """A log cut short by hand (or a damaged disk) before beats whose requests `prompts.jsonl` still holds:
    those beats' speech is gone from the record, so a request that routed it cannot be told from one that
    leaked the thinking it came from. Those requests are UNCHECKED (exit 1, saying what to put back), not
    reported as leaks of thinking that was in fact said aloud (a cut six-actor run: 18 false leaks)."""
    import asyncio

    from helpers import run_session
    run = asyncio.run(run_session(tmp_path, example_scene("the-apology", limits={"max_beats": 9}), isolation="b",
                                  coordinator="C", seed=7)).dir
    cut_at(run, lambda e: e["type"] == "beat" and e.get("beat") == 4)
    code, out, _ = audit_cli(run, capsys)
    assert code == 1 and "LEAK" not in out and "Audit INCOMPLETE" in out
    assert "of beats after beat 3, where events.jsonl ends" in out and "put the log's missing lines back" in out
