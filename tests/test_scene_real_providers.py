"""Whole scenes on real providers (the real SDKs against the loopback server): each provider and
isolation option, caching, streaming, a mixed cast, costs and the budget, LLM judges, and a key
that never leaks."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.record.events import DeltaEvent
from helpers import CHARACTERS, SCENES, example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import CANARY, actor_of, keys, remote_cast, scripted, turn  # noqa: F401

LINE = turn('[TO: Bob, TONE: firm, *taps the table*] "Walk me through the timeline."', "I need facts first.")
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "openai-compatible": "/v1/chat/completions"}
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini", "openai-compatible": "llama3"}


@pytest.mark.parametrize("isolation", ["a", "b"])
@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-compatible"])
async def test_a_whole_scene_plays_on_each_provider_and_isolation(run_scene, loopback, provider, isolation):
    loopback.default = Reply(text=LINE, usage={"cache_read_input_tokens": 40} if provider == "anthropic" else {})
    scene = example_scene("the-apology", limits={"max_beats": 3},
                          cast=remote_cast(loopback, "alice", "bob", "charlie", provider=provider, model=MODELS[provider]))
    deltas: list[DeltaEvent] = []
    run = await run_scene(scene, isolation=isolation, coordinator="C",
                          before_run=lambda s: s.subscribe(lambda e: deltas.append(e) if e.type == "delta" else None))
    assert run.result.close_reason == "max_beats_exceeded"
    assert {r.path for r in loopback.requests} == {PATHS[provider]}
    turns = [r.body for r in loopback.requests if "BEAT" in json.dumps(r.body)]
    cached = [b for b in turns if "cache_control" in json.dumps(b.get("system", ""))]
    keyed = [b for b in turns if b.get("prompt_cache_key")]
    if isolation == "b" and provider == "anthropic":
        assert len(cached) == len(turns)
    elif isolation == "b" and provider == "openai":
        assert len(keyed) == len(turns) and {b["prompt_cache_key"] for b in keyed} == {
            "promptdesk-alice", "promptdesk-bob", "promptdesk-charlie"}
    else:
        assert not cached and not keyed
    speeches = [r for r in run.records() if r["type"] == "speak"]
    assert speeches and all(s["text"] == "Walk me through the timeline." for s in speeches)
    streamed = "".join(d.text for d in deltas if d.from_ == "alice" and d.beat == 0 and d.channel == "speech")
    assert streamed.strip() == speeches[0]["raw"]
    calls = [r for r in run.records() if r["type"] == "call" and r["purpose"] == "turn"]
    assert all(c["provider"] == provider and c["output_tokens"] > 0 and c["latency_s"] >= 0 for c in calls)
    if provider == "anthropic":
        assert all(c["cache_read_tokens"] == 40 for c in calls)


async def test_a_mixed_cast_gives_each_actor_its_own_provider(run_scene, loopback):
    loopback.default = Reply(text=LINE)
    cast = {**remote_cast(loopback, "alice", provider="anthropic", model="claude-haiku-4-5"),
            **remote_cast(loopback, "bob", provider="openai", model="gpt-4o-mini")}
    run = await run_scene(example_scene("the-apology", cast=cast, limits={"max_beats": 3}),
                          isolation="b", coordinator="C")
    calls = {(r["target"], r["provider"]) for r in run.records() if r["type"] == "call"}
    assert {("alice", "anthropic"), ("bob", "openai"), ("charlie", "offline")} <= calls
    notes = (run.dir / "notes.md").read_text()
    assert "provider anthropic, model claude-haiku-4-5" in notes and "provider openai, model gpt-4o-mini" in notes
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["costs"]["perActor"]["alice"]["usd"] > 0 and meta["costs"]["perActor"]["charlie"]["usd"] == 0


async def test_a_budget_stops_the_scene_cleanly(run_scene, loopback):
    loopback.default = Reply(text=LINE, usage={"input_tokens": 200_000})
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="b", coordinator="C", budget_usd=1.0)
    assert run.result.close_reason == "budget"
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["costs"]["estimatedUSD"] >= 1.0
    assert "Estimated cost: $" in (run.dir / "transcript.txt").read_text()


async def test_a_sub_cent_budget_is_named_as_given_not_as_0_00(run_scene, loopback):
    loopback.default = Reply(text=LINE, usage={"input_tokens": 2_000})
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="b", coordinator="C", budget_usd=0.002)
    assert run.result.close_reason == "budget"
    closing = [e for e in run.records() if e.get("type") == "close"]
    assert closing and "Budget of $0.002 reached" in json.dumps(closing[-1]), closing


async def test_a_malformed_llm_judge_decision_falls_back_to_role_c_and_is_logged(run_scene, loopback):
    def answer(recorded):
        if "coordinator of a scene" in json.dumps(recorded.body):
            return Reply(text="Let them keep talking, I think.")
        return Reply(text=turn('[TONE: warm] "Thank you both, this was generous."'))

    loopback.default = answer
    judge = {"name": "anthropic", "model": "claude-haiku-4-5", "base_url": loopback.url(), "max_retries": 0}
    scene = example_scene("the-apology", judge=judge, cast=remote_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="b", coordinator="B")
    assert run.result.close_reason == "natural"
    assert "judge decision unusable, role C rules used" in (run.dir / "debug.log").read_text()
    assert any(p["to"] == "judge" for p in run.prompts())


async def test_an_llm_judge_can_close_the_scene_once_everyone_has_spoken_twice(run_scene, loopback):
    def answer(recorded):
        if "the scene has ended" in json.dumps(recorded.body):
            return Reply(text='{"goal_achieved": false, "reason": "Bob never apologised."}')
        if "coordinator of a scene" in json.dumps(recorded.body):
            return Reply(text='{"decision": "close", "reason": "they reconciled"}')
        return Reply(text=LINE)

    loopback.default = answer
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = example_scene("the-apology", judge=judge, cast=remote_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="a", coordinator="A")
    assert run.result.close_reason == "natural" and run.result.beats == 3
    assert any(r["type"] == "decision" for r in run.records())
    close = next(r for r in run.records() if r["type"] == "close")
    assert close["goal_achieved"] is False and close["goal_reason"] == "Bob never apologised."
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert (meta["goalAchieved"], meta["goalReason"], meta["success"]) == (False, "Bob never apologised.", True)


def test_the_api_key_appears_nowhere_whatever_fails(tmp_path, loopback, capsys):
    loopback.script(Reply(status=401, error_message=f"invalid x-api-key {CANARY}"))
    loopback.default = Reply(status=500, error_message="boom")
    scene = tmp_path / "s.yaml"
    scene.write_text((SCENES / "the-apology.yaml").read_text() + f"""
cast:
  alice: {{provider: anthropic, model: claude-haiku-4-5, base_url: "{loopback.url()}", max_retries: 1, retry_after_cap_s: 0}}
  bob: {{provider: openai, model: gpt-4o-mini, base_url: "{loopback.url('/v1')}", max_retries: 1, retry_after_cap_s: 0}}
""")
    out = tmp_path / "run"
    code = main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--max-beats", "2",
                 "--out", str(out), "--characters-dir", str(CHARACTERS), "--seed", "1"])
    printed = capsys.readouterr()
    assert code == 0  # Alice leaves on her rejected key; the others play on (Bob's calls fail, Charlie speaks)
    assert "NOTICE: Alice left the scene" in printed.err
    assert CANARY not in printed.err + printed.out
    for path in out.rglob("*"):
        if path.is_file():
            assert CANARY not in path.read_text(errors="replace"), path.name
    assert "[SYSTEM: Alice unable to respond]" in (out / "transcript.txt").read_text()
