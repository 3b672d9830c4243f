"""A turn's request sent ahead (`promptdesk.core.providers.early`): in a parallel beat each actor's
next request leaves as soon as its turn is done, its body written as far as its thread goes, and
only the rest when the next beat asks it. Through the real OpenAI SDK to the loopback server: what
the server takes is byte for byte the request recorded, and anything that does not fit goes whole."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.providers.openai_provider import OpenAIProvider, wire_body
from promptdesk.core.record.prompt_log import read_prompts
from helpers import example_scene
from loopback import CANARY, Reply, loopback  # noqa: F401 - fixture
from test_scene_faults import remote_cast, scripted, turn

LINE = turn('[TONE: calm] "Go on, then."')


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)


def received(server) -> list[dict]:
    """The bodies of the turn requests the server took whole, in arrival order."""
    return [r for r in server.requests if isinstance(r.body, dict) and "prompt_cache_key" in r.body]


def charlie_last(server, within_s: float = 5.0):
    """Replies at once, but Charlie's in each beat only once Alice's and Bob's next requests were
    opened: so theirs are the beat's first turns done (each beat's last turn opens none)."""
    asked = {"charlie": 0}

    def answer(who, recorded):
        if who == "charlie":
            asked["charlie"] += 1
            server.opened_at_least(2 * asked["charlie"], within_s)
        return Reply(text=LINE)
    return scripted(answer)


async def play(run_scene, server, isolation: str = "b", beats: int = 4, within_s: float = 5.0,
               provider: str = "openai", model: str = "gpt-4.1-mini", **cast_options):
    server.default = charlie_last(server, within_s)
    cast = remote_cast(server, "alice", "bob", "charlie", provider=provider, model=model)
    for spec in cast.values():
        spec.update({"send_ahead": True, **cast_options})
    scene = example_scene("the-apology", cast=cast, limits={"max_beats": beats})
    return await run_scene(scene, isolation=isolation, coordinator="C", journals="none")


async def test_after_its_first_turn_each_actors_request_leaves_ahead_and_arrives_as_recorded(run_scene, loopback):
    """Every turn request after an actor's first came in chunks (opened while the beat before was
    played), but the one that followed the last turn of a beat, and every body the server took is the encoding of the request `prompts.jsonl` holds; the
    calls the last beat opened for a beat that never came were abandoned, never taken."""
    run = await play(run_scene, loopback)
    turns = received(loopback)
    chunked = [r.body["prompt_cache_key"] for r in turns if r.headers.get("transfer-encoding") == "chunked"]
    # beat 0 is Alice's alone, and Charlie ends beats 1-3: Alice's and Bob's requests of beats 2 and 3
    assert sorted(chunked) == ["promptdesk-alice"] * 2 + ["promptdesk-bob"] * 2
    recorded = [json.loads(p.text) for p in read_prompts(run.dir) if p.purpose == "turn"]
    assert len(recorded) == len(turns)
    provider = OpenAIProvider("gpt-4.1-mini", base_url=loopback.url("/v1"))
    sent = sorted(wire_body(provider.params(Request(to="?", **request)) | {"stream_options": {"include_usage": True}},
                            stream=True) for request in recorded)
    took = sorted(json.dumps(r.body, ensure_ascii=False, separators=(",", ":")).encode() for r in turns)
    assert took == sent and sorted(r.size for r in turns) == sorted(len(body) for body in sent)
    assert loopback.opened == 6  # Alice's and Bob's, after each of beats 1-3
    assert loopback.abandoned_at_least(2) == 2  # those opened in beat 3 for a beat that never came


def text_of(content) -> str:
    """A Messages API content (a string, or text blocks that may carry a cache mark) as its text."""
    return content if isinstance(content, str) else "".join(block["text"] for block in content)


async def test_a_claude_crowd_sends_ahead_with_the_cache_marks_its_whole_requests_have(run_scene, loopback):
    """On the Anthropic API the same requests go ahead, and each body the server took, sent ahead or
    whole, is the one the provider builds for the request `prompts.jsonl` records: its briefing and
    thread, and its cache marks where the turn's request has them (the previous update and the last
    reply, the newest update's kept part), though the thread was sent before the update existed."""
    from promptdesk.core.providers.anthropic_provider import AnthropicProvider

    run = await play(run_scene, loopback, provider="anthropic", model="claude-sonnet-4-6")
    turns = [r for r in loopback.requests if isinstance(r.body, dict) and "messages" in r.body]
    chunked = [r for r in turns if r.headers.get("transfer-encoding") == "chunked"]
    assert len(chunked) == 4 and loopback.opened == 6 and loopback.abandoned_at_least(2) == 2
    recorded = [p.text for p in read_prompts(run.dir) if p.purpose == "turn"]
    provider = AnthropicProvider("claude-sonnet-4-6", base_url=loopback.url())
    took = []
    for r in turns:
        last = r.body["messages"][-1]["content"]
        kept = len(last[0]["text"]) if isinstance(last, list) and len(last) == 2 else None
        plain = [{"role": m["role"], "content": text_of(m["content"])} for m in r.body["messages"]]
        asked = Request(to="x", system=text_of(r.body["system"]), messages=plain, max_tokens=r.body["max_tokens"],
                        cache_prefix=True, thread_kept=kept)
        assert r.body == provider.params(asked) | {"stream": True}
        took.append(json.dumps({"system": asked.system, "messages": plain, "max_tokens": asked.max_tokens,
                                "cache_prefix": True}, sort_keys=True))
    expected = [json.dumps({k: v for k, v in json.loads(r).items() if k != "cache_key"}, sort_keys=True) for r in recorded]
    assert sorted(took) == sorted(expected), "the server took exactly the requests recorded"


