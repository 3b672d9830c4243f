"""`promptdesk resume RUN_DIR`: a killed scene run continues from its folder alone; the cut beat is
replayed from its start, a `resume` event marks the seam, and nothing appears twice."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from promptdesk.core.record.audit import audit_run
from promptdesk.core.cli.main import main
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.prompt_log import read_prompts
from promptdesk.core.record.recorder import read_events
from promptdesk.core.casting.resume import prepare
from helpers import CHARACTERS, ROOT, SCENES, example_scene, make_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)

PLAYED = ("speak", "think", "event", "note", "close", "journal")


def played(run_dir: Path) -> list[tuple]:
    """What the run's record says happened."""
    return [(e.type, e.from_, e.beat, e.text) for e in read_events(run_dir) if e.type in PLAYED]


def assert_nothing_twice(run_dir: Path) -> None:
    events = read_events(run_dir)
    beats = [e.beat for e in events if e.type == "beat"]
    assert beats == list(range(len(beats)))
    spoken = [(e.from_, e.beat) for e in events if e.type == "speak"]
    assert len(spoken) == len(set(spoken))
    assert [e.type for e in events].count("close") == 1 and events[-1].type in ("close", "journal")
    text = (run_dir / "transcript.txt").read_text()
    said = [e.text for e in events if e.type == "speak" and e.action != "silent" and e.text]
    assert all(text.count(line) >= 1 for line in said)


def kill_mid_beat(run_dir: Path, beat: int) -> None:
    """Leave the folder as a kill -9 would: the log stops inside `beat`, its last line torn, no derived files."""
    lines = (run_dir / "events.jsonl").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"type": "speak"' in line and f'"beat": {beat},' in line)
    (run_dir / "events.jsonl").write_text("".join(lines[:cut + 1]) + lines[cut + 1][:25])
    prompts = (run_dir / "prompts.jsonl").read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(prompts) if f'"beat": {beat},' in line)
    (run_dir / "prompts.jsonl").write_text("".join(prompts[:last + 1]) + prompts[last + 1][:40])
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json"):
        (run_dir / name).unlink()
    shutil.rmtree(run_dir / "journals", ignore_errors=True)  # a run without memory has none


@pytest.mark.parametrize("isolation,turns", [("a", "parallel"), ("b", "parallel"), ("b", "sequential")])
async def test_a_resumed_run_plays_on_exactly_as_if_it_had_never_stopped(run_scene, tmp_path, isolation, turns):
    whole = await run_scene(example_scene("the-apology", turns=turns), isolation=isolation, coordinator="C")
    killed = tmp_path / "killed"
    shutil.copytree(whole.dir, killed)
    kill_mid_beat(killed, 5)
    session = prepare(killed)
    assert session.first_beat == 5
    session.clock = VirtualClock()
    result = await session.run()
    assert (result.close_reason, result.beats) == (whole.result.close_reason, whole.result.beats)
    assert played(killed) == played(whole.dir)
    seams = [e for e in read_events(killed) if e.type == "resume"]
    assert len(seams) == 1 and seams[0].beat == 5 and seams[0].reason == "restart"
    moved = (killed / "superseded.jsonl").read_text().splitlines()
    assert seams[0].model_extra["superseded"] == len(moved) and json.loads(moved[0])["type"] == "beat"
    assert any(json.loads(line)["type"] == "speak" for line in moved[:-1]) and len(moved[-1]) == 25
    assert stat.S_IMODE(os.stat(killed / "superseded.jsonl").st_mode) == 0o600
    assert_nothing_twice(killed)
    whole_lines = [line for line in (killed / "prompts.jsonl").read_text().splitlines() if '"request"' in line]
    assert len(whole_lines) == 3, "after the seam each actor's requests go on as deltas"
    body = lambda path: [line for line in path.read_text().split("\n", 6)[-1].splitlines()  # noqa: E731
                         if not line.startswith("- Tokens:")]  # the header carries the date
    assert body(killed / "transcript.md") == body(whole.dir / "transcript.md")
    assert audit_run(killed).clean
    cut = [json.loads(line) for line in moved[:-1] if json.loads(line)["type"] == "call"]
    spent = lambda path: json.loads((path / "metadata.json").read_text())["costs"]  # noqa: E731
    assert cut and spent(killed)["cutCalls"] == len(cut), "the cut beat's calls were paid for: they are counted"
    assert spent(killed)["input_tokens"] == spent(whole.dir)["input_tokens"] + sum(c["input_tokens"] for c in cut)


