"""Nothing sent or shown is lost or replayed: a run killed with SIGKILL while its requests are in flight
has every request the server received in `prompts.jsonl` (each was written and flushed before it
was sent), every line it showed in `events.jsonl`, and `resume` never plays a finished beat again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.record.audit import audit_run
from promptdesk.core.record.prompt_log import read_prompts
from promptdesk.core.record.recorder import read_events
from helpers import CHARACTERS, ROOT, example_scene
from loopback import CANARY, LoopbackServer, Recorded, Reply

LINE = '<thinking>I weigh my words.</thinking>\n<speech>[TONE: calm] "Go on, then."</speech>'
JUDGE = '{"decision": "continue"}'


class HoldAfter:
    """A loopback reply source that answers the first `free` requests at once and holds every later one
    (in flight, on the server) until the test is done: the requests a kill finds under way."""

    def __init__(self, free: int, reply=lambda recorded: Reply(text=LINE)) -> None:
        self.free, self.reply = free, reply
        self.seen: list[Recorded] = []
        self.lock = threading.Lock()
        self.release = threading.Event()

    def __call__(self, recorded: Recorded) -> Reply:
        with self.lock:
            self.seen.append(recorded)
            held = len(self.seen) > self.free
        if held:
            self.release.wait(30)
        return self.reply(recorded)


def scene_file(tmp_path: Path, server: LoopbackServer, *, coordinator_judge: bool = False) -> Path:
    base = server.url("/v1")
    spec = {"provider": "openai-compatible", "model": "llama3", "base_url": base, "max_retries": 0, "timeout_s": 30}
    data = example_scene("the-apology", limits={"max_beats": 12}).model_dump(mode="json", by_alias=True, exclude_none=True)
    data["cast"] = {slug: dict(spec) for slug in ("alice", "bob", "charlie")}
    if coordinator_judge:
        data["judge"] = {"name": "openai-compatible", "model": "llama3", "base_url": base, "max_retries": 0,
                         "timeout_s": 30}
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def start(tmp_path: Path, scene: Path, coordinator: str = "C") -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "promptdesk.core.cli.main", "--batch", str(scene), "--isolation", "b", "--coordinator",
         coordinator, "--seed", "3", "--out", str(out), "--characters-dir", str(CHARACTERS), "--journals", "none"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": CANARY})
    return proc, out


def kill_when(proc: subprocess.Popen, ready, timeout_s: float = 60) -> None:
    """SIGKILL the run once `ready()` holds (polled; the run is waiting on the server meanwhile)."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert proc.poll() is None, f"the run ended first: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def sent_texts(recorded: list[Recorded]) -> list[str]:
    return [json.dumps(r.body["messages"], sort_keys=True) for r in recorded]


def logged_texts(run_dir: Path) -> list[str]:
    out = []
    for record in read_prompts(run_dir):
        request = record.request
        messages = ([{"role": "system", "content": request["system"]}] if request.get("system") else []) + [
            {"role": m["role"], "content": m["content"]} for m in request["messages"]]
        out.append(json.dumps(messages, sort_keys=True))
    return out


def test_every_request_the_server_received_before_a_kill_is_in_prompts_jsonl(tmp_path):
    """Beats 0-2 are answered (7 requests), beat 3's three requests are held on the server; the run is
    killed with all three in flight. All ten are in `prompts.jsonl`, those of beat 3 included."""
    source = HoldAfter(free=7)
    with LoopbackServer(source) as server:
        proc, out = start(tmp_path, scene_file(tmp_path, server))
        try:
            kill_when(proc, lambda: len(source.seen) >= 10)
            received = list(source.seen)
        finally:
            source.release.set()
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert len(received) == 10
    logged = logged_texts(out)
    assert sorted(logged) == sorted(sent_texts(received)), "every request received is on the record, as sent"
    beats = [record.beat for record in read_prompts(out)]
    assert beats.count(3) == 3, "the cut beat's requests are there"
    shown = [line for line in proc.stderr.read().splitlines() if "Go on, then." in line]
    spoken = [e for e in read_events(out) if e.type == "speak"]
    assert len(spoken) == len(shown) == 7, "every line the operator saw is in events.jsonl"
    assert main(["resume", str(out), "--quiet"]) in (0, 1)
    seam = next(e for e in read_events(out) if e.type == "resume")
    ids = seam.model_extra["unfinished_requests"]
    assert seam.beat == 3 and len(ids) == 3, "the seam names the cut beat's requests, kept in prompts.jsonl"
    assert [r.beat for r in read_prompts(out) if r.id in ids] == [3, 3, 3]
    report = audit_run(out)
    assert report.clean and report.unfinished == 3 and "3 of them sent in beats a kill cut off" in report.summary()
    assert json.loads((out / "metadata.json").read_text())["unfinishedRequests"] == 3


