"""The Anthropic provider through the real SDK against the loopback server: no mocks above HTTP."""

from __future__ import annotations

import json
import asyncio
import logging
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import pytest

from promptdesk.core.errors import ProviderError
from promptdesk.core.providers.anthropic_provider import AnthropicProvider
from promptdesk.core.providers.base import ChatMessage, Request
from loopback import CANARY, FakeSleep, Reply, assert_no_leak, loopback, split_text  # noqa: F401 - fixture


@pytest.fixture
def sleep():
    return FakeSleep()


@pytest.fixture
async def make(loopback, sleep):
    """`make(**options)`: an AnthropicProvider pointed at the loopback server with the canary key."""
    made: list[AnthropicProvider] = []

    def _make(**options) -> AnthropicProvider:
        options = {"api_key": CANARY, "base_url": loopback.url(), "sleep": sleep, "timeout_s": 5.0, **options}
        made.append(provider := AnthropicProvider("claude-sonnet-4-6", **options))
        return provider
    yield _make
    for provider in made:
        await provider.aclose()


@pytest.fixture(autouse=True)
def all_logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


def request(**fields) -> Request:
    base = {"to": "alice", "system": "You are Alice, a lighthouse keeper.",
            "messages": [ChatMessage(role="user", content="The storm is coming.")]}
    return Request(**{**base, **fields})


async def test_plain_completion_maps_text_usage_and_request(loopback, make):
    loopback.script(Reply(text="I will light the lamp.", usage={
        "input_tokens": 12, "output_tokens": 7, "cache_creation_input_tokens": 50, "cache_read_input_tokens": 200}))
    completion = await make().complete(request(max_tokens=200, temperature=0.7))

    assert completion.text == "I will light the lamp."
    assert completion.provider == "anthropic" and completion.model == "claude-sonnet-4-6"
    usage = completion.usage
    assert usage.model_dump() == {"input_tokens": 12, "output_tokens": 7, "cache_write_tokens": 50,
                                  "cache_read_tokens": 200, "reported": True}
    assert completion.ttft_s is None and completion.latency_s > 0
    sent = loopback.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.api_key == CANARY
    assert sent.body["model"] == "claude-sonnet-4-6"
    assert sent.body["max_tokens"] == 200
    assert "temperature" not in sent.body  # this API version takes no sampling parameters
    assert sent.body["messages"] == [{"role": "user", "content": "The storm is coming."}]
    assert "stream" not in sent.body


async def test_streaming_delivers_deltas_in_order_with_timing(loopback, make):
    text = "The lamp turns, and the sea answers."
    loopback.script(Reply(text=text, deltas=5, usage={"input_tokens": 30, "output_tokens": 9,
                                                      "cache_read_input_tokens": 400}))
    deltas: list[str] = []
    completion = await make().complete(request(), on_delta=deltas.append)

    assert deltas == split_text(text, 5) and len(deltas) == 5
    assert completion.text == text
    assert completion.usage.input_tokens == 30 and completion.usage.output_tokens == 9
    assert completion.usage.cache_read_tokens == 400
    assert completion.ttft_s is not None and 0 <= completion.ttft_s <= completion.latency_s
    assert loopback.requests[0].body["stream"] is True


@pytest.mark.parametrize("cache_prefix", [True, False])
async def test_system_block_carries_cache_control_only_when_asked(loopback, make, cache_prefix):
    await make().complete(request(cache_prefix=cache_prefix))
    system = loopback.requests[0].body["system"]
    assert system[0]["type"] == "text" and system[0]["text"] == "You are Alice, a lighthouse keeper."
    if cache_prefix:
        assert system[0]["cache_control"] == {"type": "ephemeral"}
    else:
        assert "cache_control" not in system[0]


@pytest.mark.parametrize("streamed", [False, True])
async def test_json_schema_forces_a_tool_whose_input_is_the_answer(loopback, make, streamed):
    schema = {"type": "object", "properties": {"decision": {"type": "string"}}, "required": ["decision"]}
    loopback.default = Reply(text='{"decision": "wait"}')
    pieces: list[str] = []
    completion = await make().complete(request(json_schema=schema), pieces.append if streamed else None)
    body = loopback.requests[0].body
    assert body["tools"] == [{"name": "answer", "description": "Give your whole answer through this tool.",
                              "input_schema": schema}]
    assert body["tool_choice"] == {"type": "tool", "name": "answer"} and "output_config" not in body
    assert json.loads(completion.text) == {"decision": "wait"}
    assert ("".join(pieces) == completion.text) if streamed else not pieces


