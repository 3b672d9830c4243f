"""The OpenAI and OpenAI-compatible providers through the real SDK against the loopback server."""

from __future__ import annotations

import logging

import pytest

from promptdesk.core.errors import InvalidConfig, ProviderError
from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.providers.openai_provider import NO_KEY, OpenAIProvider
from loopback import CANARY, FakeSleep, Reply, assert_no_leak, loopback, split_text  # noqa: F401 - fixture


@pytest.fixture
def sleep():
    return FakeSleep()


@pytest.fixture
async def make(loopback, sleep):
    """`make(**options)`: an OpenAIProvider pointed at the loopback server with the canary key."""
    made: list[OpenAIProvider] = []

    def _make(model: str = "gpt-4.1-mini", **options) -> OpenAIProvider:
        options = {"api_key": CANARY, "base_url": loopback.url("/v1"), "sleep": sleep, "timeout_s": 5.0, **options}
        made.append(provider := OpenAIProvider(model, **options))
        return provider
    yield _make
    for provider in made:
        await provider.aclose()


@pytest.fixture(autouse=True)
def all_logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


def request(**fields) -> Request:
    base = {"to": "bob", "system": "You are Bob, a ferryman.",
            "messages": [ChatMessage(role="user", content="Who is crossing tonight?"),
                         ChatMessage(role="assistant", content="Nobody yet."),
                         ChatMessage(role="user", content="Look again.")]}
    return Request(**{**base, **fields})


async def test_plain_completion_maps_text_usage_and_request(loopback, make):
    loopback.script(Reply(text="A woman with a lantern.", usage={
        "prompt_tokens": 100, "completion_tokens": 6, "prompt_tokens_details": {"cached_tokens": 60}}))
    completion = await make().complete(request(max_tokens=300, temperature=0.4, cache_key="bob"))

    assert completion.text == "A woman with a lantern."
    assert completion.provider == "openai" and completion.model == "gpt-4.1-mini"
    usage = completion.usage
    assert usage.model_dump() == {"input_tokens": 40, "output_tokens": 6, "cache_write_tokens": 0,
                                  "cache_read_tokens": 60, "reported": True}
    assert completion.ttft_s is None
    sent = loopback.requests[0]
    assert sent.path == "/v1/chat/completions" and sent.api_key == CANARY
    assert sent.body["messages"][0] == {"role": "system", "content": "You are Bob, a ferryman."}
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user", "assistant", "user"]
    assert sent.body["max_completion_tokens"] == 300 and "max_tokens" not in sent.body
    assert sent.body["temperature"] == 0.4
    assert sent.body["prompt_cache_key"] == "bob"
    assert "response_format" not in sent.body


