"""Concurrency per provider: a server that serves one request at a time (llama-cpp-python's server
cuts a stream in flight whenever another request arrives), `max_concurrency` that queues the calls
in arrival order, the one-time notice when a stream was cut by another request, and the timeouts
set from the command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from promptdesk.core.casting.build import RunOptions, provider_spec
from promptdesk.core.cli.main import main
from promptdesk.core.providers.concurrency import CUT_NOTICE, Gate
from helpers import CHARACTERS, SCENES, batch_run, example_scene, served_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import turn

LINE = turn('[TO: Bob, TONE: firm, *taps the table*] "Walk me through the timeline."', "I need facts first.")
NOTICE_HEAD = "cut a stream when another request arrived"


def failures(out: Path) -> list[dict]:
    return json.loads((out / "metadata.json").read_text())["errors"]


def test_a_server_that_cuts_streams_plays_without_failures_one_call_at_a_time(capsys, tmp_path, loopback):
    loopback.default = Reply(text=LINE, gap_s=0.02, cut_on_arrival=True)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback), "--max-concurrency", "1")
    assert code == 0, err
    assert failures(out) == []
    assert loopback.most_in_flight == 1
    assert NOTICE_HEAD not in err
    calls = [r for r in map(json.loads, (out / "events.jsonl").read_text().splitlines()) if r["type"] == "call"]
    assert len(calls) == loopback.hits >= 4 and all(c["ok"] for c in calls)


def test_the_scene_setting_limits_it_too(capsys, tmp_path, loopback):
    loopback.default = Reply(text=LINE, gap_s=0.02, cut_on_arrival=True)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback, max_concurrency=1))
    assert code == 0, err
    assert failures(out) == [] and loopback.most_in_flight == 1


def test_without_a_limit_the_cut_is_named_once_with_its_remedy(capsys, tmp_path, loopback):
    loopback.default = Reply(text=LINE, gap_s=0.2, cut_on_arrival=True)
    scene = served_scene(tmp_path, loopback)
    code, err, out = batch_run(capsys, tmp_path, scene)
    assert failures(out), err
    notice = CUT_NOTICE.format(server=loopback.url("/v1"))
    assert "--interrupt_requests False" in notice and "max_concurrency: 1" in notice
    assert err.count(NOTICE_HEAD) == 1 and notice in err
    assert (out / "notes.md").read_text().count(NOTICE_HEAD) == 1
    assert (out / "debug.log").read_text().count(NOTICE_HEAD) == 1


def test_a_cut_with_no_other_request_is_not_blamed_on_one(capsys, tmp_path, loopback):
    loopback.default = Reply(text=LINE, drop_after_deltas=1)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback), "--max-concurrency", "1")
    assert failures(out)
    assert NOTICE_HEAD not in err and NOTICE_HEAD not in (out / "notes.md").read_text()


_CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
FILTERED = Reply(delay_s=0.05, raw=[f"data: {json.dumps(f)}\n\n".encode() for f in (
    {**_CHUNK, "choices": [{"index": 0, "delta": {"content": "<thinking>"}, "finish_reason": None}]},
    {**_CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}]})] + [b"data: [DONE]\n\n"])
"""A whole stream the server's content filter stopped, slowly enough that the others' requests start."""
PAGE = Reply(delay_s=0.05, raw=b"<html><title>Sign in</title></html>", content_type="text/html")
"""A proxy's sign-in page in place of the stream, as slowly."""


@pytest.mark.parametrize("reply", [FILTERED, PAGE], ids=["content-filter", "html-page"])
def test_a_failure_that_is_no_cut_is_not_blamed_on_another_request(capsys, tmp_path, loopback, reply):
    """A reply the server stopped on purpose, or a page in place of the stream, failed in a parallel
    beat: no stream was cut, and the notice about llama.cpp's cuts would send the user the wrong way."""
    loopback.default = reply
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback))
    assert failures(out), err
    assert loopback.most_in_flight > 1 and NOTICE_HEAD not in err


def test_the_flags_set_every_provider_and_win_over_the_scene():
    scene = example_scene("the-apology", provider={"name": "openai-compatible", "model": "m", "base_url": "http://h/v1",
                                                   "timeout_s": 30, "max_concurrency": 4},
                          judge={"name": "openai", "model": "gpt-4o-mini"})
    options = RunOptions(provider_settings={"max_concurrency": 1, "timeout_s": 120.0, "journal_timeout_s": 300.0})
    for slug in ("alice", None):
        spec = provider_spec(scene, slug, options)
        assert (spec.max_concurrency, spec.timeout_s, spec.journal_timeout_s) == (1, 120.0, 300.0)
        assert spec.journal_turn_timeout_s > spec.turn_timeout_s
    assert provider_spec(scene, "alice", RunOptions()).max_concurrency == 4


@pytest.mark.parametrize("flag,value", [("--max-concurrency", "0"), ("--timeout", "nan"), ("--journal-timeout", "-1")])
def test_bad_values_are_refused_naming_the_flag(capsys, flag, value):
    assert main(["--batch", str(SCENES / "the-apology.yaml"), flag, value]) == 2
    assert flag in capsys.readouterr().err