async def test_nothing_is_sent_ahead_unless_asked(run_scene, loopback):
    """`send_ahead` is off by default: a server that takes no body in chunks is never sent one."""
    await play(run_scene, loopback, beats=3, within_s=0.2, send_ahead=False)
    assert loopback.opened == 0 and loopback.hits > 0


async def test_send_ahead_on_the_command_line_and_in_a_cast_entry_reaches_the_provider(tmp_path):
    from promptdesk.core.cli.main import parser as build_parser
    from promptdesk.core.cli import provider_flags
    from promptdesk.core.engine.scene_parts import CastOverride
    from promptdesk.core.providers.registry import make_remote
    from promptdesk.core.providers.spec import ProviderSpec

    ns = build_parser().parse_args(["--batch", "the-apology", "--isolation", "b", "--coordinator", "C", "--send-ahead"])
    assert provider_flags.settings(ns) == {"send_ahead": True}
    assert "send_ahead" not in provider_flags.settings(build_parser().parse_args(["--batch", "the-apology"]))
    assert CastOverride.model_validate({"send_ahead": True}).send_ahead is True
    spec = ProviderSpec(name="openai", model="m", base_url="http://127.0.0.1:9/v1", send_ahead=True)
    assert make_remote(spec).sends_ahead and not make_remote(spec.model_copy(update={"send_ahead": False})).sends_ahead
    assert not make_remote(spec.model_copy(update={"max_concurrency": 2})).sends_ahead
    claude = ProviderSpec(name="anthropic", model="claude-sonnet-4-6", send_ahead=True)
    assert make_remote(claude).sends_ahead and not make_remote(claude.model_copy(update={"send_ahead": False})).sends_ahead


async def test_isolation_a_sends_nothing_ahead(run_scene, loopback):
    """An isolation (a) request is built anew from the transcript each turn: nothing is known ahead."""
    await play(run_scene, loopback, isolation="a", beats=3, within_s=0.2)  # none will open: a short wait
    assert not [r for r in loopback.requests if r.headers.get("transfer-encoding") == "chunked"]
    assert loopback.abandoned == 0


async def test_a_server_whose_calls_wait_for_a_place_is_sent_nothing_ahead(run_scene, loopback):
    await play(run_scene, loopback, beats=3, within_s=0.2, max_concurrency=2)
    assert not [r for r in loopback.requests if r.headers.get("transfer-encoding") == "chunked"]


def provider_on(loopback, api: str):
    """A provider of `api` on the loopback server, asked to send ahead."""
    from promptdesk.core.providers.anthropic_provider import AnthropicProvider

    if api == "anthropic":
        return AnthropicProvider("claude-sonnet-4-6", base_url=loopback.url(), max_retries=0, send_ahead=True)
    return OpenAIProvider("gpt-4.1-mini", base_url=loopback.url("/v1"), max_retries=0, send_ahead=True)


def said(body: dict, index: int) -> str:
    """The text of a body's `index`-th thread message (after OpenAI's system message)."""
    messages = body["messages"][1:] if body["messages"][0]["role"] == "system" else body["messages"]
    content = messages[index]["content"]
    return content if isinstance(content, str) else "".join(block["text"] for block in content)


def request(*messages: str) -> Request:
    return Request(to="alice", system="You are Alice.", cache_key="promptdesk-alice",
                   messages=[ChatMessage(role="user" if i % 2 == 0 else "assistant", content=m)
                             for i, m in enumerate(messages)])


