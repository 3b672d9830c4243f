"""Usage unknown is unknown: a call whose response carries no usage (llama.cpp's server and many local
servers send none on a stream) records `null` tokens and cost with `usage: unknown`, never 0; the
totals, metrics, transcripts and the batch summary say unknown; a budget that would have to count
such a call is refused (the run stops, the sweep stops), never kept on a guess."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.metrics import metrics_of
from helpers import CHARACTERS, batch_run, served_scene
from loopback import CANARY, Reply, loopback  # noqa: F401 - fixture
from test_scene_faults import turn

LINE = turn('[TO: Bob, TONE: firm] "Walk me through the timeline."', "I need facts first.")


def calls(out: Path) -> list[dict]:
    return [r for r in map(json.loads, (out / "events.jsonl").read_text().splitlines()) if r["type"] == "call"]


def test_a_stream_without_usage_records_null_tokens_and_says_unknown(capsys, tmp_path, loopback):
    loopback.default = Reply(text=LINE, no_usage=True)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback))
    assert code == 0, err
    recorded = calls(out)
    assert recorded and all(c["ok"] for c in recorded)
    for call in recorded:
        assert call["usage"] == "unknown"
        assert [call[k] for k in ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens",
                                  "cost_usd")] == [None] * 5
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["costs"]["unknownUsageCalls"] == len(recorded)
    assert f"+ unknown ({len(recorded)} calls sent no usage)" in err
    assert "unknown" in (out / "transcript.md").read_text().split("## Post-scene notes")[1]
    assert "+ unknown" in (out / "transcript.txt").read_text()
    metrics = metrics_of(out, audit=False)
    assert metrics.tokens is None and metrics.cost_usd is None
    assert all(a.tokens is None for a in metrics.actors.values())
    assert main(["metrics", str(out)]) == 0
    assert "unknown" in capsys.readouterr().out


def test_a_stream_with_usage_still_counts_it(capsys, tmp_path, loopback):
    loopback.default = Reply(text=LINE)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback))
    recorded = calls(out)
    assert all("usage" not in c and c["output_tokens"] > 0 for c in recorded)
    assert "sent no usage" not in err
    assert metrics_of(out, audit=False).tokens > 0


def test_a_budget_with_unknown_usage_is_refused(capsys, tmp_path, loopback, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    loopback.default = Reply(text=LINE, no_usage=True)
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback, "openai", "gpt-4o-mini"),
                           "--budget-usd", "1")
    assert code == 1
    assert "cannot be kept" in err and "sent no token usage" in err
    recorded = calls(out)
    assert 1 <= len(recorded) <= 3, "the run stops at the first beat's calls"
    assert json.loads((out / "metadata.json").read_text())["reason"] == "provider-error"


def test_a_sweep_budget_with_unknown_usage_stops_the_sweep(capsys, tmp_path, loopback, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    loopback.default = Reply(text=LINE, no_usage=True)
    code = main(["sweep", str(served_scene(tmp_path, loopback, "openai", "gpt-4o-mini")), "--isolation", "a",
                 "--coordinator", "C", "--seeds", "1-3", "--concurrency", "1", "--max-beats", "2",
                 "--characters-dir", str(CHARACTERS), "--budget-usd", "5", "--out", str(tmp_path / "sweep")])
    err = capsys.readouterr().err
    assert code == 1
    assert "sent no token usage" in err and "--budget-usd" in err
    assert len(list((tmp_path / "sweep").glob("a-C-seed*"))) == 1, "no run starts after the first"


async def test_a_call_cut_off_by_a_stop_was_billed_an_unknown_amount(tmp_path, loopback):
    """The operator stops the scene while a reply streams: the server took the request and was
    generating, so what it bills is unknown, and the record says so instead of 0."""
    from helpers import run_session

    loopback.default = Reply(text=LINE, deltas=4, stall_after_deltas=1, hold_s=2.0)

    def stop_at_the_first_fragment(session):
        """As the console's `s` does: from outside the call, once its first fragment is shown."""
        def on_event(event):
            if event.type == "delta":
                asyncio.get_running_loop().call_soon(session.stop)
        session.subscribe(on_event)

    run = await run_session(tmp_path, served_scene(tmp_path, loopback), isolation="a", coordinator="C",
                            before_run=stop_at_the_first_fragment, audit=False)
    assert run.result.close_reason == "stop"
    cut = [c for c in calls(run.dir) if not c["ok"]]
    assert cut and all(c["usage"] == "unknown" and c["cost_usd"] is None for c in cut)
    assert json.loads((run.dir / "metadata.json").read_text())["costs"]["unknownUsageCalls"] == len(cut)
    said = next(line for line in (run.dir / "transcript.md").read_text().splitlines()
                if line.startswith("- Calls cut off in flight"))  # whose replies the stop cut, in the post-scene notes
    assert said.count("(beat ") == len({(c["target"], c["beat"]) for c in cut}), said


