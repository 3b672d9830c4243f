"""Promptdesk driven by a script: a closed stdout or stderr, a reader that goes away, and a finished
run resumed on a machine without the run's API key."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import example_scene
from loopback import LoopbackServer, Reply
from promptdesk.core.cli.main import main
from test_scene_faults import CANARY, remote_cast, turn


def closed(*args: str, cwd: Path, close: str = ">&-") -> subprocess.CompletedProcess:
    """`python -m promptdesk ARGS >&-` (or `2>&-`), as a shell script writes it."""
    return subprocess.run(["sh", "-c", f'exec "$0" -m promptdesk "$@" {close}', sys.executable, *args], cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


def offline_run(cwd: Path, seed: int = 3) -> Path:
    done = subprocess.run([sys.executable, "-m", "promptdesk", "--batch", "morning-kitchen", "--isolation", "b",
                           "--coordinator", "C", "--provider", "offline", "--seed", str(seed), "--quiet",
                           "--out", f"run{seed}", "--journals", "none"], cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return cwd / f"run{seed}"


@pytest.mark.parametrize("args", [("metrics", "run3", "--json"), ("schema", "scene"), ("paths",), ("--version",),
                                  ("metrics", "--help"), ("compare", "run3", "--csv")])
def test_a_closed_stdout_is_said_and_fails_never_exit_0_with_nothing_delivered(tmp_path, args):
    """`promptdesk metrics RUN --json >&-`: Python's print to a closed stdout does nothing, and the
    command exited 0 having delivered nothing (`compare --csv` died in a traceback)."""
    offline_run(tmp_path)
    done = closed(*args, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("RECORDING_ERROR: could not write the output: the standard output is closed"), done.stderr


def test_a_batch_run_needs_no_stdout(tmp_path):
    """`--batch` writes nothing to stdout (its lines and summary go to stderr): a closed stdout is no fault."""
    done = closed("--batch", "morning-kitchen", "--isolation", "b", "--coordinator", "C", "--provider", "offline",
                  "--quiet", "--journals", "none", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Scene closed:" in done.stderr


def test_a_closed_stderr_never_puts_a_message_into_the_data(tmp_path):
    """`promptdesk metrics nosuch --json 2>&-`: with sys.stderr None, `print(..., file=sys.stderr)`
    printed the refusal to stdout, where a script reads JSON."""
    done = closed("metrics", "nosuch", "--json", cwd=tmp_path, close="2>&-")
    assert done.returncode == 2
    assert done.stdout == ""


def test_evaluate_scores_every_run_when_its_reader_goes_away(tmp_path):
    """`promptdesk evaluate SWEEP | head -1`: the first write to the closed pipe ended the command,
    and the runs after the first were never scored. Now every run is scored, the printing stops
    quietly, and the lost output is said by the exit code (1, as for any output that was lost)."""
    runs = [offline_run(tmp_path, seed) for seed in (1, 2, 3)]
    reader, writer = os.pipe()
    os.close(reader)  # the reader went away before the first line
    try:
        done = subprocess.run([sys.executable, "-m", "promptdesk", "evaluate", *map(str, runs)], cwd=tmp_path,
                              stdin=subprocess.DEVNULL, stdout=writer, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(writer)
    assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr
    for run in runs:
        scored = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
        assert sum(event["type"] == "evaluation" for event in scored) == 2, run
    assert "Evaluation calls of this command cost" in done.stderr


async def test_resuming_a_finished_remote_run_without_its_key_says_it_is_finished(run_scene, monkeypatch, capsys):
    """A CI job that resumes every run folder, on a machine without the run's API key: a finished
    run was refused for the key (`PROVIDER_ERROR: anthropic: no API key`), as if setting it would
    let it resume. It is finished: that is said, exit 2, whatever key is set."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    with LoopbackServer(Reply(text=turn('[TONE: calm] "Go on."', "I wait and see."))) as server:
        scene = example_scene("the-apology", limits={"max_beats": 2}, cast=remote_cast(server, "alice", "bob", "charlie"))
        run = await run_scene(scene, isolation="b", coordinator="C")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["resume", str(run.dir)]) == 2
    err = capsys.readouterr().err
    assert "is finished (it was closed cleanly): there is nothing to resume" in err, err
    assert "API key" not in err


