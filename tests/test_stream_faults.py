"""Stream faults through both real SDKs against the loopback server: a stream without its finish
marker is a failed call (retried like a 5xx), and a stream broken after some text is retried once
its delivered text has been retracted (`on_reset`)."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from promptdesk.core.errors import ProviderError
from promptdesk.core.providers.anthropic_provider import AnthropicProvider
from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.providers.openai_provider import OpenAIProvider
from loopback import CANARY, FakeSleep, Reply, assert_no_leak, loopback  # noqa: F401 - fixture

TEXT = "<thinking>quiet</thinking><speech>The lamp is lit.</speech>"


class Listener:
    """What a console would show: fragments, with every reset wiping what was shown so far."""

    def __init__(self) -> None:
        self.fragments: list[str] = []
        self.resets = 0
        self.shown = ""

    def delta(self, piece: str) -> None:
        self.fragments.append(piece)
        self.shown += piece

    def reset(self) -> None:
        self.resets += 1
        self.shown = ""


@pytest.fixture(params=["anthropic", "openai"])
def api(request):
    return request.param


@pytest.fixture
def sleep():
    return FakeSleep()


@pytest.fixture
async def make(loopback, sleep, api):
    made = []

    def _make(**options):
        options = {"api_key": CANARY, "sleep": sleep, "timeout_s": 5.0, **options}
        if api == "anthropic":
            provider = AnthropicProvider("claude-sonnet-4-6", base_url=loopback.url(), **options)
        else:
            provider = OpenAIProvider("gpt-4.1-mini", base_url=loopback.url("/v1"), **options)
        made.append(provider)
        return provider
    yield _make
    for provider in made:
        await provider.aclose()


def request() -> Request:
    return Request(to="alice", system="You are Alice.", messages=[ChatMessage(role="user", content="Begin.")])


async def stream(provider, listener: Listener):
    return await provider.complete(request(), on_delta=listener.delta, on_reset=listener.reset)


@pytest.mark.parametrize("fault", [
    {"truncate_after_deltas": 2},  # mid-text
    {"truncate_after_deltas": 4},  # after the last text, before stop reason and marker
    {"drop_at_marker": True},  # stop reason and usage sent, the connection dropped where the marker comes
], ids=["mid-text", "after-last-text", "dropped-at-the-marker"])
async def test_a_stream_without_its_finish_marker_is_retried_never_accepted(loopback, make, sleep, fault):
    loopback.script(Reply(text=TEXT, deltas=4, **fault), Reply(text=TEXT, deltas=4))
    listener = Listener()
    completion = await stream(make(), listener)
    assert loopback.hits == 2 and len(sleep.calls) == 1
    assert completion.text == TEXT and listener.shown == TEXT
    assert listener.resets == 1


@pytest.mark.parametrize("api", ["openai"])
async def test_an_openai_stream_ended_cleanly_after_its_finish_reason_is_whole(loopback, make, sleep, all_logs):
    """text-generation-webui's API ends its stream after the chunk with the finish reason (and usage),
    with no `[DONE]`: the reply is whole (said once in debug.log). Anthropic's `message_stop` is still
    required (below); a connection dropped there is a failed call (above)."""
    loopback.script(Reply(text=TEXT, deltas=4, omit_marker=True))
    listener = Listener()
    completion = await stream(make(), listener)
    assert loopback.hits == 1 and completion.text == listener.shown == TEXT and listener.resets == 0
    assert "after its finish_reason (stop) without [DONE]" in all_logs.text


@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_stream_that_never_finishes_fails_after_the_retries(loopback, make, api):
    loopback.default = Reply(text=TEXT, deltas=4, omit_marker=True)
    listener = Listener()
    with pytest.raises(ProviderError, match="finish marker") as caught:
        await stream(make(max_retries=2), listener)
    assert loopback.hits == 3 and caught.value.retryable
    assert listener.shown == "" and listener.resets == 3
    assert ("message_stop" if api == "anthropic" else "[DONE]") in str(caught.value)
    assert f"its stop reason ({'end_turn' if api == 'anthropic' else 'stop'}) came" in str(caught.value)


async def test_a_connection_dropped_mid_stream_is_retried_after_a_reset(loopback, make, sleep, all_logs):
    loopback.script(Reply(text=TEXT, deltas=4, drop_after_deltas=2), Reply(text=TEXT, deltas=4))
    listener = Listener()
    completion = await stream(make(), listener)
    assert completion.text == TEXT and listener.shown == TEXT
    assert listener.resets == 1 and loopback.hits == 2 and len(sleep.calls) == 1
    assert len(listener.fragments) == 2 + 4
    assert_no_leak(completion, logs=all_logs.text)


async def test_an_error_event_mid_stream_is_retried_after_a_reset(loopback, make):
    loopback.script(Reply(text=TEXT, deltas=4, error_after_deltas=3, error_message=f"overloaded {CANARY}"),
                    Reply(text=TEXT, deltas=4))
    listener = Listener()
    completion = await stream(make(), listener)
    assert completion.text == listener.shown == TEXT and listener.resets == 1 and loopback.hits == 2


@pytest.mark.parametrize("purpose, knob", [("turn", "--timeout or timeout_s"),
                                            ("journal", "--journal-timeout or journal_timeout_s")])
async def test_a_server_that_never_answers_fails_naming_the_timeout_to_raise(loopback, make, purpose, knob):
    """Whichever clock runs out first (the attempt's whole bound, the SDK's read timeout), the
    failure says what to raise."""
    loopback.script(Reply(delay_s=1.0), Reply(stall_after_deltas=0, hold_s=1.0))
    for _ in range(2):
        with pytest.raises(ProviderError) as caught:
            await make(timeout_s=0.15, max_retries=0).complete(
                Request(to="alice", system="s", purpose=purpose, messages=[ChatMessage(role="user", content="Begin.")]),
                on_delta=lambda piece: None)
        assert "timed out" in caught.value.message and caught.value.retryable
        assert knob.split(" or ")[0 if purpose == "journal" else 1] in caught.value.message


async def test_a_stall_mid_stream_times_out_and_is_retried(loopback, make):
    loopback.script(Reply(text=TEXT, deltas=4, stall_after_deltas=1, hold_s=1.0), Reply(text=TEXT, deltas=4))
    listener = Listener()
    completion = await stream(make(timeout_s=0.2), listener)
    assert completion.text == listener.shown == TEXT and listener.resets == 1


async def test_a_drop_on_every_attempt_fails_with_nothing_left_shown(loopback, make, all_logs):
    loopback.default = Reply(text=TEXT, deltas=4, drop_after_deltas=1)
    listener = Listener()
    with pytest.raises(ProviderError, match="connection failed") as caught:
        await stream(make(max_retries=1), listener)
    assert loopback.hits == 2 and listener.shown == "" and listener.resets == 2
    assert "gave up after 2 attempts" in str(caught.value)
    assert caught.value.context["partial_text"] == listener.fragments[-1]
    assert "is the server running" not in caught.value.message, "it was reached: the stream was cut"
    assert_no_leak(caught.value, logs=all_logs.text)


async def test_a_server_never_reached_is_named_with_the_cause(api, sleep):
    """Nothing listens there: the failure names the address tried and the cause beneath the SDK's
    "Connection error." (a refused connection)."""
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago, on which nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}" + ("/v1" if api == "openai" else "")
    provider = (AnthropicProvider("claude-sonnet-4-6", api_key="k-test", base_url=url, sleep=sleep, max_retries=0)
                if api == "anthropic" else OpenAIProvider("llama3", base_url=url, compatible=True, sleep=sleep,
                                                          max_retries=0))
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.complete(Request(to="alice", system="s", messages=[ChatMessage(role="user", content="x")]),
                                    on_delta=lambda piece: None)
    finally:
        await provider.aclose()
    assert f"is the server running at {url}, and is that its address?" in caught.value.message
    assert "connect" in caught.value.message.lower().split("error.", 1)[-1] and caught.value.retryable


async def test_429_with_retry_after_then_5xx_then_success(loopback, make, sleep):
    loopback.script(Reply(status=429, headers={"retry-after": "2"}), Reply(status=503), Reply(text=TEXT))
    listener = Listener()
    completion = await stream(make(), listener)
    assert completion.text == listener.shown == TEXT and loopback.hits == 3
    assert sleep.calls[0] == 2.0 and len(sleep.calls) == 2 and listener.resets == 0


async def test_a_complete_stream_is_accepted_without_any_reset(loopback, make, sleep):
    loopback.script(Reply(text=TEXT, deltas=5))
    listener = Listener()
    completion = await stream(make(), listener)
    assert completion.text == listener.shown == TEXT and loopback.hits == 1 and listener.resets == 0


@pytest.fixture(autouse=True)
def all_logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


async def test_a_scene_retries_a_truncated_turn_and_tells_the_listener_to_retract(run_scene, loopback, monkeypatch):
    """Through the whole engine: the cut attempt's text is retracted by a `reset` delta, the retry's
    answer is the one spoken, and nothing of the cut attempt is recorded as speech."""
    from helpers import example_scene
    from test_scene_faults import remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    cut = turn('[TONE: firm] "We begin with the ledger, not with feelings."', "Draft one.")
    whole = turn('[TONE: calm] "Let us start at the beginning."', "Draft two.")
    loopback.script(Reply(text=cut, deltas=6, truncate_after_deltas=4))
    loopback.default = Reply(text=whole, deltas=6)
    cast = remote_cast(loopback, "alice", "bob", "charlie", max_retries=1)
    deltas = []
    run = await run_scene(example_scene("the-apology", cast=cast, limits={"max_beats": 2}), isolation="b",
                          coordinator="C", before_run=lambda s: s.subscribe(
                              lambda e: deltas.append(e) if e.type == "delta" else None))
    first = [d for d in deltas if d.beat == 0]
    resets = [i for i, d in enumerate(first) if d.channel == "reset"]
    assert len(resets) == 1
    after = "".join(d.text for d in first[resets[0] + 1:] if d.channel == "speech")
    assert "Let us start at the beginning." in after
    speeches = [r for r in run.records() if r["type"] == "speak"]
    assert speeches[0]["text"] == "Let us start at the beginning."
    assert not any("ledger" in r.get("text", "") for r in run.records())
    assert not [r for r in run.records() if r["type"] == "system" and r.get("target")]


# -- billed tokens of failed attempts ---------------------------------------------------------------------------

def billed(api: str, tokens: int) -> dict:
    """A reply's usage that bills `tokens` input tokens, in the wire form of `api`."""
    return {"input_tokens": tokens} if api == "anthropic" else {"prompt_tokens": tokens}