async def test_cache_writes_reported_by_newer_models_are_split_out(loopback, make):
    loopback.script(Reply(usage={"prompt_tokens": 1000, "completion_tokens": 10,
                                 "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 800}}))
    usage = (await make("gpt-5.6-terra").complete(request())).usage
    assert (usage.input_tokens, usage.cache_write_tokens, usage.cache_read_tokens) == (200, 800, 0)


async def test_no_prompt_cache_key_unless_asked(loopback, make):
    await make().complete(request())
    assert "prompt_cache_key" not in loopback.requests[0].body


async def test_streaming_delivers_deltas_in_order_with_final_usage(loopback, make):
    text = "The river is high and the rope is wet."
    loopback.script(Reply(text=text, deltas=6, usage={"prompt_tokens": 50, "completion_tokens": 11,
                                                      "prompt_tokens_details": {"cached_tokens": 20}}))
    deltas: list[str] = []
    completion = await make().complete(request(cache_key="bob"), on_delta=deltas.append)

    assert deltas == split_text(text, 6)
    assert completion.text == text
    usage = completion.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (30, 11, 20)
    assert completion.ttft_s is not None and 0 <= completion.ttft_s <= completion.latency_s
    body = loopback.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["prompt_cache_key"] == "bob"


async def test_json_schema_becomes_a_strict_response_format(loopback, make):
    schema = {"type": "object", "properties": {"decision": {"type": "string"}}, "required": ["decision"],
              "additionalProperties": False}
    await make().complete(request(json_schema=schema))
    assert loopback.requests[0].body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "envelope", "schema": schema, "strict": True}}


async def test_compatible_server_needs_no_key_and_gets_no_cache_key(loopback, sleep, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = OpenAIProvider("llama3.1:8b", base_url=loopback.url("/v1"), compatible=True, sleep=sleep)
    assert provider.name == "openai-compatible"
    deltas: list[str] = []
    completion = await provider.complete(request(cache_key="bob", max_tokens=64), on_delta=deltas.append)
    assert completion.provider == "openai-compatible" and "".join(deltas) == completion.text
    sent = loopback.requests[0]
    assert sent.api_key == NO_KEY
    assert "prompt_cache_key" not in sent.body
    assert sent.body["max_tokens"] == 64 and "max_completion_tokens" not in sent.body
    await provider.aclose()


async def test_a_compatible_server_that_wants_a_key_gets_its_own_never_openais(loopback, sleep, monkeypatch):
    """A server started with a key (vLLM's --api-key, OpenRouter) gets OPENAI_COMPATIBLE_API_KEY;
    OpenAI's own key is never sent to it, and a rejected key names the variable to check."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-own-key-1234")
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-server-key-5678")
    loopback.script(Reply(), Reply(status=401, error_message="invalid api key"))
    provider = OpenAIProvider("llama3", base_url=loopback.url("/v1"), compatible=True, sleep=sleep)
    try:
        await provider.complete(request())
        with pytest.raises(ProviderError) as caught:
            await provider.complete(request())
    finally:
        await provider.aclose()
    assert [sent.api_key for sent in loopback.requests] == ["sk-server-key-5678"] * 2
    assert "check OPENAI_COMPATIBLE_API_KEY" in caught.value.message and "sk-server" not in caught.value.message


async def test_compatible_base_url_without_v1(loopback, sleep):
    provider = OpenAIProvider("mistral", base_url=loopback.url(), compatible=True, sleep=sleep)
    assert (await provider.complete(request())).text
    assert loopback.requests[0].path == "/chat/completions"
    await provider.aclose()


def test_compatible_without_base_url_is_a_config_error():
    with pytest.raises(InvalidConfig, match="base URL"):
        OpenAIProvider("llama3", compatible=True)


def test_openai_without_a_key_says_which_variable_to_set(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        OpenAIProvider("gpt-4o")


def test_a_model_is_required():
    with pytest.raises(InvalidConfig, match="model"):
        OpenAIProvider(None, api_key=CANARY)


async def test_key_and_base_url_come_from_the_environment(loopback, monkeypatch, sleep):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_BASE_URL", loopback.url("/v1"))
    provider = OpenAIProvider("gpt-4o", sleep=sleep)
    assert CANARY not in repr(provider) and CANARY not in str(vars(provider).get("base_url"))
    assert (await provider.complete(request())).text
    assert loopback.requests[0].api_key == CANARY
    await provider.aclose()


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "3"}, 3.0),
    ({"retry-after": "3600"}, 5.0),
    ({"retry-after-ms": "120"}, 0.12),
])
async def test_429_honours_retry_after_up_to_the_cap(loopback, make, sleep, headers, expected):
    loopback.script(Reply(status=429, headers=headers))
    assert (await make(retry_after_cap_s=5.0).complete(request())).text
    assert sleep.calls == [pytest.approx(expected)] and loopback.hits == 2


async def test_500_three_times_then_success(loopback, make, sleep):
    loopback.script(*[Reply(status=500)] * 3)
    deltas: list[str] = []
    completion = await make(max_retries=3).complete(request(), on_delta=deltas.append)
    assert "".join(deltas) == completion.text
    assert loopback.hits == 4 and len(sleep.calls) == 3


async def test_500_forever_gives_up_after_exactly_max_retries_plus_one_attempts(loopback, make, sleep, all_logs):
    loopback.default = Reply(status=500)
    with pytest.raises(ProviderError) as caught:
        await make(max_retries=3).complete(request())
    assert loopback.hits == 4 and len(sleep.calls) == 3
    assert caught.value.status == 500 and caught.value.context["attempts"] == 4
    assert_no_leak(caught.value, logs=all_logs.text)


async def test_401_is_not_retried_and_names_the_key_variable(loopback, make, sleep, all_logs):
    loopback.script(Reply(status=401, error_type="invalid_api_key",
                          error_message=f"Incorrect API key provided: {CANARY}"))
    with pytest.raises(ProviderError) as caught:
        await make().complete(request())
    assert loopback.hits == 1 and sleep.calls == []
    assert caught.value.status == 401 and "OPENAI_API_KEY" in str(caught.value)
    assert_no_leak(caught.value, logs=all_logs.text)


async def test_a_slow_server_times_out_is_retried_then_fails(loopback, make, sleep, all_logs):
    loopback.default = Reply(delay_s=0.45)
    with pytest.raises(ProviderError, match="timed out") as caught:
        await make(timeout_s=0.15, max_retries=1).complete(request())
    assert loopback.hits == 2 and len(sleep.calls) == 1
    assert_no_leak(caught.value, logs=all_logs.text)




async def test_an_error_before_any_delta_is_retried(loopback, make, sleep):
    loopback.script(Reply(error_after_deltas=0))
    completion = await make().complete(request(), on_delta=lambda _: None)
    assert completion.text == "Hello from the loopback." and loopback.hits == 2



@pytest.mark.parametrize("stream", [False, True])
async def test_a_spent_budget_with_a_reset_far_off_is_read_as_a_wait_of_at_most_the_cap(loopback, make, stream):
    loopback.script(Reply(headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s",
                                   "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "100000h"}))
    provider = make(retry_after_cap_s=30.0)
    await provider.complete(request(), [].append if stream else None)
    wait = provider.rate_wait
    assert (wait.seconds, wait.asked_s) == (30.0, 360_000_000.0)
    assert wait.text() == ("waiting 30 s: the provider says the token budget is spent "
                           "(it asked for 4,167 days; capped by retry_after_cap_s)")


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_body_on_the_wire_is_every_argument_as_given(loopback, make, streamed):
    """The arguments go past the SDK's per-message transform (as `extra_body`, or streamed as a body
    built once, `wire_body`): the server still receives each of them, whole, with `stream` and its
    usage option when streamed."""
    schema = {"type": "object", "properties": {"words": {"type": "string"}}, "required": ["words"],
              "additionalProperties": False}
    provider = make()
    sent = request(max_tokens=300, temperature=0.4, cache_key="bob", json_schema=schema)
    loopback.script(Reply(text='{"words": "Aye."}'))
    await provider.complete(sent, (lambda piece: None) if streamed else None)
    expected = provider.params(sent)
    if streamed:
        expected |= {"stream": True, "stream_options": {"include_usage": True}}
    assert loopback.requests[0].body == expected
    assert [m["content"] for m in loopback.requests[0].body["messages"]][1:] == [m.content for m in sent.messages]


def test_a_body_built_from_the_last_requests_messages_is_the_body_encoded_whole():
    """`wire_body` reuses each message's JSON from the recipient's last request: byte for byte the
    body that encoding it whole gives, and what it keeps is the last request's messages only."""
    import json

    from promptdesk.core.providers.openai_provider import wire_body

    def whole(params: dict) -> bytes:
        body = {"model": params["model"], "messages": params["messages"], "stream": True}
        body |= {k: v for k, v in params.items() if k not in body}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()

    odd = 'She said "no"\\n\tthen — ünïcödé 🎭 \x01 and a \\ backslash'
    thread = [{"role": "system", "content": "You are Bob."}, {"role": "user", "content": odd},
              {"role": "assistant", "content": "<speech>Aye.</speech>"}, {"role": "user", "content": odd},
              {"role": "assistant", "content": odd}]
    known: dict = {}
    params = {"model": "gpt-4.1-mini", "messages": thread[:2], "max_completion_tokens": 300, "temperature": 0.4,
              "prompt_cache_key": "bob", "stream_options": {"include_usage": True}}
    assert wire_body(params, True, known) == whole(params)
    grown = {**params, "messages": thread + [{"role": "user", "content": "Look again."}]}
    assert wire_body(grown, True, known) == whole(grown)
    assert set(known) == {(m["role"], m["content"]) for m in grown["messages"]}
    slid = {**params, "messages": [thread[0], {"role": "user", "content": "Look again."}]}
    assert wire_body(slid, True, known) == whole(slid) and len(known) == 2, "a window that slid keeps no old line"
    other = {**params, "messages": [{"role": "user", "content": ["not", "a", "string"]}]}
    assert wire_body(other, True, known) == whole(other)


def test_a_request_sent_ahead_is_its_prefix_and_then_only_its_rest_encoded():
    """A request opened ahead writes `wire_prefix` of how it begins; when it is asked, `wire_rest`
    encodes only what follows: together byte for byte `wire_body`, and nothing when the request does
    not go on from that beginning (another model, a message changed, none added)."""
    from promptdesk.core.providers.wire import wire_body, wire_prefix, wire_rest

    odd = 'She said "no"\\n\tthen — ünïcödé 🎭 \x01 and a \\ backslash'
    begun = {"model": "m", "messages": [{"role": "system", "content": "You are Bob."}, {"role": "user", "content": odd},
                                        {"role": "assistant", "content": "<speech>Aye.</speech>"}]}
    known: dict = {("user", "stale"): "x"}
    prefix = wire_prefix(begun, known)
    assert set(known) == {(m["role"], m["content"]) for m in begun["messages"]}, "the prefix's messages, only"
    asked = {**begun, "messages": [*begun["messages"], {"role": "user", "content": odd + " again"}],
             "max_completion_tokens": 300, "stream_options": {"include_usage": True}}
    rest = wire_rest(asked, True, known, begun)
    assert rest is not None and prefix + rest == wire_body(asked, True)
    assert ("user", odd + " again") in known
    changed = {**asked, "messages": [begun["messages"][0], {"role": "user", "content": "dropped"}, *asked["messages"][2:]]}
    for other in ({**asked, "model": "n"}, changed, {**asked, "messages": begun["messages"]}):
        assert wire_rest(other, True, {}, begun) is None


async def test_a_recipients_growing_thread_reaches_the_server_whole_each_time(loopback, make):
    provider = make()
    first = request(cache_key="bob")
    grown = request(cache_key="bob", messages=[*first.messages, ChatMessage(role="assistant", content="Still nobody."),
                                               ChatMessage(role="user", content='A "shadow" — on the jetty?')])
    for sent in (first, grown):
        loopback.script(Reply(text="Nobody."))
        await provider.complete(sent, lambda piece: None)
    for recorded, sent in zip(loopback.requests, (first, grown)):
        assert recorded.body == provider.params(sent) | {"stream": True, "stream_options": {"include_usage": True}}