async def test_a_cut_remote_run_without_its_key_still_names_the_key(run_scene, monkeypatch, capsys):
    from test_resume import kill_mid_beat

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    with LoopbackServer(Reply(text=turn('[TONE: calm] "Go on."', "I wait and see."))) as server:
        scene = example_scene("the-apology", limits={"max_beats": 4}, cast=remote_cast(server, "alice", "bob", "charlie"))
        run = await run_scene(scene, isolation="b", coordinator="C")
    kill_mid_beat(run.dir, 2)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["resume", str(run.dir)]) == 2
    assert "no API key; set ANTHROPIC_API_KEY" in capsys.readouterr().err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_evaluate_stops_cleanly_on_a_signal(tmp_path, signum):
    """`promptdesk evaluate` in a CI job that is cancelled: Ctrl-C was a KeyboardInterrupt traceback and
    SIGTERM killed it outright (the folder's derived files never written). Now the call in flight is
    cancelled, the run's files are written, the lock is let go, stderr says what to do, exit 1."""
    from test_engine_signals import wait_until

    runs = [offline_run(tmp_path, seed) for seed in (1, 2)]
    with LoopbackServer(Reply(delay_s=60.0)) as server:
        env = {**os.environ, "OPENAI_API_KEY": "test-key"}
        proc = subprocess.Popen([sys.executable, "-m", "promptdesk", "evaluate", *map(str, runs), "--provider",
                                 "openai-compatible", "--model", "m", "--base-url", server.url("/v1")], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: server.hits >= 1, proc)
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert f"Stopped by {signal.Signals(signum).name}: the scores given so far are recorded" in err, err
    assert '"purpose": "evaluate"' not in (runs[1] / "events.jsonl").read_text()  # no run begun after the stop
    again = subprocess.run([sys.executable, "-m", "promptdesk", "evaluate", str(runs[0])], cwd=tmp_path,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr  # the folder's lock was let go


def test_ctrl_c_in_a_command_without_a_graceful_stop_exits_130_without_a_traceback(monkeypatch, capsys):
    from promptdesk.core.cli import metrics

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(metrics, "main", interrupted)
    assert main(["metrics", "somewhere"]) == 130
    assert capsys.readouterr().err == "Interrupted (Ctrl-C).\n"


@pytest.mark.parametrize("takes", [False, True], ids=["sweep", "sweep of takes"])
def test_a_sweep_stops_cleanly_on_sighup_as_a_batch_run_does(tmp_path, takes):
    """A sweep started from a terminal that is closed (or `kill -HUP`): `--batch` stops gracefully,
    the sweep died at once, leaving each live run cut without its close."""
    from test_engine_signals import wait_until

    plan = (["--branch-from", str(offline_run(tmp_path)), "--at-beat", "1", "--note", "Be brief."] if takes else
            ["the-apology", "--isolation", "a,b", "--coordinator", "C", "--provider", "offline"])
    proc = subprocess.Popen([sys.executable, "-m", "promptdesk", "sweep", *plan, "--seeds", "1-20", "--concurrency", "2",
                             "--out", "sw"], cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: any('"type": "beat"' in p.read_text() for p in (tmp_path / "sw").glob("*/events.jsonl")),
                   proc)
        proc.send_signal(signal.SIGHUP)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert "sweep stopped by a signal" in err, err
    stopped = []
    for log in (tmp_path / "sw").glob("*/events.jsonl"):
        assert '"type": "close"' in log.read_text(), log
        if '"reason": "stop"' in log.read_text():
            stopped.append(log.parent)
    assert stopped
    # `resume` of one of them says the sweep continues it (it said "finished (it was closed cleanly)")
    done = subprocess.run([sys.executable, "-m", "promptdesk", "resume", f"sw/{stopped[0].name}"], cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith(f"INVALID_CONFIG: sw/{stopped[0].name} was stopped with its sweep"), done.stderr
    assert "run the sweep's command again (its --out sw)" in done.stderr


async def test_a_server_taken_from_the_environment_is_recorded_and_resume_goes_there(run_scene, monkeypatch):
    """`OPENAI_BASE_URL=http://local/v1 promptdesk --batch …` (a CI job's environment): the run went to
    that server, but private.json recorded no server, so a `resume` from another shell (or job) sent
    the rest of the run to api.openai.com, and the record never said where the run went."""
    from test_resume import kill_mid_beat

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    with LoopbackServer(Reply(text=turn('[TONE: calm] "Go on."', "I wait and see."))) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url("/v1"))
        cast = {slug: {"provider": "openai", "model": "gpt-4o", "max_retries": 0, "timeout_s": 5}
                for slug in ("alice", "bob", "charlie")}
        run = await run_scene(example_scene("the-apology", limits={"max_beats": 4}, cast=cast), isolation="b",
                              coordinator="C")
        recorded = json.loads((run.dir / "private.json").read_text())["providers"]
        assert {spec["base_url"] for spec in recorded.values()} == {server.url("/v1")}
        kill_mid_beat(run.dir, 2)
        monkeypatch.delenv("OPENAI_BASE_URL")
        before = server.hits
        assert await asyncio.to_thread(main, ["resume", str(run.dir), "--quiet"]) == 0
        assert server.hits > before


def test_evaluate_of_several_runs_with_an_evaluator_that_cannot_be_built_is_a_flag_to_fix(tmp_path):
    """`promptdesk evaluate SWEEP --provider anthropic --model M` without ANTHROPIC_API_KEY: each run got a
    `NOT EVALUATED: PROVIDER_ERROR: … no API key` line on stdout and the command exited 1, as if runs had
    failed; given one run it exits 2. A script tells bad input from a failed run by that code."""
    runs = [offline_run(tmp_path, seed) for seed in (1, 2)]
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run([sys.executable, "-m", "promptdesk", "evaluate", *map(str, runs), "--provider", "anthropic",
                           "--model", "claude-sonnet-4-6"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == "PROVIDER_ERROR: anthropic: no API key; set ANTHROPIC_API_KEY in the environment\n"


def test_report_on_a_full_disk_is_a_failure_not_bad_input_and_leaves_no_half_page(tmp_path):
    """`promptdesk report RUN --html page.html` on a full disk (here /dev/full) exited 2 with
    INVALID_CONFIG, the code of a flag to fix, and a real disk kept a truncated page (the file was
    opened with O_TRUNC and written in place). A disk's failure is RECORDING_ERROR, exit 1; a file is
    replaced in one step; a folder that does not exist stays a flag to fix (2)."""
    run = offline_run(tmp_path)
    full = subprocess.run([sys.executable, "-m", "promptdesk", "report", str(run), "--html", "/dev/full"], cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert full.returncode == 1, full.stderr
    assert full.stderr.startswith("RECORDING_ERROR: could not write --html /dev/full: No space left on device")
    missing = subprocess.run([sys.executable, "-m", "promptdesk", "report", str(run), "--html", "nosuch/page.html"],
                             cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and missing.stderr.startswith("INVALID_CONFIG: cannot write --html nosuch/page.html")
    page = tmp_path / "page.html"
    page.write_text("an older page")
    os.link(page, tmp_path / "kept.html")  # the old page's inode: replaced in one step, it is never written into
    done = subprocess.run([sys.executable, "-m", "promptdesk", "report", str(run), "--html", str(page)], cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert page.read_text().startswith("<!doctype html>") and (tmp_path / "kept.html").read_text() == "an older page"
    assert oct(page.stat().st_mode & 0o777) == "0o600"


def test_resume_dot_inside_a_sweeps_stopped_run_says_to_run_the_sweep_again(tmp_path, monkeypatch):
    """`cd sw/a-C-seed2 && promptdesk resume .`: `Path('.').parent` is the run itself, so the sweep's plan beside
    it was never seen and resume told to branch the run (a take outside the sweep) instead of running the sweep
    again; the sweep's folder is said as the user can type it from where they are."""
    from promptdesk.core.casting.journal_resume import finished

    sweep = tmp_path / "sw"
    sweep.mkdir()
    run = offline_run(sweep)
    log = run / "events.jsonl"
    lines = log.read_text().splitlines()
    close = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "close")
    lines[close] = json.dumps({**json.loads(lines[close]), "reason": "stop"})
    log.write_text("\n".join(lines) + "\n")
    (sweep / "sweep.yaml").write_text("scene: morning-kitchen\n")
    monkeypatch.chdir(run)
    said = finished(Path("."))
    assert "was stopped with its sweep" in said and "(its --out ..)" in said, said
    monkeypatch.chdir(tmp_path)
    assert "(its --out sw)" in finished(Path("sw") / run.name)
