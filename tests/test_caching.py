"""Prompt caching that caches: Anthropic cache breakpoints on the briefing and at the end of what
the next request re-sends (moved every turn), the API's cache semantics in the loopback server, the minimum
cacheable length, and `cache_saving` in metadata.json. OpenAI keeps `prompt_cache_key`."""

from __future__ import annotations

import json
import math

import pytest

from promptdesk.core.providers.pricing import cache_saving
from promptdesk.core.providers.anthropic_provider import AnthropicProvider, min_cacheable_tokens
from promptdesk.core.providers.base import ChatMessage, Request
from helpers import example_scene
from loopback import CANARY, Reply, anthropic_cache_usage, loopback  # noqa: F401 - fixture
from test_scene_faults import remote_cast, scripted, turn


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)


def reply_of(who: str, recorded) -> str:
    """A realistic reply (about 300 tokens), different every beat."""
    beat = json.dumps(recorded.body["messages"][-1])[-60:]
    thought = f"{who} weighs what was said, turn {len(recorded.body['messages'])}. " * 12
    return turn(f'[TONE: measured] "I hear you, and I want to go through it once more, slowly. {beat}"', thought)


def marks(body: dict) -> list[str]:
    """Where a request's cache breakpoints are: 'system' or the index of a message."""
    found = ["system" for b in body.get("system", []) if "cache_control" in b]
    for i, m in enumerate(body["messages"]):
        if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"]):
            found.append(str(i))
    return found


async def test_breakpoints_mark_the_briefing_and_the_end_of_what_the_next_request_re_sends(run_scene, loopback):
    loopback.default = scripted(reply_of)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 4})
    await run_scene(scene, isolation="b", coordinator="C")
    turns = [r.body for r in loopback.requests if r.body.get("system") and "alice" in json.dumps(r.body["system"])]
    assert len(turns) >= 3
    for body, after in zip(turns, [*turns[1:], None]):
        replies = [str(i) for i, m in enumerate(body["messages"]) if m["role"] == "assistant"]
        users = [str(i) for i, m in enumerate(body["messages"]) if m["role"] == "user"]
        # where the previous request's mark was, the last reply (a correction reads it), and the newest
        # update up to the end of what happened, in a block of its own: the rest is this request's alone
        assert marks(body) == ["system", *users[-2:-1], *replies[-1:], users[-1]], marks(body)
        kept, alone = body["messages"][-1]["content"]
        assert "cache_control" in kept and "cache_control" not in alone
        assert alone["text"].endswith("Respond in character, or stay silent.") or "journal entry" in kept["text"]
        assert "BEAT" not in kept["text"] and "PRIVATE THOUGHT" not in kept["text"]
        if after is not None:  # the next request re-sends the marked part unchanged
            again = after["messages"][len(body["messages"]) - 1]["content"]
            assert (again if isinstance(again, str) else again[0]["text"]) == kept["text"]
    assert marks(turns[1])[-1] != marks(turns[2])[-1], "the trailing breakpoint moves every turn"


async def test_a_twenty_beat_scene_in_isolation_b_reads_all_it_re_sends_from_the_cache(run_scene, loopback):
    loopback.default = scripted(reply_of)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 20, "soft_cap_per_character": 40, "hard_cap_per_character": 60})
    run = await run_scene(scene, isolation="b", coordinator="C")
    meta = json.loads((run.dir / "metadata.json").read_text())
    saving = meta["cache_saving"]
    assert saving["run"] >= 0.55, saving  # each turn's last thought and new lines are new input, never cached
    assert set(saving["perActor"]) >= {"alice", "bob", "charlie"}
    for slug in ("alice", "bob", "charlie"):
        calls = [r for r in run.records() if r["type"] == "call" and r["target"] == slug and r["purpose"] == "turn"]
        cached = [c for c in calls if c["cache_read_tokens"] or c["cache_write_tokens"]]
        assert len(cached) >= 10, slug
        for before, after in zip(cached, cached[1:]):
            if after["cache_read_tokens"] == 0:  # a window drop: the kept thread is written anew, once
                assert after["cache_write_tokens"] > 0 and before["cache_read_tokens"] > 0
                continue
            # all that the previous request cached is read, and only what it did not send is written
            assert after["cache_read_tokens"] == before["cache_read_tokens"] + before["cache_write_tokens"], slug
            assert after["cache_write_tokens"] < 0.3 * after["cache_read_tokens"], slug
    for recorded in loopback.requests:  # billed as new input: the last thought, the beat heading, the ask
        usage = recorded.cache_usage
        if usage and usage["cache_read_input_tokens"]:
            alone = recorded.body["messages"][-1]["content"][-1]["text"]
            assert usage["input_tokens"] == math.ceil(len(alone) / 4) and "PRIVATE THOUGHT" in alone