async def test_a_stream_the_server_cut_before_its_usage_was_billed_an_unknown_amount(loopback):
    """An OpenAI stream dropped after some text (or one that ends without its finish marker): the
    server took the request and generated, but its usage chunk (sent last) never came. The failed
    call's usage is unknown, never 0; one such attempt before a whole answer makes the call's unknown
    too (its lower bound is not its bill)."""
    import pytest
    from promptdesk.core.errors import ProviderError
    from promptdesk.core.providers.base import Request, ChatMessage
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    request = Request(to="alice", system="You are Alice.", messages=[ChatMessage(role="user", content="Hi")], beat=0)
    for cut in (Reply(text=LINE, deltas=4, drop_after_deltas=2), Reply(text=LINE, deltas=4, truncate_after_deltas=2)):
        loopback.script(cut)
        provider = OpenAIProvider("gpt-4o-mini", api_key=CANARY, base_url=loopback.url("/v1"), max_retries=0)
        with pytest.raises(ProviderError) as failed:
            await provider.complete(request, lambda piece: None)
        assert failed.value.usage.reported is False    # type: ignore[attr-defined]
        await provider.aclose()
    loopback.script(Reply(text=LINE, deltas=4, drop_after_deltas=2), Reply(text=LINE))
    provider = OpenAIProvider("gpt-4o-mini", api_key=CANARY, base_url=loopback.url("/v1"), max_retries=1,
                              base_delay_s=0)
    answered = await provider.complete(request, lambda piece: None)
    assert answered.text == LINE and answered.usage.reported is False
    await provider.aclose()


async def test_an_attempt_our_timeout_cut_off_after_it_was_sent_was_billed_an_unknown_amount(loopback):
    """The request reached the server, which was still working on it when the attempt's time limit
    ended it: as for a call a stop cut off, what it bills is unknown, never 0."""
    import pytest
    from promptdesk.core.errors import ProviderError
    from promptdesk.core.providers.base import Request, ChatMessage
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    request = Request(to="alice", system="You are Alice.", messages=[ChatMessage(role="user", content="Hi")], beat=0)
    loopback.script(Reply(text=LINE, delay_s=1.0))
    provider = OpenAIProvider("gpt-4o-mini", api_key=CANARY, base_url=loopback.url("/v1"), max_retries=0, timeout_s=0.2)
    with pytest.raises(ProviderError, match="timed out") as failed:
        await provider.complete(request, lambda piece: None)
    assert failed.value.usage.reported is False    # type: ignore[attr-defined]
    await provider.aclose()


def test_calls_a_stop_cut_off_are_named_so_not_as_calls_that_sent_no_usage():
    """After a stop, "3 calls sent no usage" blamed the server (which does report usage) for what the stop did."""
    from promptdesk.core.record.events import CallEvent
    from promptdesk.core.record.outputs import costs, unknown_spend

    def call(ok: bool, unknown: bool) -> CallEvent:
        return CallEvent(t=1.0, **{"from": "coordinator"}, target="bob", provider="openai-compatible", ok=ok,
                         usage="unknown" if unknown else None, input_tokens=None if unknown else 10)

    cut = costs([call(True, False), call(False, True), call(False, True)])
    assert unknown_spend(cut) == " + unknown (2 calls cut off in flight)"
    both = costs([call(True, True), call(False, True)])
    assert unknown_spend(both) == " + unknown (1 call sent no usage, 1 call cut off in flight)"
    assert unknown_spend(costs([call(True, True)] * 2)) == " + unknown (2 calls sent no usage)"
    assert unknown_spend(costs([call(False, False)])) == "", "a call that failed before any answer cost nothing"