@pytest.mark.parametrize("latency", [None, [150, 900]])
async def test_the_seam_names_only_the_requests_of_the_cut_beat_even_when_the_clock_stood_still(run_scene, tmp_path,
                                                                                                latency):
    """Without a simulated latency an offline run's clock never moves (every `t` is 0.0): the requests
    sent before the cut are still told from those sent for the beat played again."""
    whole = await run_scene(example_scene("the-apology", provider={"name": "offline", "latency_ms": latency}),
                            isolation="b", coordinator="C")
    killed = tmp_path / "killed"
    shutil.copytree(whole.dir, killed)
    kill_mid_beat(killed, 5)
    cut_beat = [r.beat for r in read_prompts(killed) if r.beat == 5]
    session = prepare(killed)
    session.clock = VirtualClock()
    await session.run()
    seam = next(e for e in read_events(killed) if e.type == "resume")
    named = {r.id: r.beat for r in read_prompts(killed) if r.id in seam.model_extra["unfinished_requests"]}
    assert sorted(named.values()) == cut_beat, named
    assert json.loads((killed / "metadata.json").read_text())["unfinishedRequests"] == len(cut_beat)
    assert audit_run(killed).unfinished == len(cut_beat)


async def test_a_closed_run_cannot_be_resumed(run_scene, capsys):
    run = await run_scene(example_scene("the-apology"), isolation="a", coordinator="C")
    before = (run.dir / "events.jsonl").read_text()
    assert main(["resume", str(run.dir)]) == 2
    assert "closed cleanly" in capsys.readouterr().err
    assert (run.dir / "events.jsonl").read_text() == before


async def test_only_scene_runs_resume_and_a_folder_must_be_a_run(run_scene, tmp_path, capsys):
    run = await run_scene(make_scene(format="roundtable", roundtable={"topic": "Four-day sprints?"}),
                          isolation="a", coordinator="C", on_escalate="continue")
    assert main(["resume", str(run.dir)]) == 2
    assert "only scene runs" in capsys.readouterr().err
    assert main(["resume", str(tmp_path / "nowhere")]) == 2
    assert "NOT_A_RUN" in capsys.readouterr().err
    assert main(["resume"]) == 2


def fast_apology(tmp_path: Path) -> Path:
    """The shipped scene, with the offline latency shortened so that a run takes about a second."""
    text = (SCENES / "the-apology.yaml").read_text()
    assert "latency_ms: [150, 900]" in text
    path = tmp_path / "the-apology.yaml"
    path.write_text(text.replace("latency_ms: [150, 900]", "latency_ms: [30, 60]"))
    return path