def cut(api: str) -> dict:
    """A stream that breaks after the provider reported its usage: Anthropic's `message_start`
    comes first, OpenAI's usage chunk only at the end (the `[DONE]` after it never comes)."""
    return {"drop_after_deltas": 2} if api == "anthropic" else {"drop_at_marker": True}


async def test_a_cut_stream_carries_what_it_was_billed_on_its_error(loopback, make, api):
    loopback.default = Reply(text=TEXT, deltas=4, usage=billed(api, 4000), **cut(api))
    with pytest.raises(ProviderError) as caught:
        await stream(make(max_retries=1), Listener())
    assert loopback.hits == 2
    assert caught.value.usage is not None and caught.value.usage.input_tokens == 2 * 4000


async def test_a_retried_call_counts_the_billed_tokens_of_its_failed_attempt(loopback, make, api):
    loopback.script(Reply(text=TEXT, deltas=4, usage=billed(api, 4000), **cut(api)),
                    Reply(text=TEXT, deltas=4, usage=billed(api, 300)))
    completion = await stream(make(), Listener())
    assert completion.text == TEXT and loopback.hits == 2
    assert completion.usage.input_tokens == 4000 + 300


async def test_a_failure_before_any_usage_arrived_bills_nothing(loopback, make):
    loopback.default = Reply(status=503)
    with pytest.raises(ProviderError) as caught:
        await stream(make(max_retries=1), Listener())
    assert caught.value.usage is None


