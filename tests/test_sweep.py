"""`promptdesk sweep` on the offline improviser and on real SDKs against the loopback server:
the plan, results.jsonl, resuming, a different plan refused, the budget, signals, shared rate limits."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.record.events import SpeakEvent
from promptdesk.core.providers.anthropic_provider import AnthropicProvider
from promptdesk.core.providers.base import Request
from promptdesk.core.providers.ratelimit import Limiters, Limits, LimitedProvider, RateLimiter
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.seams import superseded_calls
from promptdesk.core.experiments.sweep import Sweep, SweepPlan, read_results, run_with_signals
from promptdesk.core.experiments.sweep_checks import MAX_SEEDS, parse_seeds
from promptdesk.core.experiments.progress import Progress
from helpers import CHARACTERS, example_scene
from loopback import FakeSleep, Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import CANARY, keys, remote_cast, turn  # noqa: F401


def scene_file(tmp_path: Path, **update) -> Path:
    scene = example_scene("the-apology", **update)
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    return path


def sweep_args(scene: Path, out: Path, *extra: str) -> list[str]:
    return ["sweep", str(scene), "--isolation", "a,b", "--coordinator", "C", "--seeds", "1-2", "--out", str(out),
            "--characters-dir", str(CHARACTERS), "--max-beats", "6", *extra]


def test_seeds_parse_ranges_and_lists():
    assert parse_seeds("1-3,7,2") == [1, 2, 3, 7]
    assert parse_seeds(" 1 - 3 , 0") == [0, 1, 2, 3]


@pytest.mark.parametrize("text", ["1-", "-3", "1_000", "\uff11-3", "3-1", "1--3", "1-2-3"])
def test_seeds_are_ascii_whole_numbers_and_whole_ranges(text):
    """A range cut short (`1-`) is a typo, not seed 1; digit forms Python's int() takes beyond 0-9
    (`1_000`, fullwidth digits) are not what a seed looks like in a run folder's name."""
    with pytest.raises(InvalidConfig, match="--seeds must look like"):
        parse_seeds(text)


def test_a_huge_seed_range_is_refused_at_once_with_its_size():
    """A billion seeds would be built in memory (and planned as a billion runs per condition) before
    anything said so: the range is sized first and refused, naming the count and the limit."""
    started = time.monotonic()
    with pytest.raises(InvalidConfig) as refused:
        parse_seeds("1-1000000000")
    assert time.monotonic() - started < 1
    assert "1,000,000,000 seeds" in str(refused.value) and f"{MAX_SEEDS:,}" in str(refused.value)
    with pytest.raises(InvalidConfig, match=f"{MAX_SEEDS + 1:,} seeds"):
        parse_seeds(f"1-{MAX_SEEDS // 2},{MAX_SEEDS // 2 + 1}-{MAX_SEEDS + 1}")
    assert len(parse_seeds(f"1-{MAX_SEEDS}")) == MAX_SEEDS


def test_a_sweep_runs_every_combination_as_an_ordinary_run(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(sweep_args(scene_file(tmp_path), out, "--concurrency", "3")) == 0
    rows = read_results(out)
    assert sorted(r["run"] for r in rows) == ["a-C-seed1", "a-C-seed2", "b-C-seed1", "b-C-seed2"]
    for row in rows:
        start = json.loads((out / row["run"] / "events.jsonl").read_text().splitlines()[0])
        assert (start["isolation"], start["coordinator"], start["seed"]) == (row["isolation"], row["coordinator"], row["seed"])
        assert (out / row["run"] / "transcript.md").is_file() and row["close_reason"] != "error"
    plan = yaml.safe_load((out / "sweep.yaml").read_text())
    assert (plan["isolations"], plan["coordinators"], plan["seeds"]) == (["a", "b"], ["C"], [1, 2])
    err = capsys.readouterr().err
    assert "4/4 done, 0 failed" in err and "\x1b[" not in err          # stderr is not a terminal: plain lines


def test_a_sweep_run_plays_exactly_as_the_same_batch_run(tmp_path):
    scene = scene_file(tmp_path)
    assert main(sweep_args(scene, tmp_path / "sweep")) == 0
    assert main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "2", "--max-beats", "6",
                 "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "batch"), "--quiet"]) == 0

    def spoken(run: Path):
        return [(e.from_, e.action, e.text) for e in read_events(run) if isinstance(e, SpeakEvent)]
    assert spoken(tmp_path / "sweep" / "b-C-seed2") == spoken(tmp_path / "batch") != []


def test_running_the_same_sweep_again_resumes(tmp_path):
    scene, out = scene_file(tmp_path), tmp_path / "sweep"
    assert main(sweep_args(scene, out)) == 0
    rows = read_results(out)
    kept = [r for r in rows if r["run"] != "b-C-seed2"]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept) + '{"run": "torn')
    (out / "b-C-seed2" / "metadata.json").unlink()  # killed before its files were written (a closed one is read)
    first_events = (out / "a-C-seed1" / "events.jsonl").read_text()
    assert main(sweep_args(scene, out)) == 0
    assert sorted(r["run"] for r in read_results(out)) == sorted(r["run"] for r in rows)
    assert (out / "a-C-seed1" / "events.jsonl").read_text() == first_events          # finished: not run again
    assert (out / "b-C-seed2.partial-1" / "events.jsonl").is_file()                   # unfinished: kept aside, rerun
    assert (out / "b-C-seed2" / "events.jsonl").is_file()