async def test_a_prefix_under_the_minimum_is_noted_once_per_actor_in_debug_log(run_scene, loopback):
    loopback.default = Reply(text=turn('[TONE: calm] "Fine."', "Short."))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie",
                                                          model="claude-haiku-4-5"), limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="C")
    log = (run.dir / "debug.log").read_text()
    notes = [line for line in log.splitlines() if "under claude-haiku-4-5's minimum of 4096 tokens" in line]
    assert sorted(n.split("promptdesk.providers: ")[1].split(":")[0] for n in notes) == ["alice", "bob", "charlie"]
    calls = [r for r in run.records() if r["type"] == "call"]
    assert calls and all(c["cache_write_tokens"] == c["cache_read_tokens"] == 0 for c in calls)


def test_the_minimum_cacheable_length_per_model_family():
    assert min_cacheable_tokens("claude-sonnet-4-6") == 1024
    assert min_cacheable_tokens("claude-opus-4-1-20250805") == 1024
    assert min_cacheable_tokens("claude-opus-4-6") == 4096
    assert min_cacheable_tokens("claude-haiku-4-5") == 4096
    assert min_cacheable_tokens("claude-3-5-haiku-latest") == 2048
    assert min_cacheable_tokens("anthropic/claude-3-haiku-20240307") == 2048


def test_the_loopback_caches_only_prefixes_ending_at_a_breakpoint_and_over_the_minimum():
    cache: set[str] = set()
    system = [{"type": "text", "text": "b" * 4000, "cache_control": {"type": "ephemeral"}}]
    body = {"model": "claude-sonnet-4-6", "system": system, "messages": [{"role": "user", "content": "hi"}]}
    assert anthropic_cache_usage(body, cache) is None or anthropic_cache_usage(body, set()) == {
        "input_tokens": 1001, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    assert not cache, "1000 tokens is under Sonnet's 1024"
    long_user = {"role": "user", "content": [{"type": "text", "text": "u" * 400,
                                              "cache_control": {"type": "ephemeral"}}]}
    first = anthropic_cache_usage({**body, "messages": [long_user]}, cache)
    assert first == {"input_tokens": 0, "cache_creation_input_tokens": 1100, "cache_read_input_tokens": 0}
    grown = {**body, "messages": [{"role": "user", "content": "u" * 400}, {"role": "assistant", "content": "a" * 40},
                                  {"role": "user", "content": [{"type": "text", "text": "v" * 40,
                                                                "cache_control": {"type": "ephemeral"}}]}]}
    second = anthropic_cache_usage(grown, cache)
    assert second == {"input_tokens": 0, "cache_creation_input_tokens": 1120, "cache_read_input_tokens": 0}, \
        "the earlier prefix is not marked here (a mark ends a cached prefix): nothing read, all written"
    marked = {**grown, "messages": [long_user, *grown["messages"][1:]]}
    third = anthropic_cache_usage(marked, cache)
    assert third == {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1120}, \
        "the longest cached breakpoint prefix is read"
    onward = {**body, "messages": [*marked["messages"], {"role": "assistant", "content": "b" * 40},
                                   {"role": "user", "content": [{"type": "text", "text": "w" * 40,
                                                                 "cache_control": {"type": "ephemeral"}}]}]}
    assert anthropic_cache_usage(onward, cache) == {"input_tokens": 0, "cache_creation_input_tokens": 20,
                                                    "cache_read_input_tokens": 1120}


def test_cache_saving_is_the_share_of_input_cost_saved_by_the_price_table():
    class Call:
        def __init__(self, target, provider, model, input_tokens, cache_write_tokens, cache_read_tokens):
            self.__dict__.update(locals())

    calls = [Call("alice", "anthropic", "claude-sonnet-4-6", 100, 1000, 0),
             Call("alice", "anthropic", "claude-sonnet-4-6", 100, 100, 1000),
             Call("bob", "offline", "improviser", 500, 0, 0)]
    saving = cache_saving(calls)
    uncached = (1100 + 1200) * 3.0
    paid = 200 * 3.0 + 1100 * 3.75 + 1000 * 0.3
    assert saving["perActor"]["alice"] == round(1 - paid / uncached, 4)
    assert saving["run"] == saving["perActor"]["alice"] and saving["perActor"]["bob"] == 0.0


async def test_openai_keeps_a_per_actor_prompt_cache_key_and_a_stable_prefix(run_scene, loopback):
    loopback.default = scripted(reply_of)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie", provider="openai",
                                                          model="gpt-4o-mini"), limits={"max_beats": 4})
    await run_scene(scene, isolation="b", coordinator="C")
    alice = [r.body for r in loopback.requests if r.body.get("prompt_cache_key") == "promptdesk-alice"]
    assert len(alice) >= 3
    for earlier, later in zip(alice, alice[1:]):  # all but the previous reply, whose thinking is taken out
        stable = earlier["messages"][:-2]
        assert later["messages"][:len(stable)] == stable, "each request keeps the last one's stable prefix"


