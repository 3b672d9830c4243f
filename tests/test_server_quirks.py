"""What the servers people point Promptdesk at send besides the textbook stream, through the real
SDKs against the loopback server: each quirk is either read as the server meant it or is a failure
that says what to change, never a turn lost in silence nor private thinking taken for an answer."""

from __future__ import annotations

import json
import logging

import pytest

from promptdesk.core.errors import ProviderError
from loopback import Reply, loopback  # noqa: F401 - fixture
from test_provider_odd_replies import all_logs, complete, make, sse  # noqa: F401 - fixtures
from test_stream_faults import sleep  # noqa: F401 - fixture

SPEECH = "<thinking>q</thinking><speech>Hi there.</speech>"


def chunk(delta, finish=None):
    return sse({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "llama3",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("last", ["null on the last chunk", "no last chunk"])
async def test_a_stream_ended_by_done_without_a_finish_reason_is_whole(loopback, make, all_logs, last):
    """Some servers and gateways never fill `finish_reason` (null on every chunk) yet end the stream
    with `[DONE]`: the answer is whole. Every call failed as "ended without its finish marker", was
    retried to the same end, and the actor was "unable to respond" for the whole scene."""
    frames = [chunk({"role": "assistant", "content": ""}), chunk({"content": SPEECH})]
    frames += [chunk({}, None)] if last == "null on the last chunk" else []
    loopback.script(Reply(raw=[*frames, sse("[DONE]")]))
    completion, shown = await complete(make(max_retries=0), "stream")
    assert completion.text == "".join(shown) == SPEECH
    assert not completion.truncated
    assert "gave no finish_reason" in all_logs.text


@pytest.mark.parametrize("api", ["openai"])
async def test_a_stream_without_done_or_a_finish_reason_still_fails(loopback, make):
    loopback.script(Reply(raw=[chunk({"content": SPEECH}), chunk({}, None)]))
    with pytest.raises(ProviderError, match=r"finish marker \(a finish_reason, or \[DONE\]\)"):
        await complete(make(max_retries=0), "stream")


TGW_CRLF = [frame.replace(b"\n", b"\r\n") for frame in (
    b": ping - 2026-11-29 16:00:00.000000\n\n",
    sse({"id": "c", "object": "chat.completions.chunk", "created": 0, "model": "Qwen2.5-7B",
         "choices": [{"index": 0, "finish_reason": None, "delta": {"role": "assistant", "content": ""}}]}),
    sse({"id": "c", "object": "chat.completions.chunk", "created": 0, "model": "Qwen2.5-7B",
         "choices": [{"index": 0, "finish_reason": None, "delta": {"role": "assistant", "content": SPEECH}}]}),
    b": ping - 2026-11-29 16:00:15.000000\n\n",
    sse({"id": "c", "object": "chat.completions.chunk", "created": 0, "model": "Qwen2.5-7B",
         "choices": [{"index": 0, "finish_reason": "stop", "delta": {"role": "assistant", "content": ""}}],
         "usage": {"prompt_tokens": 310, "completion_tokens": 21, "total_tokens": 331}}))]


@pytest.mark.parametrize("api", ["openai"])
async def test_text_generation_webuis_stream_is_whole_without_done(loopback, make, all_logs):
    """text-generation-webui's API (sse_starlette: CRLF framing, `: ping` comments) ends its stream after
    the chunk with the finish reason and usage, with no `[DONE]`: every call failed as a stream
    "without its finish marker ([DONE]): its stop reason (stop) came", was retried to the same end,
    and no actor on it ever spoke."""
    loopback.script(Reply(raw=TGW_CRLF))
    completion, shown = await complete(make(max_retries=0), "stream")
    assert completion.text == "".join(shown) == SPEECH
    assert (completion.usage.input_tokens, completion.usage.output_tokens, completion.usage.reported) == (310, 21, True)
    assert "without [DONE], as text-generation-webui does" in all_logs.text
    loopback.script(Reply(raw=TGW_CRLF, raw_drop=True))  # the same, its connection dropped at the end
    with pytest.raises(ProviderError):
        await complete(make(max_retries=0), "stream")


# -- a reasoning model's preamble under protocol: json --------------------------------------------
PLAN = "my private plan is to blame the vendor"


async def test_a_json_turn_after_a_think_preamble_is_read_and_the_preamble_kept_private(run_scene, loopback):
    """A reasoning model whose server constrains only its answer (Qwen3 or DeepSeek-R1 served without a
    reasoning parser) thinks in `<think>…</think>` and then writes the JSON object: the object is the
    turn, the preamble is private. Every such turn was "not valid JSON", corrected twice and silenced."""
    from helpers import example_scene
    from test_json_protocol import json_cast, reply

    def answer(recorded):
        journal = "journal entry" in json.dumps(recorded.body["messages"][-1])
        text = "I remember the day." if journal else reply(to=None, words="Let us talk about the timeline.")
        return Reply(text=f"<think>{PLAN}: {{\"to\": \"Bob\"}}</think>\n\n{text}", deltas=5)

    loopback.default = answer
    deltas = []
    scene = example_scene("the-apology", limits={"max_beats": 2}, cast=json_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="b", coordinator="C",
                          before_run=lambda s: s.subscribe(lambda e: deltas.append(e) if e.type == "delta" else None))
    records = run.records()
    assert not [r for r in records if r["type"] == "correct"]
    spoken = [r for r in records if r["type"] == "speak"]
    assert len(spoken) >= 3 and all(s["text"] == "Let us talk about the timeline." for s in spoken)
    assert not any(PLAN in json.dumps(r) for r in records if r["type"] != "think")
    assert not any(PLAN in d.text for d in deltas if d.channel != "think")
    for prompt in run.prompts():  # run_scene audits the record too
        assert PLAN not in json.dumps(prompt["request"]["messages"]), "a private preamble was sent on"


# -- a reasoning model as the judge ---------------------------------------------------------------
DRAFT_CLOSE = '{"decision": "close", "reason": "they reconciled"}'


@pytest.mark.parametrize("cut", [False, True], ids=["answer after the preamble", "cut inside the preamble"])
async def test_a_reasoning_judge_is_read_after_its_preamble_never_from_a_draft_inside_it(run_scene, loopback, cut):
    """A judge on a reasoning model (DeepSeek-R1 through vLLM without a reasoning parser) drafts its
    JSON inside `<think>`: the decision is the object after the preamble, and a draft in a preamble
    that was cut off (its token limit) is never taken for the decision. The first made every decision
    "unusable" (role C's rules used); the second closed the scene on a thought the judge never gave."""
    from helpers import example_scene
    from test_scene_faults import remote_cast, turn

    def answer(recorded):
        body = json.dumps(recorded.body)
        if "the scene has ended" in body:
            return Reply(text='<think>Draft: {"goal_achieved": true, "reason": "x"}</think>'
                              '{"goal_achieved": false, "reason": "Bob never apologised."}')
        if "coordinator of a scene" in body:
            draft = f"<think>I could answer {DRAFT_CLOSE}, but not yet"
            return Reply(text=draft if cut else draft + '.</think>\n{"decision": "continue"}', at_limit=cut)
        return Reply(text=turn('[TO: Bob, TONE: firm] "Walk me through the timeline once more."'))

    loopback.default = answer
    judge = {"name": "openai-compatible", "model": "deepseek-r1", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = example_scene("the-apology", judge=judge, limits={"max_beats": 4},
                          cast=remote_cast(loopback, "alice", "bob", "charlie", provider="openai-compatible",
                                           model="deepseek-r1"))
    run = await run_scene(scene, isolation="a", coordinator="B")
    decisions = [r for r in run.records() if r["type"] == "decision"]
    assert run.result.close_reason != "natural" and run.result.beats == 4
    assert not any("they reconciled" in json.dumps(d) for d in decisions)
    log = (run.dir / "debug.log").read_text()
    assert ("judge decision unusable" in log) == cut
    assert ("it is all reasoning (`<think>`), cut off or never answered" in log) == cut  # and what to change
    close = next(r for r in run.records() if r["type"] == "close")
    assert (close["goal_achieved"], close["goal_reason"]) == (False, "Bob never apologised.")


# -- a model the price table does not know ----------------------------------------------------------
@pytest.mark.parametrize("model, priced", [("deepseek-chat", False), ("gpt-4o-mini", True)])
def test_a_model_with_no_known_price_costs_unknown_in_every_record_never_zero(capsys, tmp_path, loopback, model,
                                                                              priced):
    """A hosted model the price table does not know (DeepSeek, Qwen, a Groq or Together model) through
    `openai-compatible`: its usage is reported, its price is not. The batch summary said `+ unknown (no
    price for …)`, but both transcripts said `estimated cost $0.0000 USD`, `promptdesk metrics` (and so
    compare and report) gave the run and each actor `cost_usd 0`, and `metadata.json`'s `cache_saving`
    said caching saved 0.0 of a cost no one knows."""
    from promptdesk.core.experiments.metrics import metrics_of
    from helpers import batch_run, served_scene
    from test_scene_faults import turn

    loopback.default = Reply(text=turn('[TO: Bob, TONE: firm] "Walk me through the timeline."'))
    code, err, out = batch_run(capsys, tmp_path, served_scene(tmp_path, loopback, model=model))
    assert code == 0, err
    unknown = f" + unknown (no price for openai-compatible:{model})"
    assert (unknown in err) != priced
    md, txt = ((out / name).read_text() for name in ("transcript.md", "transcript.txt"))
    assert (unknown in md.split("## Post-scene notes")[1]) != priced
    assert (unknown in txt.split("STATISTICS:")[1]) != priced
    metrics = metrics_of(out, audit=False)
    assert metrics.tokens > 0
    assert (metrics.cost_usd is None) != priced
    assert all((actor.cost_usd is None) != priced for actor in metrics.actors.values())
    saving = json.loads((out / "metadata.json").read_text())["cache_saving"]
    assert (saving["run"] is None) != priced and all((v is None) != priced for v in saving["perActor"].values())


# -- usage where each server puts it -----------------------------------------------------------------
@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("mode", ["plain", "stream"])
async def test_deepseeks_cache_hits_are_cache_reads(loopback, make, mode):
    """DeepSeek reports its context cache as `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`,
    not in `prompt_tokens_details`: the hits were billed as fresh input (cache reads 0)."""
    from test_provider_odd_replies import answer

    usage = {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020,
             "prompt_cache_hit_tokens": 800, "prompt_cache_miss_tokens": 200}
    loopback.script(answer("openai", mode, SPEECH, usage))
    completion, _ = await complete(make(), mode)
    got = completion.usage
    assert (got.input_tokens, got.cache_read_tokens, got.output_tokens, got.reported) == (200, 800, 20, True)


@pytest.mark.parametrize("api", ["openai"])
async def test_groqs_usage_in_x_groq_is_the_calls_usage(loopback, make):
    """Groq's stream carries its usage in `x_groq.usage` on the last chunk: the call's usage was unknown."""
    last = sse({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "llama3",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "x_groq": {"id": "req_1", "usage": {"prompt_tokens": 90, "completion_tokens": 12, "total_tokens": 102,
                                                    "queue_time": 0.01, "prompt_time": 0.002}}})
    loopback.script(Reply(raw=[chunk({"role": "assistant", "content": SPEECH}), last, sse("[DONE]")]))
    completion, _ = await complete(make(), "stream")
    got = completion.usage
    assert (got.input_tokens, got.output_tokens, got.reported) == (90, 12, True)


# -- rate-limit headers without a budget's name -------------------------------------------------------
@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("server, reset, expected", [
    ("together", "12", 12.0),
    ("openrouter (epoch ms)", "EPOCH_MS", 20.0),
    ("epoch seconds", "EPOCH_S", 20.0),
    ("far off", "4102444800000", 30.0),
])
async def test_a_spent_budget_in_the_unsuffixed_headers_is_a_wait(loopback, make, monkeypatch, server, reset, expected):
    """Together and OpenRouter name one budget, `x-ratelimit-remaining` with `x-ratelimit-reset` (seconds
    to wait, or the reset as epoch milliseconds): a spent one was never seen, so a sweep's limiter
    sent request after request into 429s instead of pausing every run on that model."""
    import time as clock

    now = 1_800_000_000.0
    monkeypatch.setattr(clock, "time", lambda: now)
    value = {"EPOCH_MS": str(int((now + 20) * 1000)), "EPOCH_S": str(int(now + 20))}.get(reset, reset)
    loopback.script(Reply(text=SPEECH, headers={"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0",
                                                "X-RateLimit-Reset": value}))
    provider = make(retry_after_cap_s=30.0)
    await complete(provider, "stream")
    assert provider.rate_wait is not None and provider.rate_wait.seconds == pytest.approx(expected)
    assert "request budget is spent" in provider.rate_wait.text()


@pytest.mark.parametrize("api", ["openai"])
async def test_an_unsuffixed_budget_not_spent_asks_no_wait(loopback, make):
    loopback.script(Reply(text=SPEECH, headers={"X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "12"}))
    provider = make()
    await complete(provider, "stream")
    assert provider.rate_wait is None


# -- Azure-style paths -------------------------------------------------------------------------------
def test_a_base_url_with_a_query_is_refused_naming_azures_v1_url(capsys, tmp_path):
    """An Azure OpenAI deployment's URL with its `?api-version=…`: the SDK pasted the query before the
    endpoint (`…/gpt4o/?api-version=2024-10-21chat/completions`), every call was a 404, and the hint
    said the base URL was "most likely …?api-version=2024-10-21/v1"."""
    from promptdesk.core.cli.main import main
    from helpers import CHARACTERS

    url = "https://res.openai.azure.com/openai/deployments/gpt4o?api-version=2024-10-21"
    code = main(["--batch", "the-apology", "--isolation", "a", "--coordinator", "C", "--provider", "openai-compatible",
                 "--model", "gpt4o", "--base-url", url, "--characters-dir", str(CHARACTERS), "--journals", "none",
                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "carries a query (?api-version=2024-10-21)" in err
    assert "https://<resource>.openai.azure.com/openai/v1" in err
    assert not (tmp_path / "run").exists()


async def test_a_404_from_an_azure_deployment_path_names_the_v1_url(loopback, sleep):
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    loopback.default = Reply(status=404, body={"error": {"code": "404", "message": "Resource not found"}})
    provider = OpenAIProvider("gpt4o", base_url=loopback.url("/openai/deployments/gpt4o"), compatible=True,
                              sleep=sleep, max_retries=0, timeout_s=5)
    try:
        with pytest.raises(ProviderError) as caught:
            await complete(provider, "stream")
    finally:
        await provider.aclose()
    assert "Azure OpenAI deployment" in str(caught.value) and "/openai/v1" in str(caught.value)
    assert "most likely" not in str(caught.value)


# -- a model the server does not serve ----------------------------------------------------------------
OLLAMA_404 = {"error": {"message": 'model "llama3" not found, try pulling it first', "type": "not_found_error"}}


@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("status, body", [
    (404, OLLAMA_404),
    (404, {"object": "error", "message": "The model `llama3` does not exist.", "type": "NotFoundError", "code": 404}),
    (400, {"error": {"message": "llama3 is not a valid model ID", "code": 400}}),
], ids=["ollama", "vllm", "openrouter"])
async def test_a_model_the_server_does_not_list_fails_naming_the_ones_it_serves(loopback, make, status, body):
    loopback.models = ["qwen3:8b", "llama3.1:8b", "\x1b[31mgemma3\x1b[0m"]
    loopback.default = Reply(status=status, body=body)
    provider = make(max_retries=0)
    for _ in range(2):
        with pytest.raises(ProviderError) as caught:
            await complete(provider, "stream")
        said = str(caught.value)
        assert "the server lists no model 'llama3': it serves qwen3:8b, llama3.1:8b, gemma3" in said, said
        assert "\x1b" not in said
    assert loopback.model_lists == 1  # asked once


async def test_a_model_list_that_echoes_the_key_never_shows_it(loopback, sleep, monkeypatch):
    from loopback import CANARY, assert_no_leak
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", CANARY)
    loopback.models = [f"key-{CANARY}"]
    loopback.default = Reply(status=404, body=OLLAMA_404)
    provider = OpenAIProvider("llama3", base_url=loopback.url("/v1"), compatible=True, sleep=sleep, max_retries=0)
    try:
        with pytest.raises(ProviderError) as caught:
            await complete(provider, "stream")
    finally:
        await provider.aclose()
    assert "lists no model" in str(caught.value)
    assert_no_leak(caught.value)


@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("models", [None, ["llama3", "qwen3:8b"]], ids=["no list", "the model is listed"])
async def test_a_404_is_left_as_it_was_when_the_list_cannot_help(loopback, make, models):
    loopback.models = models
    loopback.default = Reply(status=404, body=OLLAMA_404)
    with pytest.raises(ProviderError) as caught:
        await complete(make(max_retries=0), "stream")
    assert "lists no model" not in str(caught.value) and "not found, try pulling it first" in str(caught.value)


# -- Anthropic-compatible gateways -----------------------------------------------------------------
@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_gateway_stream_without_event_lines_is_read_by_each_datas_type(loopback, make):
    """Some Anthropic-compatible gateways write `data:` lines alone, the event's name only in its
    `type`: the SDK skips unnamed events, so every call failed as a stream "without its finish marker
    (message_stop)", retried to the same end. An unnamed error event is still an error."""
    from test_provider_odd_replies import anthropic_frames

    def unnamed(frames):
        return [b"\n".join(line for line in frame.split(b"\n") if not line.startswith(b"event:")) for frame in frames]

    loopback.script(Reply(raw=unnamed(anthropic_frames(SPEECH, {"input_tokens": 12, "output_tokens": 3}))))
    completion, shown = await complete(make(max_retries=0), "stream")
    assert completion.text == "".join(shown) == SPEECH
    assert (completion.usage.input_tokens, completion.usage.reported) == (12, True)
    loopback.script(Reply(raw=[sse({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})]))
    with pytest.raises(ProviderError, match="overloaded_error: busy"):
        await complete(make(max_retries=0), "stream")


# -- the openai provider pointed at another server -----------------------------------------------------
async def test_a_server_refusing_openais_own_arguments_names_openai_compatible(loopback, sleep, monkeypatch):
    """`--provider openai --base-url https://api.groq.com/openai/v1`: the request carries
    `prompt_cache_key` and `max_completion_tokens`, which Groq (and others) refuse with a 400; the
    failure said only what the server said."""
    from loopback import CANARY
    from promptdesk.core.providers.openai_provider import OpenAIProvider

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    loopback.default = Reply(status=400, body={"error": {
        "message": "property 'prompt_cache_key' is unsupported, did you mean 'prompt'?", "type": "invalid_request_error"}})
    provider = OpenAIProvider("llama-3.3-70b-versatile", base_url=loopback.url("/v1"), sleep=sleep, max_retries=0)
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.complete(_request(), lambda _: None)
    finally:
        await provider.aclose()
    assert "give --provider openai-compatible" in str(caught.value) and CANARY not in str(caught.value)
    assert len(loopback.requests) == 1 and loopback.requests[0].body["prompt_cache_key"]


def _request():
    from promptdesk.core.providers.base import ChatMessage, Request

    return Request(to="alice", system="You are Alice.", messages=[ChatMessage(role="user", content="Begin.")],
                   cache_key="promptdesk-alice")


# -- a rate limit that outlasts the retries --------------------------------------------------------------
@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("retry_after, longer", [("120", True), ("2", False)])
async def test_a_rate_limit_that_outlasts_the_retries_names_what_to_change(loopback, make, sleep, retry_after, longer):
    """Groq or Together answering 429 through every retry: the failure said only the server's words and
    "gave up after 3 attempts", not that the wait asked for was over the cap, nor which settings help."""
    loopback.default = Reply(status=429, headers={"retry-after": retry_after}, error_message="Rate limit reached")
    with pytest.raises(ProviderError) as caught:
        await complete(make(max_retries=2, retry_after_cap_s=30.0), "stream")
    said = str(caught.value)
    assert "gave up after 3 attempts" in said and "lower --max-concurrency" in said and "retry_after_cap_s" in said
    assert ("it asked to wait 120 s, longer than retry_after_cap_s (30 s)" in said) == longer
    assert sleep.calls == ([30.0, 30.0] if longer else [2.0, 2.0])


@pytest.mark.parametrize("api", ["openai"])
async def test_another_failure_that_outlasts_the_retries_gets_no_rate_limit_advice(loopback, make):
    loopback.default = Reply(status=503)
    with pytest.raises(ProviderError) as caught:
        await complete(make(max_retries=1), "stream")
    assert "rate limit" not in str(caught.value)


# -- a reasoning model that spends its turn thinking ---------------------------------------------------
@pytest.mark.parametrize("finish", ["length", "stop"])
async def test_a_turn_of_reasoning_only_is_silenced_naming_the_reasoning(run_scene, loopback, finish):
    """DeepSeek-R1 or Qwen3 through vLLM's reasoning parser: the whole reply went to `reasoning_content`
    and the text is empty. The silence said only "no <thinking>/<speech> tags" (and the token limit):
    what happened, and what to change, was in debug.log alone. The reasoning stays private."""
    from helpers import example_scene
    from test_scene_faults import remote_cast

    frames = [chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
              chunk({"reasoning_content": PLAN}), chunk({}, finish), sse("[DONE]")]
    loopback.default = Reply(raw=frames)
    scene = example_scene("the-apology", limits={"max_beats": 1},
                          cast=remote_cast(loopback, "alice", "bob", "charlie", provider="openai-compatible",
                                           model="deepseek-r1"))
    run = await run_scene(scene, isolation="a", coordinator="C")
    records = run.records()
    silences = [r for r in records if r["type"] == "system" and "silent this turn" in r["text"]]
    assert silences and all("the server sent only reasoning" in r["text"] and "reasoning off" in r["text"]
                            for r in silences)
    assert not any(PLAN in json.dumps(r) for r in records)


@pytest.mark.parametrize("api", ["openai"])
async def test_a_stream_of_nothing_but_done_is_still_no_answer(loopback, make):
    loopback.script(Reply(raw=[chunk({"role": "assistant", "content": ""}), sse("[DONE]")]))
    with pytest.raises(ProviderError, match=r"finish marker"):
        await complete(make(max_retries=0), "stream")


@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_gateway_refusing_cache_marks_names_isolation_a(loopback, make):
    """A Bedrock- or Vertex-style gateway without prompt caching refuses isolation (b)'s `cache_control`
    marks with a 400: the failure said only what the gateway said."""
    from promptdesk.core.providers.base import ChatMessage, Request

    loopback.default = Reply(status=400, error_type="invalid_request_error",
                             error_message="system.0.cache_control: Extra inputs are not permitted")
    provider = make(max_retries=0)
    request = Request(to="alice", system="You are Alice.", messages=[ChatMessage(role="user", content="Begin.")],
                      cache_prefix=True)
    with pytest.raises(ProviderError) as caught:
        await provider.complete(request, lambda _: None)
    assert "play isolation (a)" in str(caught.value) and len(loopback.requests) == 1