async def test_a_call_cancelled_mid_stream_still_carries_its_message_start_usage(loopback):
    """A stop or a turn timeout cancels a call whose `message_start` already billed its input (only
    Anthropic reports usage before the text; OpenAI's usage chunk comes last)."""
    loopback.default = Reply(text=TEXT, deltas=4, usage={"input_tokens": 2500}, stall_after_deltas=1, hold_s=5.0)
    provider = AnthropicProvider("claude-sonnet-4-6", api_key=CANARY, base_url=loopback.url(), timeout_s=5.0)
    first = asyncio.Event()
    task = asyncio.ensure_future(provider.complete(request(), on_delta=lambda piece: first.set(), on_reset=lambda: None))
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await task
    assert caught.value.usage.input_tokens == 2500
    await provider.aclose()


def test_a_batch_run_counts_the_billed_tokens_of_a_cut_stream(tmp_path, loopback, monkeypatch, capsys):
    """`--batch` through the engine: the first call's stream breaks after `message_start` billed
    9000 input tokens; its retry answers. The call's record, metadata.json and the summary count both."""
    import json

    import yaml

    from promptdesk.core.cli.main import main
    from promptdesk.core.record.recorder import read_events
    from helpers import CHARACTERS, example_scene
    from test_scene_faults import remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    answer = turn('[TONE: calm] "Let us start at the beginning."', "Draft.")
    loopback.script(Reply(text=answer, deltas=6, drop_after_deltas=3, usage={"input_tokens": 9000}))
    loopback.default = Reply(text=answer, deltas=6, usage={"input_tokens": 100})
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie", max_retries=1),
                          limits={"max_beats": 2})
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(scene.model_dump(mode="json", by_alias=True, exclude_none=True)))
    out = tmp_path / "run"
    assert main(["--batch", str(path), "--isolation", "b", "--coordinator", "C", "--seed", "1", "--quiet",
                 "--characters-dir", str(CHARACTERS), "--out", str(out)]) == 0
    calls = [e for e in read_events(out) if e.type == "call"]
    assert calls[0].ok and calls[0].input_tokens == 9000 + 100
    assert calls[0].cost_usd == pytest.approx((9000 + 100) * 3 / 1e6 + calls[0].output_tokens * 15 / 1e6)
    tokens = sum(e.input_tokens + e.output_tokens + e.cache_write_tokens + e.cache_read_tokens for e in calls)
    assert f"{tokens:,} tokens" in capsys.readouterr().err
    assert json.loads((out / "metadata.json").read_text())["costs"]["totalTokens"] == tokens