def test_a_correction_and_an_update_kept_whole_end_their_cached_prefix_at_the_last_replies():
    from types import SimpleNamespace

    from promptdesk.core.engine.actors import ThreadActor

    provider = AnthropicProvider("claude-sonnet-4-6", api_key=CANARY)
    actor = ThreadActor(SimpleNamespace(slug="bob", name="Bob"), "You are Bob.", provider)
    first = actor.request("BEAT 0 of at most 9\n\nAlice [TONE: calm] \"Hello.\"\n\nRespond in character, or stay silent.", 0)
    assert first.messages[-1].content.startswith("Alice [TONE: calm]") and first.thread_kept == len('Alice [TONE: calm] "Hello."')
    split = provider.params(first)["messages"][-1]["content"]
    assert [b["text"] for b in split] == ['Alice [TONE: calm] "Hello."', "\n\nBEAT 0 of at most 9\n\nRespond in character, or stay silent."]
    correction = actor.correction(first, "no tags", "Answer in the tags.")
    assert correction.thread_kept is None
    assert marks(provider.params(correction)) == ["system", "1"]  # the answer it corrects, whole
    whole = actor.request("DIRECTOR NOTE: Begin.", 0)  # no heading and no thought: all of it is kept
    assert whole.thread_kept is None and isinstance(provider.params(whole)["messages"][-1]["content"], list)
    assert marks(provider.params(whole)) == ["system", "0"]


async def test_a_window_that_drops_turns_before_the_minimum_says_nothing_will_be_cached(run_scene, loopback):
    """A long scene whose window keeps each thread under the model's minimum caches nothing at all:
    debug.log says so once per actor at the first drop, not only "until the conversation grows"."""
    loopback.default = Reply(text=turn('[TONE: calm] "Fine, go on."', "I listen."))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", model="claude-haiku-4-5"),
                          limits={"max_beats": 12, "window": 2, "soft_cap_per_character": 40,
                                  "hard_cap_per_character": 60, "stall_beats": 50})
    scene = scene.model_copy(update={"characters": ["alice", "bob"]})
    run = await run_scene(scene, isolation="b", coordinator="C")
    log = (run.dir / "debug.log").read_text()
    never = [line for line in log.splitlines() if "caches nothing for it in this scene" in line]
    assert sorted(n.split("promptdesk.providers: ")[1].split(":")[0] for n in never) == ["alice", "bob"]
    assert "limits.window" in never[0] and "minimum of 4096 tokens" in never[0]
    calls = [r for r in run.records() if r["type"] == "call"]
    assert calls and all(c["cache_write_tokens"] == c["cache_read_tokens"] == 0 for c in calls)


async def test_a_thread_that_reaches_the_minimum_gets_no_never_cached_note(run_scene, loopback):
    loopback.default = scripted(reply_of)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 24, "soft_cap_per_character": 40, "hard_cap_per_character": 60})
    run = await run_scene(scene, isolation="b", coordinator="C")
    assert "caches nothing for it in this scene" not in (run.dir / "debug.log").read_text()