def _http_date(seconds_from_now: int) -> str:
    return format_datetime(datetime.now(timezone.utc) + timedelta(seconds=seconds_from_now), usegmt=True)


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "2"}, 2.0),
    ({"retry-after": "3600"}, 5.0),
    ({"retry-after-ms": "1500"}, 1.5),
    ({"retry-after": _http_date(7200)}, 5.0),
])
async def test_429_honours_retry_after_up_to_the_cap(loopback, make, sleep, headers, expected):
    loopback.script(Reply(status=429, headers=headers))
    completion = await make(retry_after_cap_s=5.0).complete(request())
    assert completion.text == "Hello from the loopback."
    assert sleep.calls == [pytest.approx(expected)]
    assert loopback.hits == 2


async def test_500_three_times_then_success(loopback, make, sleep, all_logs):
    loopback.script(*[Reply(status=500)] * 3)
    completion = await make(max_retries=3).complete(request())
    assert completion.text == "Hello from the loopback."
    assert loopback.hits == 4
    assert len(sleep.calls) == 3
    for retry, delay in enumerate(sleep.calls, start=1):  # equal jitter around 0.5 * 2**(retry-1)
        full = 0.5 * 2 ** (retry - 1)
        assert full / 2 <= delay <= full
    assert all_logs.text.count("retry ") == 3
    assert_no_leak(logs=all_logs.text)


async def test_500_forever_gives_up_after_exactly_max_retries_plus_one_attempts(loopback, make, sleep, all_logs):
    loopback.default = Reply(status=500)
    with pytest.raises(ProviderError) as caught:
        await make(max_retries=2).complete(request())
    assert loopback.hits == 3  # the SDK retried nothing itself
    assert len(sleep.calls) == 2
    error = caught.value
    assert error.status == 500 and error.retryable and error.context["attempts"] == 3
    assert "gave up after 3 attempts" in str(error)
    assert_no_leak(error, logs=all_logs.text)


async def test_401_is_not_retried_and_names_the_key_variable(loopback, make, sleep, all_logs):
    loopback.script(Reply(status=401, error_message=f"invalid x-api-key {CANARY}"))
    with pytest.raises(ProviderError) as caught:
        await make().complete(request())
    assert loopback.hits == 1 and sleep.calls == []
    error = caught.value
    assert error.status == 401 and not error.retryable
    assert "ANTHROPIC_API_KEY" in str(error)
    assert "[redacted]" in str(error)
    assert_no_leak(error, logs=all_logs.text)


@pytest.mark.parametrize("status", [400, 403, 404, 422])
async def test_client_errors_are_never_retried(loopback, make, sleep, status):
    loopback.script(Reply(status=status))
    with pytest.raises(ProviderError) as caught:
        await make().complete(request())
    assert caught.value.status == status and loopback.hits == 1 and sleep.calls == []


@pytest.mark.parametrize("status", [408, 409, 502, 503, 529])
async def test_transient_statuses_are_retried(loopback, make, sleep, status):
    loopback.script(Reply(status=status))
    assert (await make().complete(request())).text
    assert loopback.hits == 2 and len(sleep.calls) == 1