async def test_a_failed_call_records_the_input_tokens_its_cut_stream_was_billed(run_scene, loopback, monkeypatch):
    from helpers import example_scene
    from test_scene_faults import remote_cast, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    answer = turn('[TONE: calm] "Let us start at the beginning."', "Draft.")
    loopback.script(Reply(text=answer, deltas=6, drop_after_deltas=2, usage={"input_tokens": 7000}))
    loopback.default = Reply(text=answer, deltas=6, usage={"input_tokens": 100})
    run = await run_scene(example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                                        limits={"max_beats": 2}), isolation="b", coordinator="C")
    failed = [e for e in run.events() if e.type == "call" and not e.ok]
    assert len(failed) == 1 and failed[0].input_tokens == 7000
    assert failed[0].cost_usd == pytest.approx(7000 * 3 / 1e6 + failed[0].output_tokens * 15 / 1e6)
    assert run.session.state.cost_usd == pytest.approx(sum(e.cost_usd for e in run.events() if e.type == "call"))


@pytest.mark.parametrize("streamed", [True, False])
@pytest.mark.parametrize("at_limit", [True, False])
async def test_a_reply_that_stopped_at_its_token_limit_says_so(loopback, make, streamed, at_limit):
    loopback.script(Reply(text=TEXT, at_limit=at_limit))
    listener = Listener()
    completion = await (stream(make(), listener) if streamed else make().complete(request()))
    assert completion.text == TEXT and completion.truncated is at_limit


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_reply_that_calls_a_tool_never_offered_says_so_and_its_arguments_are_never_the_answer(
        loopback, make, api, streamed):
    """A model that answers with a tool call (OpenAI `tool_calls`, Anthropic `tool_use`) though no
    tool was offered: the reply's text is what text came with it (none), the call is named by its
    stop reason, and its arguments are never read as the answer nor streamed to the listener."""
    arguments = '{"words": "I hid the ledger"}'
    loopback.script(Reply(text=arguments, tool_call="speak"))
    listener = Listener()
    completion = await (stream(make(), listener) if streamed else make().complete(request()))
    assert completion.text == "" and "ledger" not in "".join(listener.fragments)
    assert completion.unoffered_tool == {"openai": "tool_calls", "anthropic": "tool_use"}[api]