def test_resume_never_plays_again_a_beat_that_had_finished(tmp_path, capsys):
    """Killed while the coordinator's judge weighs beat 2 (its request held on the server): beats 0-2
    had finished and been shown. The resumed run keeps them as they were, makes the check again and
    goes on with beat 3: no beat is played twice, no line is replaced."""
    def reply(recorded: Recorded) -> Reply:
        return Reply(text=JUDGE if "decision" in json.dumps(recorded.body["messages"][0]) else LINE)

    source = HoldAfter(free=9, reply=reply)  # beat 0: 1 turn + 1 judge; beats 1, 2: 3 turns + 1 judge each (less one)
    with LoopbackServer(source) as server:
        proc, out = start(tmp_path, scene_file(tmp_path, server, coordinator_judge=True), coordinator="B")
        try:
            kill_when(proc, lambda: len(source.seen) >= 10)
        finally:
            source.release.set()
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL
        before = [(e.from_, e.beat, e.text) for e in read_events(out) if e.type == "speak"]
        assert sorted({beat for _, beat, _ in before}) == [0, 1, 2] and len(before) == 7
        assert [e.beat for e in read_events(out) if e.type == "beat_end"] == [0, 1, 2]
        assert main(["resume", str(out), "--quiet"]) in (0, 1)
    events = read_events(out)
    seam = next(e for e in events if e.type == "resume")
    assert seam.beat == 3 and "beat 2 had finished" in seam.text
    assert [(e.from_, e.beat, e.text) for e in events if e.type == "speak" and e.beat <= 2] == before
    beats = [e.beat for e in events if e.type == "beat"]
    assert beats == list(range(len(beats))), "no beat is played twice"
    moved = out / "superseded.jsonl"
    assert not moved.exists() or '"speak"' not in moved.read_text()
    judged = [r for r in read_prompts(out) if r.purpose == "judge" and r.beat == 2]
    assert len(judged) == 2 and judged[0].id in seam.model_extra["unfinished_requests"], "the check is made again"


@pytest.mark.parametrize("kind", ["think", "speak", "event", "call", "beat", "beat_end"])
def test_a_shown_event_is_flushed_before_it_is_shown_while_routes_wait(tmp_path, kind):
    """While a beat is held, every event is on disk before a subscriber sees it, but `route`."""
    from promptdesk.core.record.events import GenericEvent, parse_event_json
    from promptdesk.core.record.recorder import Recorder

    recorder = Recorder(tmp_path / "run")
    recorder.open()
    recorder.hold = True
    data = {"t": 1.0, "from": "ann", "type": kind, "text": "x", "beat": 1}
    if kind == "call":
        data.update(target="ann", purpose="turn", provider="offline", ok=True)
    recorder.record(parse_event_json(json.dumps(data)))
    assert (tmp_path / "run" / "events.jsonl").read_text().count('"type"') == 1
    recorder.record(GenericEvent(t=1.0, **{"from": "coordinator"}, type="route", text="to bob", target="bob", beat=1))
    assert (tmp_path / "run" / "events.jsonl").read_text().count('"type"') == 1, "a route waits for the safe point"
    recorder.commit()
    assert (tmp_path / "run" / "events.jsonl").read_text().count('"type"') == 2
    recorder.finish(__import__("datetime").datetime.now())