async def complete(provider, asked: Request) -> str:
    shown: list[str] = []
    completion = await provider.complete(asked, on_delta=shown.append, on_reset=shown.clear)
    assert "".join(shown) == completion.text
    return completion.text


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_request_that_does_not_start_as_opened_abandons_the_early_call_and_goes_whole(loopback, api):
    """A thread that changed after the call was opened (a window drop, another briefing): the early
    call is closed unfinished, and the request is sent whole, answered once."""
    provider = provider_on(loopback, api)
    loopback.default = Reply(text=LINE)
    try:
        provider.open_early(request("Begin.", "Hello."))
        assert await asyncio.to_thread(loopback.opened_at_least, 1) == 1  # its head and prefix are at the server
        asked = request("Begin (the window dropped what came before).", "Hello.", "Bob said hello.")
        assert await complete(provider, asked) == LINE
    finally:
        await provider.aclose()
    assert loopback.hits == 1 and loopback.abandoned_at_least(1) == 1
    assert loopback.requests[0].headers.get("transfer-encoding") != "chunked"
    assert said(loopback.requests[0].body, 0).startswith("Begin (the window")


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_request_that_starts_as_opened_goes_through_the_early_call(loopback, api):
    provider = provider_on(loopback, api)
    loopback.default = Reply(text=LINE)
    try:
        provider.open_early(request("Begin.", "Hello."))
        assert await asyncio.to_thread(loopback.opened_at_least, 1) == 1
        asked = request("Begin.", "Hello.", "Bob said hello.")
        assert await complete(provider, asked) == LINE
    finally:
        await provider.aclose()
    assert loopback.hits == 1 and loopback.abandoned == 0
    assert loopback.requests[0].headers.get("transfer-encoding") == "chunked"
    assert said(loopback.requests[0].body, -1) == "Bob said hello."


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_server_that_takes_no_body_in_chunks_gets_the_request_whole_and_no_early_call_again(loopback, caplog, api):
    caplog.set_level(logging.INFO, logger="promptdesk.providers")
    provider = provider_on(loopback, api)
    loopback.default = Reply(text=LINE)
    loopback.refuse_chunked = True
    try:
        provider.open_early(request("Begin.", "Hello."))
        assert await complete(provider, request("Begin.", "Hello.", "Bob said hello.")) == LINE
        assert provider.early.refused
        provider.open_early(request("Begin.", "Hello.", "Bob said hello.", LINE))
        assert not provider.early.calls
        assert await complete(provider, request("Begin.", "Hello.", "Bob said hello.", LINE, "Go on.")) == LINE
    finally:
        await provider.aclose()
    assert [r.headers.get("transfer-encoding") for r in loopback.requests] == [None, None]
    assert "refused a request sent ahead of its beat (HTTP 411" in caplog.text
    assert caplog.text.count("refused a request sent ahead") == 1


@pytest.mark.parametrize("flags, says", [
    (["--isolation", "b"], "send_ahead does nothing here: offline sends no request body to open early"),
    (["--isolation", "a"], "offline sends no request body to open early; under isolation (a) each request is built anew"),
])
def test_send_ahead_asked_where_it_can_do_nothing_is_said_not_ignored(tmp_path, capsys, flags, says):
    """`--send-ahead` on the offline improviser (or claude-code), under isolation (a), or in turns that
    are not parallel beats does nothing: the run says so on stderr and in its notes."""
    from promptdesk.core.cli.main import main

    out = tmp_path / "run"
    assert main(["--batch", "the-apology", *flags, "--coordinator", "C", "--send-ahead", "--max-beats", "2",
                 "--journals", "none", "--out", str(out), "--quiet"]) == 0
    assert says in capsys.readouterr().err
    assert says in (out / "notes.md").read_text()


def test_send_ahead_where_it_acts_adds_no_notice(tmp_path):
    from promptdesk.core.casting.build import unsent_ahead
    from promptdesk.core.formats.registry import FORMATS
    from promptdesk.core.providers.spec import ProviderSpec

    scene = example_scene("the-apology")
    specs = {"alice": ProviderSpec(name="anthropic", model="claude-sonnet-4-6", send_ahead=True),
             "bob": ProviderSpec(name="openai", model="gpt-4.1-mini", send_ahead=True), "charlie": ProviderSpec()}
    assert unsent_ahead(FORMATS["scene"], scene, "b", specs) == []
    sequential = scene.model_copy(update={"turns": "sequential"})
    assert unsent_ahead(FORMATS["scene"], sequential, "b", specs) == [
        "send_ahead does nothing here: only parallel beats send requests ahead, not sequential turns"]