async def test_a_forced_tool_that_carries_a_json_answer_is_no_unoffered_tool(loopback, make, api):
    """Under `protocol: json` Claude is made to answer through a tool of ours: that is the answer."""
    from promptdesk.core.protocol.structured import turn_schema

    loopback.script(Reply(text='{"thinking": "q", "speak": {"words": "Hello"}}'))
    asked = request().model_copy(update={"json_schema": turn_schema(["Bob"])})
    completion = await make().complete(asked, on_delta=Listener().delta)
    assert completion.unoffered_tool is None and "Hello" in completion.text


async def test_a_turn_that_calls_a_tool_says_so_in_its_correction_its_silence_and_debug_log(run_scene, loopback, api,
                                                                                          monkeypatch):
    """An actor whose model keeps calling a tool Promptdesk never offered: its corrections and its
    silence name the cause, debug.log says which stop reason, and the call's arguments go nowhere."""
    from helpers import example_scene
    from test_scene_faults import remote_cast, scripted, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)

    def answer(who, recorded):
        if who == "alice":
            return Reply(text='{"words": "I hid the ledger"}', tool_call="speak")
        return Reply(text=turn("[SILENT]"))

    loopback.default = scripted(answer)
    model = "claude-sonnet-4-6" if api == "anthropic" else "gpt-4.1-mini"
    cast = remote_cast(loopback, "alice", "bob", "charlie", provider=api, model=model)
    run = await run_scene(example_scene("the-apology", cast=cast, limits={"max_beats": 1}),
                          isolation="a", coordinator="C", journals="none")
    records = run.records()
    corrections = [r for r in records if r["type"] == "correct" and r["target"] == "alice"]
    silent = [r for r in records if r["type"] == "system" and r["target"] == "alice"]
    assert corrections and all("call a tool" in r["text"] for r in corrections)
    assert silent and "call a tool" in silent[0]["text"]
    reason = {"openai": "tool_calls", "anthropic": "tool_use"}[api]
    assert f"asked to call a tool ({reason})" in (run.dir / "debug.log").read_text()
    assert all("ledger" not in (run.dir / name).read_text() for name in ("transcript.txt", "events.jsonl"))


async def test_a_turn_cut_at_its_token_limit_says_so_in_its_correction_and_its_silence(run_scene, loopback, api,
                                                                                        monkeypatch):
    """A small model that runs out of tokens mid-speech: its turn is corrected and then silent, and
    both lines say why (the reply stopped at its token limit), not only that a tag is unclosed."""
    from helpers import example_scene
    from test_scene_faults import remote_cast, scripted, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    cut = "<thinking>A long plan that goes on and on</thinking>\n<speech>[TO: Bob] \"I was about to"

    def answer(who, recorded):
        if who == "alice":
            return Reply(text=cut, at_limit=True)
        return Reply(text=turn("[SILENT]"))

    loopback.default = scripted(answer)
    model = "claude-sonnet-4-6" if api == "anthropic" else "gpt-4.1-mini"
    cast = remote_cast(loopback, "alice", "bob", "charlie", provider=api, model=model)
    scene = example_scene("the-apology", cast=cast, limits={"max_beats": 1})
    run = await run_scene(scene, isolation="a", coordinator="C", journals="none")
    records = run.records()
    corrections = [r for r in records if r["type"] == "correct" and r["target"] == "alice"]
    silent = [r for r in records if r["type"] == "system" and r["target"] == "alice"]
    assert corrections and all("token limit" in r["text"] for r in corrections)
    assert silent and "token limit" in silent[0]["text"] and "Alice silent this turn" in silent[0]["text"]
    assert "stopped at its token limit" in (run.dir / "debug.log").read_text()
    assert "I was about to" not in (run.dir / "transcript.txt").read_text()


async def test_a_journal_entry_cut_at_its_token_limit_is_kept_and_said_to_be_cut(run_scene, loopback, monkeypatch,
                                                                                  tmp_path):
    from helpers import example_scene
    from test_scene_faults import remote_cast, scripted, turn

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)

    def answer(who, recorded):
        if "journal entry" in str(recorded.body["messages"][-1]):
            return Reply(text="Dear diary, today Bob and I", at_limit=who == "alice")
        return Reply(text=turn('[TONE: calm] "Go on."'))

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 1})
    run = await run_scene(scene, isolation="a", coordinator="C", journals=tmp_path / "journals")
    records = run.records()
    entries = {r["from"]: r["text"] for r in records if r["type"] == "journal"}
    assert entries["alice"] == entries["bob"] == "Dear diary, today Bob and I"
    cut = [r for r in records if r["type"] == "system" and "token limit" in r["text"]]
    assert [r["about"] for r in cut] == ["alice"] and "Alice's journal entry stopped at its token limit" in cut[0]["text"]


