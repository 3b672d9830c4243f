"""A sweep under a failing world: a provider's header asking for a wait that never ends, a disk that
refuses a write, a budget that cannot be kept. Real runs (offline improviser, or the real SDKs
against the loopback server), real sweep folders, the real CLI; waits run on a virtual clock."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.cli.sweep import parser, plan_from
from promptdesk.core.experiments.progress import Progress
from promptdesk.core.experiments.sweep import Sweep, SweepPlan, read_results, run_with_signals
from promptdesk.core.record.recorder import read_events
from helpers import CHARACTERS, ROOT
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, turn  # noqa: F401  (autouse fixture)
from test_sweep import StepClock, scene_file, sweep_args

SPENT_TILL_2099 = {"anthropic-ratelimit-requests-remaining": "0",
                   "anthropic-ratelimit-requests-reset": "2099-01-01T00:00:00Z",
                   "anthropic-ratelimit-tokens-remaining": "90000",
                   "anthropic-ratelimit-tokens-reset": "2099-01-01T00:00:00Z"}


async def test_a_reset_in_2099_is_a_capped_wait_said_once(tmp_path, loopback):
    """The first answer says the request budget is spent until 2099: every run's next call waits
    the spec's `retry_after_cap_s` (12 s, on the limiter's clock), it is said once, and the sweep
    finishes."""
    words = Reply(text=turn('[TO: Bob] "Go on."', "Listen."))
    loopback.default = words
    loopback.script(Reply(text=words.text, headers=SPENT_TILL_2099))
    cast = remote_cast(loopback, "alice", "bob", "charlie")
    for spec in cast.values():
        spec["retry_after_cap_s"] = 12
    plan = SweepPlan(scene=str(scene_file(tmp_path, cast=cast)), isolations=["a", "b"], coordinators=["C"], seeds=[1],
                     characters_dirs=[str(CHARACTERS)], max_beats=2, concurrency=2)
    stream, clock = io.StringIO(), StepClock()
    sweep = Sweep(plan, tmp_path / "sweep", Progress(stream, tty=False))
    sweep.limiters.clock = clock
    sweep.validate()
    await run_with_signals(sweep, sweep.prepare_folder())
    said = [line for line in stream.getvalue().splitlines() if "waiting" in line]
    assert len(said) == 1, said
    assert said[0].startswith("anthropic claude-sonnet-4-6: waiting 12 s: the provider says the request budget is "
                              "spent (it asked for 2") and said[0].endswith(" days; capped by retry_after_cap_s)")
    assert clock.waits == [12.0]                             # one pause, shared by every run, never 2099
    assert sorted(r["run"] for r in read_results(tmp_path / "sweep")) == ["a-C-seed1", "b-C-seed1"]
    logged = "".join((tmp_path / "sweep" / run / "debug.log").read_text() for run in ("a-C-seed1", "b-C-seed1"))
    assert "waiting 12 s: the provider says the request budget is spent" in logged


def test_a_results_file_that_cannot_be_written_stops_the_sweep_and_the_rerun_completes(tmp_path, capsys):
    scene, out = scene_file(tmp_path), tmp_path / "sweep"
    args = sweep_args(scene, out, "--concurrency", "2")
    sweep = Sweep(plan_from(parser().parse_args(args[1:])), out)
    sweep.prepare_folder()                                   # the same plan, recorded; nothing run yet
    sweep.release()
    (out / "results.jsonl").mkdir()                          # a folder where the results file should be
    assert main(args) == 1
    err = capsys.readouterr().err
    assert f"RECORDING_ERROR: could not write {out / 'results.jsonl'}" in err
    assert "run the same command again" in err and "Traceback" not in err and "IsADirectoryError" not in err
    assert "sweep stopped: a file could not be written" in err
    (out / "results.jsonl").rmdir()
    assert main(args) == 0
    assert sorted(r["run"] for r in read_results(out)) == ["a-C-seed1", "a-C-seed2", "b-C-seed1", "b-C-seed2"]
    assert all(r["close_reason"] not in ("error", "record-error") for r in read_results(out))


FSIZE = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
         "from promptdesk.core.cli.main import main; sys.exit(main(sys.argv[1:]))")


def sweep_under_file_limit(limit: int, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The sweep in another process whose files may not grow beyond `limit` bytes (a full disk, as
    far as every write past it can tell: it fails with EFBIG)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", FSIZE.format(limit=limit), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("limit, fails", [(8, "could not write a scratch folder in"),  # checking the plan
                                          (200, "could not write {out}/sweep.yaml"),  # the plan, before any run
                                          (6000, "could not write the run folder {out}/"),  # a run's private record
                                          (21600, ".jsonl in {out}/")])  # a run's log, mid-run (private.json fits)
def test_a_full_disk_is_a_recording_error_naming_the_file_and_the_sweep_resumes(tmp_path, limit, fails):
    """A real write failure (RLIMIT_FSIZE): on the sweep's own plan file, or on a run's record
    mid-run. Exit 1, RECORDING_ERROR naming the file, no traceback; the same command run again
    finishes every run, and no run carries a broken result."""
    scene, out = scene_file(tmp_path), tmp_path / "sweep"
    args = sweep_args(scene, out, "--concurrency", "2")
    args[args.index("1-2")] = "1"
    done = sweep_under_file_limit(limit, args, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "RECORDING_ERROR: could not write" in done.stderr and fails.format(out=out) in done.stderr, done.stderr
    assert "File too large" in done.stderr and "Traceback" not in done.stderr
    earned = read_results(out)                               # a run may have finished before the failure
    assert len(earned) < 2 and all(r["close_reason"] not in ("error", "record-error", "stop") for r in earned), earned
    assert main(args) == 0
    rows = read_results(out)
    assert sorted(r["run"] for r in rows) == ["a-C-seed1", "b-C-seed1"]
    assert all(r["close_reason"] not in ("error", "record-error") for r in rows)
    for run in ("a-C-seed1", "b-C-seed1"):
        assert [e.type for e in read_events(out / run)].count("close") == 1


@pytest.mark.parametrize("budget, says", [("nan", "--budget-usd: must be a finite amount in USD more than 0, not 'nan'"),
                                          ("inf", "--budget-usd: must be a finite amount in USD more than 0, not 'inf'"),
                                          ("-1", "--budget-usd: must be a finite amount in USD more than 0, not '-1'")])
def test_a_budget_that_is_no_amount_is_refused_before_any_request(tmp_path, loopback, capsys, budget, says):
    loopback.default = Reply(text=turn('[TO: Bob] "Go on."', "Listen."))
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie"))
    out = tmp_path / "sweep"
    assert main(sweep_args(scene, out, "--budget-usd", budget)) == 2
    assert says in capsys.readouterr().err
    assert loopback.hits == 0 and not out.exists()


def test_a_budget_on_an_unpriced_model_is_refused_before_any_request(tmp_path, loopback, capsys):
    loopback.default = Reply(text=turn('[TO: Bob] "Go on."', "Listen."))
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie", model="claude-home-brew"))
    out = tmp_path / "sweep"
    assert main(sweep_args(scene, out, "--budget-usd", "5")) == 2
    err = capsys.readouterr().err
    assert "--budget-usd 5.0 cannot be kept: no price is known for anthropic:claude-home-brew" in err
    assert loopback.hits == 0 and not out.exists()


def test_a_judges_unpriced_model_counts_for_the_budget(tmp_path, loopback, capsys):
    """Coordinator A asks a judge: when only the judge's model has no price, the budget is still refused."""
    loopback.default = Reply(text=turn('[TO: Bob] "Go on."', "Listen."))
    cast = remote_cast(loopback, "alice", "bob", "charlie")
    judge = {"name": "anthropic", "model": "claude-home-brew", "base_url": loopback.url(), "max_retries": 0}
    scene = scene_file(tmp_path, cast=cast, judge=judge)
    args = sweep_args(scene, tmp_path / "sweep", "--budget-usd", "5")
    args[args.index("C")] = "C,A"
    assert main(args) == 2
    assert "no price is known for anthropic:claude-home-brew" in capsys.readouterr().err
    assert loopback.hits == 0