async def test_missing_key_says_which_variable_to_set(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider("claude-sonnet-4-6")


async def test_key_and_base_url_come_from_the_environment(loopback, monkeypatch, sleep):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", loopback.url())
    provider = AnthropicProvider("claude-haiku-4-5", sleep=sleep)
    assert CANARY not in repr(provider)
    assert (await provider.complete(request())).text
    assert loopback.requests[0].api_key == CANARY
    await provider.aclose()


async def test_a_slow_server_times_out_is_retried_then_fails(loopback, make, sleep, all_logs):
    loopback.default = Reply(delay_s=0.45)
    with pytest.raises(ProviderError) as caught:
        await make(timeout_s=0.15, max_retries=1).complete(request())
    assert loopback.hits == 2 and len(sleep.calls) == 1
    assert "timed out" in str(caught.value) and caught.value.retryable
    assert_no_leak(caught.value, logs=all_logs.text)


async def test_a_timeout_then_success(loopback, make, sleep):
    loopback.script(Reply(delay_s=0.45))
    completion = await make(timeout_s=0.15).complete(request(), on_delta=lambda _: None)
    assert completion.text == "Hello from the loopback." and loopback.hits == 2




async def test_an_error_event_before_any_delta_is_retried(loopback, make, sleep):
    loopback.script(Reply(error_after_deltas=0))
    deltas: list[str] = []
    completion = await make().complete(request(), on_delta=deltas.append)
    assert "".join(deltas) == completion.text == "Hello from the loopback."
    assert loopback.hits == 2 and len(sleep.calls) == 1




async def test_a_stream_stalled_before_any_delta_is_retried(loopback, make, sleep):
    loopback.script(Reply(stall_after_deltas=0, hold_s=1.0))
    completion = await make(timeout_s=0.2).complete(request(), on_delta=lambda _: None)
    assert completion.text == "Hello from the loopback." and loopback.hits == 2




async def test_no_server_at_all_is_a_connection_error(sleep):
    provider = AnthropicProvider("claude-sonnet-4-6", api_key=CANARY, base_url="http://127.0.0.1:9", sleep=sleep,
                                 max_retries=1)
    with pytest.raises(ProviderError, match="connection failed") as caught:
        await provider.complete(request())
    assert caught.value.retryable and len(sleep.calls) == 1
    assert_no_leak(caught.value, provider)
    await provider.aclose()


async def test_cancelling_a_call_mid_stream_returns_promptly(loopback, make):
    """The engine's own turn timeout cancels the call; nothing inside swallows the cancellation."""
    loopback.script(Reply(text="held open for a long while", deltas=3, stall_after_deltas=1, hold_s=2.0))
    deltas: list[str] = []
    first = asyncio.Event()

    def on_delta(text: str) -> None:
        deltas.append(text)
        first.set()

    call = asyncio.ensure_future(make(timeout_s=5.0).complete(request(), on_delta=on_delta))
    await first.wait()                      # mid-stream: the server now holds the rest back
    loop = asyncio.get_running_loop()
    cancelled_at = loop.time()
    call.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:   # not swallowed, not waited out into a completion
        await call
    assert loop.time() - cancelled_at < 1.5       # well before the server's 2 s hold ends
    assert len(deltas) == 1 and loopback.hits == 1
    assert caught.value.usage.reported is False, "what a call cut off by a stop was billed is unknown, not 0"


@pytest.mark.parametrize("stream", [False, True])
async def test_a_spent_budget_resetting_in_2099_is_read_as_a_wait_of_at_most_the_cap(loopback, make, stream):
    loopback.script(Reply(headers={"anthropic-ratelimit-requests-remaining": "0",
                                   "anthropic-ratelimit-requests-reset": "2099-01-01T00:00:00Z",
                                   "anthropic-ratelimit-output-tokens-remaining": "0",
                                   "anthropic-ratelimit-output-tokens-reset": "2099-01-01T00:00:01Z"}))
    provider = make(retry_after_cap_s=12.0)
    await provider.complete(request(), [].append if stream else None)
    wait = provider.rate_wait
    assert wait.seconds == 12.0 and wait.asked_s > 2e9
    assert wait.text().startswith("waiting 12 s: the provider says the output-token budget is spent (it asked for ")
    await provider.complete(request())                       # the next answer says nothing is spent
    assert provider.rate_wait is None


async def test_a_retry_after_in_2099_waits_the_cap_and_says_so_once(loopback, make, sleep, all_logs):
    """An HTTP-date retry-after in 2099: the retry waits `retry_after_cap_s`, told once to `on_wait`
    (the operator) and in the log, with what the server asked for."""
    loopback.script(Reply(status=429, headers={"retry-after": "Thu, 01 Jan 2099 00:00:00 GMT"}))
    provider, told = make(retry_after_cap_s=30.0), []
    provider.on_wait = told.append
    assert (await provider.complete(request())).text == "Hello from the loopback."
    assert sleep.calls == [30.0] and loopback.hits == 2
    assert [w.text().split(" (it asked")[0] for w in told] == [
        "waiting 30 s: the provider asked for a pause before the retry (HTTP 429 with retry-after)"]
    assert told[0].capped and "capped by retry_after_cap_s" in all_logs.text
