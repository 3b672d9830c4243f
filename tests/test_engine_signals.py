"""`promptdesk --batch` as a real process under real signals and a closed stderr: SIGTERM and SIGHUP
close the run like Ctrl-C, Ctrl-C works during the journal step, and a reader that goes away
(`2>&1 | head -1`) never costs the run. The model is the offline improviser (slowed down where a test
needs the run to be busy) or the loopback server holding a call; every wait is on something
observable (a line in `events.jsonl`, a request reaching the server), with a generous deadline only
as a safety net."""

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
import yaml

from helpers import CHARACTERS, ROOT, SCENES
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import scripted, turn

DEADLINE_S = 30.0
HELD = Reply(delay_s=60.0)
"""A reply that never comes while the test runs (the server releases it at shutdown)."""


def is_journal(recorded) -> bool:
    return "Write a brief journal entry" in json.dumps(recorded.body["messages"][-1])


def offline_scene(tmp_path: Path, latency_ms: list[int] | None) -> Path:
    """The example scene on the offline improviser, each reply taking `latency_ms` (None: at once)."""
    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    data["provider"] = {"name": "offline", "latency_ms": latency_ms}
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def start(tmp_path: Path, server=None, *extra: str, scene: Path | None = None,
          stderr=subprocess.DEVNULL) -> tuple[subprocess.Popen, Path]:
    """Start a batch run: on the loopback `server`, or on `scene` (offline) when no server is given."""
    out = tmp_path / "run"
    characters = shutil.copytree(CHARACTERS, tmp_path / "characters")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": "test-key"}
    model = (["--provider", "anthropic", "--model", "claude-sonnet-4-6", "--base-url", server.url()]
             if server else [])
    command = [sys.executable, "-m", "promptdesk.core.cli.main", "--batch", str(scene or SCENES / "the-apology.yaml"),
               "--isolation", "b", "--coordinator", "C", *model, "--characters-dir", str(characters),
               "--out", str(out), "--seed", "1", *extra]
    return subprocess.Popen(command, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=stderr), out


def records(out: Path) -> list[dict]:
    path = out / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def wait_until(condition, proc: subprocess.Popen) -> None:
    """Poll an observable condition; fail if the process ends first or the deadline passes."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert proc.poll() is None, f"the run ended early with exit code {proc.returncode}"
        assert time.monotonic() < deadline, "the run never reached the expected state"
        time.sleep(0.02)


def assert_whole(out: Path) -> list[dict]:
    """Every derived file written, and the log closed."""
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json", "notes.md"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    log = records(out)
    assert [r["type"] for r in log].count("close") == 1
    return log


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_close_the_run_like_ctrl_c(tmp_path, signum):
    proc, out = start(tmp_path, None, "--max-beats", "10", scene=offline_scene(tmp_path, [60_000, 60_000]))
    try:
        wait_until(lambda: any(r["type"] == "beat" for r in records(out)), proc)
        proc.send_signal(signum)
        assert proc.wait(timeout=DEADLINE_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    log = assert_whole(out)
    stop = [r["type"] for r in log].index("stop")
    assert log[-1]["type"] == "close" and log[-1]["reason"] == "stop"
    assert all(r["type"] == "call" and not r["ok"] for r in log[stop + 1:-1]), "only the cancelled calls between"
    assert json.loads((out / "metadata.json").read_text())["reason"] == "stop"


def test_ctrl_c_during_the_journal_step_stops_it_and_writes_every_file(tmp_path, loopback):
    loopback.default = scripted(lambda who, r: HELD if is_journal(r) else turn('[TONE: calm] "Go on."'))
    proc, out = start(tmp_path, loopback, "--max-beats", "1")
    try:
        wait_until(lambda: any(is_journal(r) for r in list(loopback.requests)), proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=DEADLINE_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    log = assert_whole(out)
    types = [r["type"] for r in log]
    stop = types.index("stop")
    assert types.index("close") < stop and log[stop]["text"] == "Journal step stopped by the operator"
    assert all(r["type"] == "call" and not r["ok"] for r in log[stop + 1:]), "only the cancelled calls follow"
    assert json.loads((out / "metadata.json").read_text())["reason"] == "max_beats_exceeded"


def test_a_closed_stderr_does_not_abort_the_run(tmp_path):
    proc, out = start(tmp_path, None, "--max-beats", "3", scene=offline_scene(tmp_path, None),
                      stderr=subprocess.PIPE)
    proc.stderr.close()  # the reader is gone before the first line (`2>&1 | head -1` once it has its line)
    try:
        assert proc.wait(timeout=DEADLINE_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    log = assert_whole(out)
    assert [r["type"] for r in log].count("journal") == 3
    assert json.loads((out / "metadata.json").read_text())["reason"] == "max_beats_exceeded"
    assert sorted(p.stem for p in (out / "journals").glob("*.md")) == ["alice", "bob", "charlie"]