def test_a_batch_run_whose_private_record_cannot_be_written_is_a_recording_error(tmp_path):
    out = tmp_path / "run"
    done = sweep_under_file_limit(6000, ["--batch", str(scene_file(tmp_path)), "--isolation", "a", "--coordinator", "C",
                                         "--seed", "1", "--characters-dir", str(CHARACTERS), "--out", str(out),
                                         "--quiet"], tmp_path)
    assert done.returncode == 1, done.stderr
    assert f"RECORDING_ERROR: could not write the run folder {out}: the file is larger" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("where", ["provider", "cast"])
@pytest.mark.parametrize("field", ["retry_after_cap_s", "timeout_s"])
def test_an_infinite_wait_cap_or_timeout_is_refused_naming_the_field(tmp_path, loopback, capsys, where, field):
    """A cap of .inf would honour a reset in 2099 (and an infinite timeout a stalled server): refused."""
    import yaml

    scene = yaml.safe_load(scene_file(tmp_path).read_text())
    provider = {"name": "anthropic", "model": "claude-sonnet-4-6", "base_url": loopback.url()}
    if where == "provider":
        scene["provider"] = {**provider, field: float("inf")}
    else:
        scene["provider"], scene["cast"] = provider, {"bob": {field: float("inf")}}
    (tmp_path / "scene.yaml").write_text(yaml.safe_dump(scene))
    out = tmp_path / "sweep"
    assert main(sweep_args(tmp_path / "scene.yaml", out)) == 2
    err = capsys.readouterr().err
    named = f"provider.{field}" if where == "provider" else f"cast.bob.{field}"
    assert f"{named}: Input should be a finite number" in err and "Traceback" not in err
    assert not out.exists() and loopback.hits == 0