async def test_a_journal_reply_holding_only_private_text_writes_no_entry_and_says_so(run_scene, loopback, monkeypatch,
                                                                                   tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    run, records, said = await _bob_journals(run_scene, loopback, tmp_path,
                                             "<thinking>SECRET-diary: I lied to them.</thinking>")
    assert len(said) == 1 and "Bob wrote no journal entry" in said[0]["text"]
    assert not (tmp_path / "journals" / "bob.md").exists() or "SECRET" not in (tmp_path / "journals" / "bob.md").read_text()
    assert "SECRET" not in json.dumps(records) and "SECRET-diary" in (run.dir / "debug.log").read_text()


async def test_a_turn_the_model_refused_is_silent_names_the_refusal_and_asks_no_correction(run_scene, loopback,
                                                                                          monkeypatch):
    from helpers import example_scene
    from test_provider_odd_replies import _refusal_frames
    from test_scene_faults import remote_cast, scripted, turn

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)

    def answer(who, recorded):
        if who == "bob" and "journal entry" not in str(recorded.body["messages"][-1]):
            return Reply(raw=_refusal_frames("REFUSAL-words: I won't play Bob."))
        return Reply(text=turn('[TONE: calm] "Go on."'))

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie", provider="openai",
                                                          model="gpt-4o-mini"), limits={"max_beats": 2})
    run = await run_scene(scene, isolation="b", coordinator="C")
    records = run.records()
    assert not [r for r in records if r["type"] == "correct"], "a refusal is its answer: no correction is asked"
    bob = [r for r in records if r["type"] == "speak" and r["from"] == "bob"]
    said = [r for r in records if r["type"] == "system" and r.get("target") == "bob"]
    assert bob and all(r["action"] == "silent" for r in bob) and len(said) == len(bob)
    assert all("the model refused to answer (its words are in debug.log)" in r["text"] for r in said)
    assert all("no well-formed <speech> and no correction asked" in r["text"] and "after 2 corrections" not in r["text"]
               for r in said), "the silence says how many corrections there were: none"
    assert "REFUSAL-words" not in json.dumps(records) and "REFUSAL-words" in (run.dir / "debug.log").read_text()


async def test_a_refused_journal_entry_is_named_a_refusal_and_its_words_stay_out_of_the_journal(run_scene, loopback,
                                                                                              monkeypatch, tmp_path):
    """A model that refuses to write its entry (Anthropic's `stop_reason: refusal`): no entry, and
    the system line says it was refused, not that the reply held only private text."""
    from test_provider_odd_replies import stopped

    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    run, records, said = await _bob_journals(run_scene, loopback, tmp_path,
                                             stopped("anthropic", "plain", "REFUSED-words: I cannot", "refusal"))
    assert len(said) == 1 and said[0]["reason"] == "refused"
    assert "Bob wrote no journal entry: the model refused" in said[0]["text"] and "private text" not in said[0]["text"]
    assert "REFUSED-words" not in json.dumps(records) and "REFUSED-words" in (run.dir / "debug.log").read_text()


async def _bob_journals(run_scene, loopback, tmp_path, bobs):
    """The Apology for one beat, every actor on the loopback, Bob answering his journal call with
    `bobs` and the others with an entry: (the run, its records, the system lines about Bob)."""
    from helpers import example_scene
    from test_scene_faults import remote_cast, scripted, turn

    def answer(who, recorded):
        if "journal entry" in str(recorded.body["messages"][-1]):
            return bobs if who == "bob" else "A long day."
        return turn('[TONE: calm] "Go on."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 1})
    run = await run_scene(scene, isolation="a", coordinator="C", journals=tmp_path / "journals")
    records = run.records()
    assert {r["from"] for r in records if r["type"] == "journal"} == {"alice", "charlie"}
    return run, records, [r for r in records if r["type"] == "system" and r.get("about") == "bob"]