def test_a_different_plan_in_the_same_folder_is_refused(tmp_path, capsys):
    scene, out = scene_file(tmp_path), tmp_path / "sweep"
    assert main(sweep_args(scene, out)) == 0
    args = sweep_args(scene, out)
    args[args.index("1-2")] = "1-3"
    assert main(args) == 2
    assert "different plan (seeds differ)" in capsys.readouterr().err


@pytest.mark.parametrize("flag, value, says", [("--isolation", "a,c", "--isolation takes"),
                                               ("--seeds", "5-1", "--seeds must look like"),
                                               ("--concurrency", "0", "argument --concurrency: must be a positive whole number, not '0'")])
def test_bad_flags_exit_2_naming_the_flag_and_write_nothing(tmp_path, capsys, flag, value, says):
    args = sweep_args(scene_file(tmp_path), tmp_path / "sweep", "--concurrency", "2")
    args[len(args) - 1 - args[::-1].index(flag) + 1] = value
    assert main(args) == 2
    assert says in capsys.readouterr().err and not (tmp_path / "sweep").exists()


def test_the_budget_is_a_ceiling_for_the_whole_sweep(tmp_path, loopback, capsys):
    loopback.default = Reply(text=turn('[TO: Bob] "Go on."', "Listen."), usage={"input_tokens": 200_000})
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie"))
    out = tmp_path / "sweep"
    args = ["sweep", str(scene), "--isolation", "b", "--coordinator", "C", "--seeds", "1-3", "--concurrency", "1",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--budget-usd", "1.0"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "--budget-usd is spent" in err
    assert read_results(out) == []                                    # the stopped run runs again on resume
    events = read_events(out / "b-C-seed1")
    assert [e.type for e in events][-1] == "close" and any(e.type == "stop" for e in events)
    assert not (out / "b-C-seed2").exists() and not (out / "b-C-seed3").exists()


def test_a_budgeted_sweep_whose_record_holds_a_call_of_unknown_cost_is_not_resumed(tmp_path, loopback, capsys):
    """A server that answered with no token usage stopped the sweep (its budget cannot be kept). Run
    again under the same budget, the sweep does not count that call as $0 and go on spending: it starts
    nothing, sends nothing, names the run and says how to go on."""
    loopback.default = Reply(text=turn('[TO: Bob] "Go on."', "Listen."), no_usage=True)
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie", provider="openai",
                                                  model="gpt-4.1-mini"))
    out = tmp_path / "sweep"
    args = ["sweep", str(scene), "--isolation", "b", "--coordinator", "C", "--seeds", "1-2", "--concurrency", "1",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--max-beats", "3", "--budget-usd", "5"]
    assert main(args) == 1
    assert "a call sent no token usage" in capsys.readouterr().err
    sent = loopback.hits
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "The sweep's budget cannot be kept: 1 run(s) (b-C-seed1) made a call whose server sent no token usage" in err
    assert "nothing was started" in err and "another --out" in err
    assert loopback.hits == sent, "nothing was sent"


def test_a_run_resumed_after_the_budget_counts_its_cut_beats_paid_calls_everywhere(tmp_path, loopback, capsys):
    """A run the budget stopped mid-beat has paid for calls of the beat its resume plays again
    (`superseded.jsonl`). Its metadata counts them; so must its result line, `compare` and the report,
    or the same run shows three different costs."""
    from statistics import mean
    from promptdesk.core.experiments.compare import number
    from promptdesk.tui.screens.compare import measured as screen_measured
    loopback.default = Reply(text=turn('[TO: Bob] "Go on."', "Listen."), usage={"input_tokens": 200_000})
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie"))
    out = tmp_path / "sweep"
    args = ["sweep", str(scene), "--isolation", "b", "--coordinator", "C", "--seeds", "1-2", "--concurrency", "1",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--max-beats", "3", "--budget-usd", "1.0"]
    assert main(args) == 1
    assert main([*args[:-1], "100"]) == 0
    capsys.readouterr()
    assert b'"call"' in (out / "b-C-seed1" / "superseded.jsonl").read_bytes()   # a paid call of the cut beat
    rows = {r["run"]: r for r in read_results(out)}
    assert main(["compare", str(out), "--json"]) == 0
    compared = {r["run"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    for name in ("b-C-seed1", "b-C-seed2"):
        costs = json.loads((out / name / "metadata.json").read_text())["costs"]
        if costs["unknownUsageCalls"]:   # calls the budget's stop cut off in flight: what they were billed is unknown
            assert rows[name]["tokens"] is compared[name]["tokens"] is screen_measured(out / name).tokens is None
            assert rows[name]["cost_usd"] is compared[name]["cost_usd"] is None and costs["totalTokens"] > 0
            continue
        assert rows[name]["tokens"] == compared[name]["tokens"] == costs["totalTokens"]
        assert rows[name]["cost_usd"] == compared[name]["cost_usd"] == pytest.approx(costs["estimatedUSD"])
        assert screen_measured(out / name).tokens == costs["totalTokens"]      # the console's Compare screen
    cut = json.loads((out / "b-C-seed1" / "metadata.json").read_text())["costs"]
    assert costs["cutCalls"] == 0 and cut["cutCalls"] > 0
    paid = [c for c in superseded_calls(out / "b-C-seed1") if c.cost_usd is not None]
    assert paid, "the cut beat holds calls answered before the stop"
    whole = [e for e in read_events(out / "b-C-seed1") if e.type == "call" and e.cost_usd is not None]
    assert cut["totalTokens"] == sum(c.input_tokens + c.output_tokens + (c.cache_write_tokens or 0) + (c.cache_read_tokens or 0)
                                     for c in paid + whole)
    page = tmp_path / "sweep.html"
    assert main(["report", str(out), "--html", str(page)]) == 0
    known = [compared[name]["tokens"] for name in compared if compared[name]["tokens"] is not None]
    assert f"<td>tokens</td><td>{number(mean(known))}" in page.read_text()


def test_runs_whose_model_calls_all_failed_are_failed_runs_of_the_sweep(tmp_path, loopback, capsys):
    """`--batch` exits 1 on a run closed by `provider-error`; a sweep of such runs is no success either:
    the summary counts them as failed and it exits 1, run again too (their results stand), until
    `--retry-failed` plays them again."""
    loopback.default = Reply(status=500, error_message="overloaded")
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie"))
    out = tmp_path / "sweep"
    args = ["sweep", str(scene), "--isolation", "a,b", "--coordinator", "C", "--seeds", "1", "--concurrency", "2",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--max-beats", "3"]
    assert main(args) == 1
    assert "2/2 done, 2 failed" in capsys.readouterr().err
    assert {r["close_reason"] for r in read_results(out)} == {"provider-error"}
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "2 already done" in err and "2/2 done, 2 failed" in err and "--retry-failed" in err

    # Once the server is back, `--retry-failed` plays each failed run again and keeps the failed attempt:
    # its result line in results.failed.jsonl, its folder as <run>.failed-1; a line it cannot read stays.
    failed_lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(failed_lines) + '\n{"run": "a-C-seed1", "torn')
    loopback.default = Reply(text='<thinking>Steady.</thinking><speech>[TONE: calm] "Go on."</speech>')
    assert main([*args, "--retry-failed"]) == 0
    err = capsys.readouterr().err
    assert "2 failed run(s) played again" in err and "sweep finished — 2/2 done, 0 failed" in err
    assert "--retry-failed" not in err
    rows = read_results(out)
    assert sorted(r["run"] for r in rows) == ["a-C-seed1", "b-C-seed1"]
    assert not any(r["close_reason"] in ("error", "provider-error") for r in rows)
    assert (out / "results.failed.jsonl").read_text().splitlines() == failed_lines
    assert '{"run": "a-C-seed1", "torn' in (out / "results.jsonl").read_text()
    for name in ("a-C-seed1", "b-C-seed1"):
        assert (out / f"{name}.failed-1" / "events.jsonl").is_file() and (out / name / "events.jsonl").is_file()
    assert main([*args, "--retry-failed"]) == 0, "nothing failed: nothing to play again"
    assert "already done" in capsys.readouterr().err and not (out / "a-C-seed1.failed-2").exists()


async def test_sigterm_stops_every_live_run_cleanly(tmp_path):
    plan = SweepPlan(scene=str(scene_file(tmp_path)), isolations=["a", "b"], coordinators=["C"], seeds=[1, 2],
                     characters_dirs=[str(CHARACTERS)], concurrency=4)
    sweep = Sweep(plan, tmp_path / "sweep")
    todo = sweep.prepare_folder()
    original = sweep._watch
    speeches = []

    def watch(event):
        original(event)
        if isinstance(event, SpeakEvent):
            speeches.append(event)
            if len(speeches) == 3:
                os.kill(os.getpid(), signal.SIGTERM)
    sweep._watch = watch
    await run_with_signals(sweep, todo)
    assert sweep.stopping == "stop" and read_results(tmp_path / "sweep") == []
    for name in ("a-C-seed1", "a-C-seed2", "b-C-seed1", "b-C-seed2"):
        events = read_events(tmp_path / "sweep" / name)
        assert events[-1].type == "close" and events[-1].reason == "stop"
        assert (tmp_path / "sweep" / name / "metadata.json").is_file()


class StepClock:
    """A clock whose sleeps advance it at once, remembering each wait."""

    def __init__(self) -> None:
        self.t, self.waits = 0.0, []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.waits.append(round(seconds, 3))
        self.t += seconds


async def test_the_limiter_holds_requests_beyond_the_per_minute_limits():
    clock = StepClock()
    limiter = RateLimiter(Limits(requests_per_min=2, tokens_per_min=1000), clock)
    await limiter.acquire()
    await limiter.acquire()
    assert clock.waits == []
    await limiter.acquire()                                 # third request in the minute waits for the first to expire
    assert clock.waits == [60.0]
    limiter.spent(1000)
    await limiter.acquire()                                 # the token window is full until that spend is a minute old
    assert clock.waits == [60.0, 60.0]


async def test_a_retry_after_on_one_run_pauses_every_run_on_that_model(loopback):
    loopback.script(Reply(status=429, headers={"retry-after": "7"}), Reply(text="one"), Reply(text="two"))
    clock, limiters = StepClock(), Limiters(Limits())
    limiters.clock = clock
    first = LimitedProvider(AnthropicProvider("claude-haiku-4-5", api_key=CANARY, base_url=loopback.url(),
                                              sleep=FakeSleep(), max_retries=2), limiters.for_provider(
        AnthropicProvider("claude-haiku-4-5", api_key=CANARY, base_url=loopback.url())))
    second = LimitedProvider(AnthropicProvider("claude-haiku-4-5", api_key=CANARY, base_url=loopback.url()),
                             first.limiter)
    request = Request(to="alice", system="s", messages=[{"role": "user", "content": "hi"}])
    assert (await first.complete(request)).text == "one"
    assert clock.waits == []                                # the run that got the 429 waited through its own retry
    assert (await second.complete(request)).text == "two"
    assert clock.waits == [7.0]                             # the other run held off for the server's retry-after
    await first.aclose(), await second.aclose()


@pytest.mark.parametrize("stream", [False, True])
async def test_a_spent_budget_in_the_rate_limit_headers_pauses_every_run_on_that_model(loopback, stream):
    """OpenAI says `x-ratelimit-remaining-requests: 0`, reset in 6m0s: the next request on that
    model, from any run, waits for the reset (under a `retry_after_cap_s` that allows it) instead
    of drawing a 429."""
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    spent = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s",
             "x-ratelimit-remaining-tokens": "5000", "x-ratelimit-reset-tokens": "1s"}
    loopback.script(Reply(text="one", headers=spent), Reply(text="two"))
    clock, limiters = StepClock(), Limiters(Limits())
    limiters.clock = clock

    def provider():
        return OpenAIProvider("gpt-4o-mini", api_key=CANARY, base_url=loopback.url("/v1"), retry_after_cap_s=900)
    first = LimitedProvider(provider(), limiters.for_provider(provider()))
    second = LimitedProvider(provider(), first.limiter)
    request = Request(to="alice", system="s", messages=[{"role": "user", "content": "hi"}])
    pieces: list[str] = []
    assert (await first.complete(request, pieces.append if stream else None)).text == "one"
    assert (await second.complete(request)).text == "two"
    assert clock.waits == [360.0]
    await first.aclose(), await second.aclose()


async def test_a_spent_budget_seen_by_two_calls_at_once_is_one_wait_said_once(loopback):
    """Two runs' calls come back together, each saying the request budget is spent until 2099: one
    capped pause, one line for the operator; the calls queued behind it add nothing."""
    spent = {"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2099-01-01T00:00:00Z"}
    loopback.script(Reply(text="one", headers=spent), Reply(text="two", headers=spent))
    clock, said = StepClock(), []
    limiters = Limiters(Limits(), clock, say=said.append)

    def provider():
        return AnthropicProvider("claude-haiku-4-5", api_key=CANARY, base_url=loopback.url(), retry_after_cap_s=20)
    limiter = limiters.for_provider(provider())
    runs = [LimitedProvider(provider(), limiter) for _ in range(3)]
    request = Request(to="alice", system="s", messages=[{"role": "user", "content": "hi"}])
    await asyncio.gather(runs[0].complete(request), runs[1].complete(request))
    await asyncio.gather(runs[1].complete(request), runs[2].complete(request))
    assert clock.waits == [20.0]
    assert len(said) == 1 and said[0].startswith(
        "anthropic claude-haiku-4-5: waiting 20 s: the provider says the request budget is spent (it asked for ")
    for run in runs:
        await run.aclose()


async def test_a_retry_after_of_one_run_is_said_once_for_every_run_waiting_on_it(loopback):
    loopback.script(Reply(status=429, headers={"retry-after": "3600"}), Reply(text="one"), Reply(text="two"))
    clock, said = StepClock(), []
    limiters = Limiters(Limits(), clock, say=said.append)
    inner = AnthropicProvider("claude-haiku-4-5", api_key=CANARY, base_url=loopback.url(), sleep=clock.sleep,
                              max_retries=1, retry_after_cap_s=9)
    first = LimitedProvider(inner, limiters.for_provider(inner))
    second = LimitedProvider(AnthropicProvider("claude-haiku-4-5", api_key=CANARY, base_url=loopback.url()),
                             first.limiter)
    request = Request(to="alice", system="s", messages=[{"role": "user", "content": "hi"}])
    assert (await first.complete(request)).text == "one"
    assert (await second.complete(request)).text == "two"
    assert said == ["anthropic claude-haiku-4-5: waiting 9 s: the provider asked for a pause before the retry "
                    "(HTTP 429 with retry-after) (it asked for 60 min; capped by retry_after_cap_s)"]
    assert clock.waits == [9.0]                              # the retry's own wait; the other run's was over by then
    await first.aclose(), await second.aclose()


def test_anthropic_rate_limit_headers_are_read_as_a_wait_until_reset():
    from promptdesk.core.providers.rate_headers import rate_limit_wait

    headers = {"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": "2026-11-23T04:00:30Z",
               "anthropic-ratelimit-requests-remaining": "12", "anthropic-ratelimit-requests-reset": "2026-11-23T04:01:00Z"}
    now = 1795406400.0  # 2026-11-23T04:00:00Z
    assert rate_limit_wait(headers, now) == 30.0
    assert rate_limit_wait({"anthropic-ratelimit-tokens-remaining": "900"}, now) is None
    assert rate_limit_wait({}, now) is None


def test_progress_on_a_terminal_draws_a_bar_per_condition():
    stream = io.StringIO()
    progress = Progress(stream, tty=True, now=lambda: 0.0)
    plan = SweepPlan(scene="s.yaml", isolations=["a", "b"], coordinators=["C"], seeds=[1, 2])
    progress.begin(plan, [{"isolation": "a", "coordinator": "C", "close_reason": "natural", "cost_usd": 0.5}], 3)
    drawn = stream.getvalue()
    assert "a-C ██████████░░░░░░░░░░ 1/2" in drawn and "b-C ░░░░░░░░░░░░░░░░░░░░ 0/2" in drawn and "$0.5000" in drawn


def test_a_stopped_sweeps_closing_line_estimates_no_time_left():
    """While runs go on the summary has an ETA; once the sweep stops (a signal, its budget) nothing runs
    on, so its closing line has none."""
    from promptdesk.core.experiments.sweep_plan import Combination
    stream, clock = io.StringIO(), iter([0.0, 10.0, 10.0, 10.0])
    progress = Progress(stream, tty=False, now=lambda: next(clock))
    plan = SweepPlan(scene="s.yaml", isolations=["a"], coordinators=["C"], seeds=[1, 2, 3])
    progress.begin(plan, [], 3)
    progress.finished(Combination("a", "C", 1), {"close_reason": "natural"}, 0.0)
    progress.end("stop")
    lines = stream.getvalue().splitlines()
    assert "ETA 20s" in lines[1] and lines[2].startswith("sweep stopped by a signal") and "ETA" not in lines[2]


async def test_a_run_that_cannot_start_is_recorded_as_failed_not_dropped(tmp_path):
    import shutil
    cast = tmp_path / "cast"
    shutil.copytree(CHARACTERS, cast)
    plan = SweepPlan(scene=str(scene_file(tmp_path)), isolations=["b"], coordinators=["C"], seeds=[1, 2],
                     characters_dirs=[str(cast)], concurrency=1)
    sweep = Sweep(plan, tmp_path / "sweep")
    sweep.validate()
    todo = sweep.prepare_folder()
    (cast / "bob" / "profile.md").write_text("---\nname: [unclosed\n---\n")   # edited badly mid-sweep
    await sweep.run(todo)
    rows = read_results(tmp_path / "sweep")
    assert [(r["run"], r["close_reason"]) for r in rows] == [("b-C-seed1", "error"), ("b-C-seed2", "error")]
    assert all("bob" in r["error"] for r in rows) and sweep.failed == 2 and sweep.complete()


def test_two_sweeps_on_one_folder_one_runs_the_other_is_refused(tmp_path, loopback, capsys):
    from test_resume import Gate, cli

    gate = loopback.default = Gate(Reply(text=turn('[TO: Bob] "Go on."', "Listen.")))
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie", provider="openai-compatible",
                                                  model="llama3"))
    out = tmp_path / "sweep"
    args = ["sweep", str(scene), "--isolation", "a,b", "--coordinator", "C", "--seeds", "1", "--concurrency", "1",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--max-beats", "3"]
    first = cli(*args, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        assert gate.arrived.wait(60), "the first sweep never made a call"
        assert main(args) == 2
        assert f"{out} is being written by process {first.pid}, a sweep" in capsys.readouterr().err
        assert loopback.hits == 1 and not (out / "results.jsonl").exists()
    finally:
        gate.opened.set()
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert sorted(r["run"] for r in read_results(out)) == ["a-C-seed1", "b-C-seed1"]
    assert sorted(p.name for p in out.iterdir()) == ["a-C-seed1", "b-C-seed1", "results.jsonl", "spend.json", "sweep.yaml"]


def call_costs(folder: Path) -> float:
    """What every call recorded in the sweep's run folders cost (superseded attempts included); a call
    the budget's stop cut off in flight has an unknown cost, which the sweep's spend counts as $0."""
    total = 0.0
    for run in (p for p in folder.iterdir() if p.is_dir()):
        for name in ("events.jsonl", "superseded.jsonl"):
            if (run / name).is_file():
                total += sum(r.get("cost_usd") or 0.0 for r in map(json.loads, (run / name).read_text().splitlines())
                             if r.get("type") == "call")
    return total


def test_the_budget_holds_across_invocations_and_a_raised_one_continues_the_stopped_run(tmp_path, loopback, capsys):
    loopback.default = Reply(text=turn('[TO: Bob] "Go on."', "Listen."), usage={"input_tokens": 200_000})
    scene = scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie"))
    out = tmp_path / "sweep"
    base = ["sweep", str(scene), "--isolation", "b", "--coordinator", "C", "--seeds", "1-2", "--concurrency", "1",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--max-beats", "4"]

    assert main([*base, "--budget-usd", "1.0"]) == 1                      # $0.60 a call: stops inside beat 1
    err = capsys.readouterr().err
    spent = json.loads((out / "spend.json").read_text())["spent_usd"]
    assert spent >= 1.0 and spent == pytest.approx(call_costs(out))
    assert f"--budget-usd is spent (${spent:.4f} of $1.0000)" in err and f"${spent:.4f} spent" in err
    stopped_log = (out / "b-C-seed1" / "events.jsonl").read_text().splitlines(keepends=True)
    played = "".join(stopped_log[:max(i for i, line in enumerate(stopped_log) if '"type": "beat"' in line)])

    hits = loopback.hits
    for again in ([*base, "--budget-usd", "1.0"], base):                   # the same budget, or none given: it holds
        assert main(again) == 1
        err = capsys.readouterr().err
        assert loopback.hits == hits, "a spent budget starts nothing"
        assert f"budget is spent: ${spent:.4f} of --budget-usd 1" in err and "higher budget" in err

    assert main([*base, "--budget-usd", "100"]) == 0
    assert sorted(r["run"] for r in read_results(out)) == ["b-C-seed1", "b-C-seed2"]
    assert not [p for p in out.iterdir() if ".partial" in p.name], "the stopped run continued, it did not start over"
    resumed = read_events(out / "b-C-seed1")
    seams = [e for e in resumed if e.type == "resume"]
    assert len(seams) == 1 and seams[0].beat >= 1
    assert (out / "b-C-seed1" / "events.jsonl").read_text().startswith(played)
    total = json.loads((out / "spend.json").read_text())["spent_usd"]
    assert total == pytest.approx(call_costs(out)) and total > spent
    assert f"${total:.4f} spent" in capsys.readouterr().err


async def test_a_rate_limited_provider_sends_ahead_when_its_provider_does(loopback):
    """A sweep wraps each provider in its rate limiter: a provider asked to send ahead still does,
    and the request opened ahead is counted by the limiter when it is asked, as any other."""
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    loopback.script(Reply(text="one"), Reply(text="two"))
    inner = OpenAIProvider("gpt-4.1-mini", api_key=CANARY, base_url=loopback.url("/v1"), send_ahead=True)
    limiter = Limiters(Limits()).for_provider(inner)
    limited = LimitedProvider(inner, limiter)
    assert limited.sends_ahead
    first = Request(to="alice", system="s", messages=[{"role": "user", "content": "hi"}])
    pieces: list[str] = []
    assert (await limited.complete(first, pieces.append)).text == "one"
    thread = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "one"}]
    limited.open_early(Request(to="alice", system="s", messages=thread))
    asked = Request(to="alice", system="s", messages=[*thread, {"role": "user", "content": "again"}])
    assert (await limited.complete(asked, pieces.append)).text == "two"
    assert loopback.requests[-1].headers.get("transfer-encoding") == "chunked" and loopback.opened == 1
    assert len(limiter._requests) == 2, "each request counted once, when it was asked"
    await limited.drop_early()
    await limited.aclose()

def stalling_cast(tmp_path, loopback) -> tuple[Path, dict[str, bool]]:
    """A scene of three on the loopback server at $0.60 a call, whose Bob and Charlie stall mid-reply
    while the switch is on (a budget's stop then cuts them off in flight): the scene file and the switch."""
    from test_scene_faults import scripted
    stalling = {"on": True}

    def answer(who, recorded):
        reply = Reply(text=turn('[TO: Bob] "Go on."', "Listen."), usage={"input_tokens": 200_000}, deltas=4)
        if who != "alice" and stalling["on"]:
            reply.stall_after_deltas, reply.hold_s = 1, 5.0
        return reply
    loopback.default = scripted(answer)
    return scene_file(tmp_path, cast=remote_cast(loopback, "alice", "bob", "charlie")), stalling



def test_calls_the_budget_cut_off_in_flight_are_recorded_and_stay_unknown_after_the_resume(tmp_path, loopback, capsys):
    """The budget stops a parallel beat while two actors' replies are still streaming: their requests
    reached the server, which may bill what it generated, so each is recorded with unknown usage before
    the run closes (not dropped after its record was finished, which counted them as $0), and the
    resumed run's metadata, result line and `compare` keep saying unknown."""
    scene, stalling = stalling_cast(tmp_path, loopback)
    out = tmp_path / "sweep"
    base = ["sweep", str(scene), "--isolation", "b", "--coordinator", "C", "--seeds", "1", "--concurrency", "1",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--max-beats", "3"]
    assert main([*base, "--budget-usd", "1.0"]) == 1             # $0.60 a call: alice's second call spends it
    run = out / "b-C-seed1"
    sent = [json.loads(line)["to"] for line in (run / "prompts.jsonl").read_text().splitlines()]
    calls = [e for e in read_events(run) if e.type == "call"]
    assert sorted(sent) == sorted(c.target for c in calls), "every request sent has its call event"
    cut = [c for c in calls if not c.ok]
    assert sorted(c.target for c in cut) == ["bob", "charlie"] and all(c.unknown and c.cost_usd is None for c in cut)
    assert json.loads((run / "metadata.json").read_text())["costs"]["unknownUsageCalls"] == 2

    stalling["on"] = False
    assert main([*base, "--budget-usd", "100"]) == 0
    capsys.readouterr()
    assert sorted(c.target for c in superseded_calls(run) if c.unknown) == ["bob", "charlie"]
    costs = json.loads((run / "metadata.json").read_text())["costs"]
    assert costs["unknownUsageCalls"] == 2 and costs["perActor"]["bob"]["unknown_usage_calls"] == 1
    assert read_results(out)[0]["cost_usd"] is None
    assert main(["compare", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["cost_usd"] is None


def test_a_take_summary_says_unknown_for_calls_the_budget_cut_off(tmp_path, loopback, capsys):
    """After the budget's stop cut two calls off in flight, `promptdesk branch` closes with the take's
    figures as its metadata has them, the unknown part said in words: never a bare dollar figure that
    passes those calls for $0."""
    scene, stalling = stalling_cast(tmp_path, loopback)
    out = tmp_path / "sweep"
    args = ["sweep", str(scene), "--isolation", "b", "--coordinator", "C", "--seeds", "1", "--concurrency", "1",
            "--characters-dir", str(CHARACTERS), "--out", str(out), "--max-beats", "3", "--budget-usd"]
    assert main([*args, "1.0"]) == 1
    stalling["on"] = False
    assert main([*args, "100"]) == 0                     # resumed: beat 1, with its cut calls, is superseded
    capsys.readouterr()
    assert main(["branch", str(out / "b-C-seed1"), "--at-beat", "2", "--provider", "offline",
                 "--out", str(tmp_path / "take")]) == 0
    costs = json.loads((tmp_path / "take" / "metadata.json").read_text())["costs"]
    n = costs["unknownUsageCalls"]
    assert n == 2 and costs["cutOffInFlight"] == 2, costs
    assert f"{costs['totalTokens']:,} tokens, ${costs['estimatedUSD']:.4f} + unknown ({n} calls cut off in flight)" \
        in capsys.readouterr().err, "the budget's stop cut them: the server is not blamed for sending no usage"


def test_a_results_file_with_a_line_twice_or_a_run_not_planned_counts_each_planned_run_once(tmp_path, capsys):
    """`results.jsonl` appended to twice, or given a row of a run the plan does not hold (another seed
    range, a line pasted in): each planned run is counted once, and the rest not at all (it said
    `sweep: 2 runs, 4 already done` and `4/2 done`)."""
    out = tmp_path / "sweep"
    args = sweep_args(scene_file(tmp_path), out, "--max-beats", "1")
    assert main(args) == 0
    capsys.readouterr()
    rows = (out / "results.jsonl").read_text().splitlines()
    stranger = json.loads(rows[0]) | {"run": "../../elsewhere", "seed": 99}
    (out / "results.jsonl").write_text("\n".join([*rows, rows[0], json.dumps(stranger)]) + "\n")
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"{len(rows)} runs, {len(rows)} already done, 0 to run" in err, err
    assert f"{len(rows)}/{len(rows)} done" in err, err


@pytest.mark.parametrize("cost", ['"free"', "[1]", "NaN", "-5"])
def test_a_call_event_edited_to_a_cost_that_is_no_amount_is_passed_over_by_the_budget(tmp_path, capsys, cost):
    """The budget reads every run's call events: one whose `cost_usd` is not an amount (edited by hand)
    counts for nothing, as every other reader skips that line; the sweep ended in a traceback."""
    out = tmp_path / "sweep"
    args = sweep_args(scene_file(tmp_path), out, "--max-beats", "1", "--budget-usd", "5")
    assert main(args) == 0
    log = out / "a-C-seed1" / "events.jsonl"
    lines = log.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "call")
    lines[at] = re.sub(r'"cost_usd": [^,}]+', f'"cost_usd": {cost}', lines[at])
    log.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(args) == 0
    assert "Traceback" not in capsys.readouterr().err