def test_journal_calls_take_the_journal_timeout(capsys, tmp_path, loopback):
    """A journal call slower than `--journal-timeout` times out; the scene's turns, under `--timeout`, do not."""
    def answer(recorded):
        journal = "journal" in json.dumps(recorded.body).lower() and "BEAT" not in json.dumps(recorded.body)
        return Reply(text="Dear journal, today I apologised.", delay_s=1.0) if journal else Reply(text=LINE)
    loopback.default = answer
    scene = served_scene(tmp_path, loopback)
    data = yaml.safe_load(scene.read_text())
    data["limits"]["max_beats"] = 1
    scene.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    main(["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--seed", "1", "--out", str(out),
          "--characters-dir", str(CHARACTERS), "--journals", str(tmp_path / "journals"), "--timeout", "5",
          "--journal-timeout", "0.3", "--max-concurrency", "1"])
    records = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    journal_calls = [r for r in records if r["type"] == "call" and r["purpose"] == "journal"]
    turn_calls = [r for r in records if r["type"] == "call" and r["purpose"] == "turn"]
    assert journal_calls and not any(c["ok"] for c in journal_calls)
    assert turn_calls and all(c["ok"] for c in turn_calls)
    assert "timed out" in (out / "debug.log").read_text()


async def test_the_gate_admits_in_arrival_order_and_never_more_than_its_limit():
    gate, order, inside = Gate(2), [], []

    async def one(n: int) -> None:
        async with gate.slot():
            inside.append(n)
            assert len(inside) <= 2
            order.append(n)
            await asyncio.sleep(0)
            inside.remove(n)

    await asyncio.gather(*(one(n) for n in range(6)))
    assert order == list(range(6)) and gate.active == 0


async def test_a_cancelled_waiter_leaves_its_place_to_the_next():
    gate, admitted = Gate(1), []
    hold = asyncio.Event()

    async def holder() -> None:
        async with gate.slot():
            await hold.wait()

    async def waiter(n: int) -> None:
        async with gate.slot():
            admitted.append(n)

    first = asyncio.create_task(holder())
    await asyncio.sleep(0)
    cancelled, kept = asyncio.create_task(waiter(1)), asyncio.create_task(waiter(2))
    await asyncio.sleep(0)
    cancelled.cancel()
    hold.set()
    await asyncio.gather(first, kept)
    assert admitted == [2] and gate.active == 0 and not gate.waiting


def offline_run(tmp_path: Path, name: str, *flags: str) -> list[dict]:
    scene = example_scene("the-apology", provider={"latency_ms": [20, 45]})
    path = tmp_path / "offline.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    out = tmp_path / name
    assert main(["--batch", str(path), "--isolation", "a", "--coordinator", "C", "--seed", "5", "--max-beats", "5",
                 "--characters-dir", str(CHARACTERS), "--journals", "none", "--out", str(out), "--quiet",
                 *flags]) == 0
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


def test_an_offline_run_with_a_limit_is_the_same_run_every_time_and_queues_its_calls(tmp_path):
    """On the simulated clock a limited beat is reproducible; its calls follow one another (no two
    turn calls of a beat overlap), and each beat's lines still come in order of arrival."""
    first = offline_run(tmp_path, "one", "--max-concurrency", "1")
    again = offline_run(tmp_path, "two", "--max-concurrency", "1")
    assert first == again
    free = offline_run(tmp_path, "free")
    calls = [(r["t"] - r["latency_s"], r["t"]) for r in first if r["type"] == "call" and r["purpose"] == "turn"]
    assert all(start >= end_before - 1e-3 for (_, end_before), (start, _) in zip(calls, calls[1:]))
    parallel = [(r["t"] - r["latency_s"], r["t"]) for r in free if r["type"] == "call" and r["purpose"] == "turn"]
    assert any(start < end_before - 1e-3 for (_, end_before), (start, _) in zip(parallel, parallel[1:]))
    speeches = [r for r in first if r["type"] == "speak"]
    assert [r["t"] for r in speeches] == sorted(r["t"] for r in speeches)


def test_a_sweep_takes_the_flags_to_every_run(tmp_path):
    from promptdesk.core.cli.sweep import parser, plan_from
    from promptdesk.core.experiments.sweep import Combination

    plan = plan_from(parser().parse_args([str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C",
                                          "--seeds", "1", "--max-concurrency", "1", "--timeout", "90",
                                          "--journal-timeout", "200"]))
    options = plan.run_options(Combination("a", "C", 1), tmp_path / "run")
    assert options.provider_settings == {"max_concurrency": 1, "timeout_s": 90.0, "journal_timeout_s": 200.0}


def test_our_own_timeout_is_not_blamed_on_another_request(capsys, tmp_path, loopback):
    """A stream still trickling when `--timeout` ends its attempt, in a parallel beat: the attempt was
    ended here, not cut by the server, so the notice about llama.cpp's cuts is not said."""
    loopback.default = Reply(text=LINE, deltas=20, gap_s=0.05)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback), "--timeout", "0.3")
    assert failures(out) and "timed out: no whole answer within 0.3 s" in (out / "debug.log").read_text(), err
    assert loopback.most_in_flight > 1 and NOTICE_HEAD not in err


def test_streams_that_break_long_after_the_others_started_are_not_blamed_on_them(capsys, tmp_path, loopback):
    """A server that went down under a parallel beat breaks every stream at once, seconds after the beat's
    requests started: that is no llama-cpp-python cut on arrival, and the notice would send the user the
    wrong way (seen when the server was killed mid-beat)."""
    loopback.default = Reply(text=LINE, deltas=6, gap_s=0.3, drop_after_deltas=5)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback))
    assert failures(out), err
    assert NOTICE_HEAD not in err and NOTICE_HEAD not in (out / "notes.md").read_text()