def wait_for_beat(log: Path, beat: int, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and any('"type": "beat"' in line and f'"beat": {beat}' in line
                                for line in log.read_text().splitlines()):
            return
        time.sleep(0.01)
    raise AssertionError(f"the run never reached beat {beat} (exit {proc.poll()})")


def test_a_batch_run_killed_with_sigkill_resumes_and_closes_with_every_file(tmp_path, capsys):
    cast = tmp_path / "characters"
    shutil.copytree(CHARACTERS, cast)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "promptdesk.core.cli.main", "--batch", str(fast_apology(tmp_path)), "--isolation", "b",
         "--coordinator", "C", "--seed", "4", "--out", str(out), "--characters-dir", str(cast), "--quiet"],
        cwd=tmp_path, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        wait_for_beat(out / "events.jsonl", 3, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "metadata.json").exists()
    assert main(["resume", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Resuming" in err and "Scene closed:" in err
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json", "notes.md", "private.json"):
        assert (out / name).is_file(), name
    events = read_events(out)
    assert [e.type for e in events].count("resume") == 1
    assert_nothing_twice(out)
    assert json.loads((out / "metadata.json").read_text())["totalBeats"] >= 4
    assert audit_run(out).clean
    assert main(["resume", str(out)]) == 2


async def test_a_run_killed_before_its_first_event_starts_over_from_its_start_record(run_scene, tmp_path):
    whole = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C")
    killed = tmp_path / "killed"
    killed.mkdir()
    for name in ("notes.md", "private.json"):
        shutil.copy(whole.dir / name, killed / name)
    for name in ("events.jsonl", "prompts.jsonl", "debug.log"):
        (killed / name).write_text("")
    session = prepare(killed)
    session.clock = VirtualClock()
    await session.run()
    assert played(killed) == played(whole.dir)
    types = [e.type for e in read_events(killed)]
    assert types[:2] == ["start", "spawn"] and types.count("resume") == 1
    assert read_events(killed)[0].model_extra["cast"] == {"alice": "Alice", "bob": "Bob", "charlie": "Charlie"}
    assert json.loads((killed / "metadata.json").read_text())["totalBeats"] == json.loads(
        (whole.dir / "metadata.json").read_text())["totalBeats"]


async def test_a_turn_silenced_for_its_speech_is_restored_as_the_actor_kept_it(run_scene, tmp_path, loopback,
                                                                                monkeypatch):
    """Bob's speech never keeps the protocol: each of his turns is silenced, his thread keeping his
    thought and `[SILENT]`. A resume rebuilds that thread as it was, so every request after the cut
    is the one the uninterrupted run sent."""
    from test_scene_faults import CANARY, remote_cast, scripted, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)

    def answer(who, recorded):
        if who == "bob":
            return turn('[TONE: low] "I <b>did</b> try."', thinking="I checked the figures twice.")
        return turn('[TONE: firm] "Go on."', thinking="I wait and see.")

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", limits={"max_beats": 6}, cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          turns="sequential")  # one call at a time: the order of lines cannot depend on arrival
    whole = await run_scene(scene, isolation="b", coordinator="C")
    killed = tmp_path / "killed"
    shutil.copytree(whole.dir, killed)
    kill_mid_beat(killed, 4)
    session = prepare(killed)
    await session.run()
    sent = lambda run_dir: [(r.to, r.purpose, r.beat, r.text) for r in read_prompts(run_dir)  # noqa: E731
                            if r.beat is not None and r.beat >= 4]
    after_seam = sent(killed)[-len(sent(whole.dir)):]
    assert after_seam == sent(whole.dir)


async def test_resume_sends_the_rest_of_the_run_to_a_new_base_url(run_scene, tmp_path, capsys):
    from loopback import LoopbackServer, Reply
    from test_scene_faults import remote_cast, turn

    line = Reply(text=turn('[TONE: calm] "Go on."', "I wait and see."))
    with LoopbackServer(line) as first, LoopbackServer(line) as second:
        scene = example_scene("the-apology", limits={"max_beats": 6},
                              cast=remote_cast(first, "alice", "bob", "charlie", provider="openai-compatible", model="llama3"))
        run = await run_scene(scene, isolation="b", coordinator="C")
        kill_mid_beat(run.dir, 3)
        sent_before = first.hits
        args = ["resume", str(run.dir), "--base-url", second.url("/v1"), "--quiet"]
        assert await asyncio.to_thread(main, args) == 0
        assert first.hits == sent_before and second.hits >= 3 * 3
    assert "Scene closed: max_beats_exceeded" in capsys.readouterr().err
    assert_nothing_twice(run.dir)


async def test_a_run_killed_again_after_a_resume_resumes_again_and_counts_what_it_played_again(run_scene, tmp_path):
    """... and the cut beats' calls, paid for, count in the resumed run's tokens (its summary line, its
    budget) as in metadata.json: the second resume counts the first one's too."""
    whole = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C")
    killed = tmp_path / "killed"
    shutil.copytree(whole.dir, killed)
    kill_mid_beat(killed, 4)
    for beat in (8, None):
        session = prepare(killed)
        session.clock = VirtualClock()
        await session.run()
        if beat is not None:
            kill_mid_beat(killed, beat)
    assert played(killed) == played(whole.dir)
    assert [e.beat for e in read_events(killed) if e.type == "resume"] == [4, 8]
    assert_nothing_twice(killed)
    assert audit_run(killed).clean

    def calls(name: str) -> list[dict]:  # a torn line (the kill's) is no call
        lines = (killed / name).read_text().splitlines()
        return [e for e in (json.loads(line) for line in lines if line.endswith("}")) if e["type"] == "call"]

    cut, kept = calls("superseded.jsonl"), calls("events.jsonl")
    assert cut and session.state.tokens == sum(c["input_tokens"] + c["output_tokens"] for c in cut + kept)


def test_silent_beats_on_the_log_count_toward_the_silent_streak(tmp_path):
    from promptdesk.core.record.events import GenericEvent, SpeakEvent
    from promptdesk.core.formats.scene.restore import Replay
    from promptdesk.core.casting.build import RunOptions, build_session

    session = build_session(example_scene("the-apology"), RunOptions(
        isolation="a", coordinator="C", seed=1, characters_dirs=[CHARACTERS], runs_root=tmp_path))
    replay = Replay(session)
    for beat in (0, 1):
        replay.apply(GenericEvent(t=beat, **{"from": "coordinator"}, type="beat", text=f"Beat {beat}", beat=beat))
        for slug in (["alice"] if beat == 0 else ["alice", "bob", "charlie"]):
            replay.apply(SpeakEvent(t=beat, **{"from": slug}, action="silent", raw="[SILENT]", beat=beat))
    replay.end_beat()
    assert session.state.silent_streak == 2 and session.state.beat == 1
    assert all(not actor.inbox for actor in session.actors.values())


# -- one writer per run folder -----------------------------------------------------------------------------------

class Gate:
    """A loopback reply source that holds every request until `opened` is set, so that a run stays
    inside its first call, holding its folder, for as long as the test needs (no clock involved)."""

    def __init__(self, reply) -> None:
        self.reply, self.arrived, self.opened = reply, threading.Event(), threading.Event()

    def __call__(self, recorded):
        self.arrived.set()
        self.opened.wait(60)
        return self.reply


def cli(*args: str, cwd: Path, **options) -> subprocess.Popen:
    """`python -m promptdesk.core.cli ARGS` in another process."""
    return subprocess.Popen([sys.executable, "-m", "promptdesk.core.cli", *args], cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            **options)


def remote_scene_file(tmp_path: Path, server, max_beats: int = 3) -> Path:
    from test_scene_faults import remote_cast

    scene = example_scene("the-apology", limits={"max_beats": max_beats},
                          cast=remote_cast(server, "alice", "bob", "charlie", provider="openai-compatible", model="llama3"))
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    return path


def test_a_live_run_holds_its_folder_and_a_killed_one_never_blocks_its_resume(tmp_path, loopback, capsys):
    from test_run_folder import digest
    from test_scene_faults import turn

    gate = loopback.default = Gate(Reply(text=turn('[TONE: calm] "Go on."', "I wait and see.")))
    cast = tmp_path / "characters"
    shutil.copytree(CHARACTERS, cast)
    out = tmp_path / "run"
    proc = cli("--batch", str(remote_scene_file(tmp_path, loopback)), "--isolation", "b", "--coordinator", "C",
               "--seed", "4", "--out", str(out), "--characters-dir", str(cast), "--quiet", cwd=tmp_path,
               stderr=subprocess.DEVNULL)
    try:
        assert gate.arrived.wait(60), "the live run never made its first call"
        before = digest(out)
        assert main(["resume", str(out)]) == 2
        assert f"FOLDER_BUSY: {out} is being written by process {proc.pid}, a run" in capsys.readouterr().err
        assert main(["rebuild", str(out)]) == 2
        assert f"process {proc.pid}" in capsys.readouterr().err
        assert digest(out) == before and loopback.hits == 1
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        gate.opened.set()
    assert (out / ".lock").read_text().split()[0] == str(proc.pid), "the killed run's lock file is left behind"
    assert main(["resume", str(out), "--quiet"]) == 0
    assert not (out / ".lock").exists()
    assert_nothing_twice(out)
    assert audit_run(out).clean


async def test_two_resumes_of_one_killed_run_one_finishes_it_the_other_is_refused(run_scene, tmp_path, loopback, capsys):
    from test_scene_faults import remote_cast, turn

    line = Reply(text=turn('[TONE: calm] "Go on."', "I wait and see."))
    loopback.default = line
    scene = example_scene("the-apology", limits={"max_beats": 6},
                          cast=remote_cast(loopback, "alice", "bob", "charlie", provider="openai-compatible", model="llama3"))
    run = await run_scene(scene, isolation="b", coordinator="C")
    kill_mid_beat(run.dir, 3)
    gate = loopback.default = Gate(line)
    sent_before = loopback.hits
    first = cli("resume", str(run.dir), "--quiet", cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        assert await asyncio.to_thread(gate.arrived.wait, 60), "the first resume never made a call"
        moved = (run.dir / "superseded.jsonl").read_text()
        assert await asyncio.to_thread(main, ["resume", str(run.dir)]) == 2
        assert f"is being written by process {first.pid}, a resume" in capsys.readouterr().err
        assert (run.dir / "superseded.jsonl").read_text() == moved
    finally:
        gate.opened.set()
        _, err = await asyncio.to_thread(first.communicate, timeout=120)
    assert first.returncode == 0, err
    assert [e.type for e in read_events(run.dir)].count("resume") == 1
    assert_nothing_twice(run.dir)
    calls = [e for e in read_events(run.dir) if e.type == "call" and e.beat is not None and e.beat >= 3]
    assert loopback.hits - sent_before == len(calls) > 0, "every call was made once, by one process"
    assert audit_run(run.dir).clean


def test_a_damaged_record_resumes_naming_its_lines_and_changing_nothing_it_holds(tmp_path, capsys):
    """A killed run whose files were damaged besides the kill (a line of `events.jsonl` that is no event,
    a request line of the wrong type in `prompts.jsonl`, `notes.md` gone) still resumes: the damaged lines are named
    first, kept as they stood, the next request of that actor is written whole, and the audit says
    the record is not clean."""
    from helpers import run_session

    whole = asyncio.run(run_session(tmp_path, example_scene("the-apology"), isolation="b", coordinator="C"))
    killed = tmp_path / "killed"
    shutil.copytree(whole.dir, killed)
    kill_mid_beat(killed, 5)
    events = (killed / "events.jsonl").read_text().split("\n")
    at = next(i for i, line in enumerate(events) if '"type": "route"' in line)
    events[at] = events[at][:30]
    (killed / "events.jsonl").write_text("\n".join(events))
    prompts = (killed / "prompts.jsonl").read_text().split("\n")
    base = next(i for i, line in enumerate(prompts) if '"extends": 1,' in line)
    prompts[0] = json.dumps({**json.loads(prompts[0]), "beat": "zero"})
    (killed / "prompts.jsonl").write_text("\n".join(prompts))
    (killed / "notes.md").unlink()
    assert main(["resume", str(killed), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"NOTICE: {killed / 'notes.md'} is missing: the run is resumed from private.json" in err
    assert f"NOTICE: {killed}/events.jsonl line {at + 1} is not a readable event" in err
    assert (killed / "events.jsonl").read_text().split("\n")[at] == events[at]
    assert (killed / "prompts.jsonl").read_text().split("\n")[0] == prompts[0]
    report = audit_run(killed)
    assert not report.clean and any(f"events.jsonl line {at + 1} cannot be read" in p for p in report.problems)
    assert any('prompts.jsonl line 1 cannot be read ("beat"' in p for p in report.problems)
    assert any(f"line {base + 1}: request {base + 1} extends request 1, whose line cannot be read" in p
               for p in report.problems)
    after = [json.loads(line) for line in (killed / "prompts.jsonl").read_text().splitlines()[len(prompts):]]
    first = json.loads(prompts[0])["to"]
    assert "request" in next(r for r in after if r["to"] == first), "its next request stands whole"
    assert not (killed / ".lock").exists() and (killed / "metadata.json").exists()


@pytest.mark.parametrize("beats_played", [False, True])
async def test_a_torn_start_record_says_to_play_again_only_when_nothing_was_played(run_scene, tmp_path, capsys,
                                                                                   beats_played):
    """A disk that fills while `private.json` is written leaves it torn with nothing played: the refusal
    says to play the scene again. A run that played beats is not told so (its beats would be lost)."""
    whole = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C")
    torn = tmp_path / "torn"
    shutil.copytree(whole.dir, torn)
    raw = (torn / "private.json").read_bytes()
    (torn / "private.json").write_bytes(raw[: len(raw) // 2])
    if not beats_played:
        lines = (torn / "events.jsonl").read_text().splitlines(keepends=True)
        (torn / "events.jsonl").write_text("".join(line for line in lines if json.loads(line)["type"] in ("start", "spawn")))
    for command in (["resume", str(torn)], ["audit", str(torn)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "start record is damaged" in err
        assert ("play the scene again" in err) is not beats_played, err