def test_a_sweep_folder_whose_lock_cannot_be_written_is_a_recording_error_not_a_wrong_out(tmp_path):
    """The disk refuses the folder's lock record (EFBIG here, ENOSPC on a full disk): exit 1, not
    "give another --out" (exit 2), which is for a folder that cannot be a sweep folder at all."""
    scene, out = scene_file(tmp_path), tmp_path / "sweep"
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (4, 4))\n"
            "from promptdesk.core.cli.sweep import parser, plan_from\nfrom promptdesk.core.experiments.sweep import Sweep\n"
            "try:\n    Sweep(plan_from(parser().parse_args(sys.argv[1:])), __import__('pathlib').Path(sys.argv[-1]))"
            ".prepare_folder()\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n")
    args = sweep_args(scene, out)[1:] + ["--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.startswith(f"RecordingError RECORDING_ERROR: could not write {out}: the file is larger"), (
        done.stdout + done.stderr)


def test_a_recorded_budget_that_is_no_amount_is_refused_naming_the_plan_file(tmp_path, capsys):
    """A sweep folder from before budgets were checked may record `budget_usd: .nan`: a run of it
    without --budget-usd refuses it instead of taking it (nan compares false: no budget at all)."""
    import yaml

    scene, out = scene_file(tmp_path), tmp_path / "sweep"
    args = sweep_args(scene, out)
    args[args.index("1-2")] = "1"
    assert main([*args, "--isolation", "a"]) == 0
    plan = yaml.safe_load((out / "sweep.yaml").read_text())
    (out / "sweep.yaml").write_text(yaml.safe_dump({**plan, "seeds": [1], "budget_usd": float("nan")}))
    (out / "results.jsonl").write_text("")
    assert main([*args, "--isolation", "a"]) == 2
    assert f"{out / 'sweep.yaml'} records budget_usd nan, not a finite amount more than 0" in capsys.readouterr().err
