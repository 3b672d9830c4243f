"""What real servers send besides a clean answer, through both real SDKs against the loopback
server: a 200 whose body is an error or an HTML page, a stream line that is not JSON, usage whose
counts are all null, an error body that is a plain string or a long HTML page. Each is a failed
call (or unknown usage) that says what the server sent, never an empty success or a raw exception."""

from __future__ import annotations

import json
import logging

import pytest

from promptdesk.core.errors import ProviderError
from promptdesk.core.providers.anthropic_provider import AnthropicProvider
from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.providers.openai_provider import OpenAIProvider
from loopback import Reply, loopback  # noqa: F401 - fixture
from test_stream_faults import api, sleep  # noqa: F401 - fixtures: both APIs, the fake sleep


@pytest.fixture(params=["plain", "stream"])
def mode(request):
    return request.param


@pytest.fixture(autouse=True)
def all_logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.fixture
async def make(loopback, sleep, api):
    made = []

    def _make(**options):
        options = {"sleep": sleep, "timeout_s": 5.0, "max_retries": 1, **options}
        if api == "anthropic":
            provider = AnthropicProvider("claude-sonnet-4-6", api_key="k-test", base_url=loopback.url(), **options)
        else:
            provider = OpenAIProvider("llama3", base_url=loopback.url("/v1"), compatible=True, **options)
        made.append(provider)
        return provider
    yield _make
    for provider in made:
        await provider.aclose()


async def complete(provider, mode: str):
    shown: list[str] = []
    request = Request(to="alice", system="You are Alice.", messages=[ChatMessage(role="user", content="Begin.")])
    completion = await provider.complete(request, on_delta=shown.append if mode == "stream" else None,
                                         on_reset=shown.clear)
    return completion, shown


def sse(data, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


def openai_frames(text: str, usage=None, between: bytes = b"") -> list[bytes]:
    def chunk(delta, finish=None, **extra):
        return sse({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "llama3",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})
    frames = [chunk({"role": "assistant", "content": ""}), chunk({"content": text})]
    frames += [between] if between else []
    frames += [chunk({}, "stop")]
    if usage is not None:
        frames.append(sse({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "llama3",
                           "choices": [], "usage": usage}))
    return frames + [sse("[DONE]")]


def anthropic_frames(text: str, usage=None, between: bytes = b"") -> list[bytes]:
    message = {"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "content": [],
               "stop_reason": None, "stop_sequence": None, **({} if usage is None else {"usage": usage})}
    frames = [sse({"type": "message_start", "message": message}, "message_start"),
              sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                  "content_block_start"),
              sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                  "content_block_delta")]
    frames += [between] if between else []
    return frames + [sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
                     sse({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                          **({} if usage is None else {"usage": usage})}, "message_delta"),
                     sse({"type": "message_stop"}, "message_stop")]


def plain_body(api: str, text: str, usage=None) -> bytes:
    if api == "anthropic":
        body = {"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None}
    else:
        body = {"id": "c", "object": "chat.completion", "created": 0, "model": "llama3",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    return json.dumps({**body, **({} if usage is None else {"usage": usage})}).encode()


def answer(api: str, mode: str, text: str, usage=None, between: bytes = b"") -> Reply:
    """A 200 answer in the API's own shape, written by hand (so its usage can be anything)."""
    if mode == "plain":
        return Reply(raw=plain_body(api, text, usage), content_type="application/json")
    frames = anthropic_frames if api == "anthropic" else openai_frames
    return Reply(raw=frames(text, usage, between))


NULL_USAGE = {"anthropic": {"input_tokens": None, "output_tokens": None, "cache_creation_input_tokens": None,
                            "cache_read_input_tokens": None},
              "openai": {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}}


@pytest.mark.parametrize("usage", ["null counts", "absent"])
async def test_usage_whose_counts_are_all_null_or_absent_is_unknown_not_zero(loopback, make, api, mode, usage):
    sent = NULL_USAGE[api] if usage == "null counts" else None
    loopback.script(answer(api, mode, "<thinking>q</thinking><speech>Hi.</speech>", sent))
    completion, _ = await complete(make(), mode)
    assert completion.text == "<thinking>q</thinking><speech>Hi.</speech>"
    assert completion.usage.reported is False


async def test_usage_with_counts_is_still_reported(loopback, make, api, mode):
    counts = {"anthropic": {"input_tokens": 12, "output_tokens": 3},
              "openai": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}[api]
    loopback.script(answer(api, mode, "Hi.", counts))
    completion, _ = await complete(make(), mode)
    assert completion.usage.reported is True
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (12, 3)


ERROR_BODIES = {"anthropic": {"type": "error", "error": {"type": "invalid_request_error",
                                                         "message": "model claude-x is not loaded"}},
                "openai": {"error": {"message": "model claude-x is not loaded", "type": "invalid_request_error",
                                     "code": None}}}


async def test_a_200_whose_body_is_an_error_is_a_failed_call_naming_the_error(loopback, make, api, mode):
    loopback.script(Reply(raw=json.dumps(ERROR_BODIES[api]).encode(), content_type="application/json"))
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "model claude-x is not loaded" in caught.value.message
    assert caught.value.status == 400 and caught.value.retryable is False
    assert loopback.hits == 1


@pytest.mark.parametrize("body", [{"error": "the model crashed"}, {"detail": "the model crashed"}])
async def test_a_200_whose_body_holds_no_answer_is_retried_then_fails(loopback, make, api, mode, body):
    loopback.script(*[Reply(raw=json.dumps(body).encode(), content_type="application/json")] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "the model crashed" in caught.value.message
    assert caught.value.retryable and loopback.hits == 2


async def test_a_200_html_page_is_a_failed_call_not_an_exception(loopback, make, api, mode):
    page = b"<html><head><title>Sign in to the proxy</title></head><body>" + b"x" * 5000 + b"</body></html>"
    loopback.script(*[Reply(raw=page, content_type="text/html")] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "Sign in to the proxy" in caught.value.message and "text/html" in caught.value.message
    assert len(caught.value.message) < 400


async def test_a_plain_body_that_is_not_json_is_a_failed_call_then_a_retry(loopback, make, api):
    loopback.script(Reply(raw=b"{not json", content_type="application/json"),
                    answer(api, "plain", "Hi.", {"anthropic": {"input_tokens": 1, "output_tokens": 1},
                                                 "openai": {"prompt_tokens": 1, "completion_tokens": 1}}[api]))
    completion, _ = await complete(make(), "plain")
    assert completion.text == "Hi." and loopback.hits == 2


async def test_a_stream_line_that_is_not_json_fails_the_attempt_and_is_retried(loopback, make, api):
    frames = anthropic_frames if api == "anthropic" else openai_frames
    event = "content_block_delta" if api == "anthropic" else None
    loopback.script(Reply(raw=frames("Hi.", between=sse("keep-alive", event))), Reply(raw=frames("Hello.")))
    completion, shown = await complete(make(), "stream")
    assert completion.text == "Hello." and shown == ["Hello."] and loopback.hits == 2


async def test_a_stream_line_that_is_never_json_ends_as_a_provider_error(loopback, make, api):
    frames = anthropic_frames if api == "anthropic" else openai_frames
    event = "content_block_delta" if api == "anthropic" else None
    loopback.script(*[Reply(raw=frames("Hi.", between=sse("keep-alive", event)))] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), "stream")
    assert "not JSON" in caught.value.message and caught.value.retryable


async def test_an_error_body_that_is_a_plain_string_is_named(loopback, make, api, mode):
    loopback.script(Reply(raw=json.dumps({"error": "model 'llama9' not found"}).encode(), status=404,
                          content_type="application/json"))
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "model 'llama9' not found" in caught.value.message and caught.value.status == 404


async def test_an_html_error_page_is_named_by_its_title_not_pasted_whole(loopback, make, api, mode):
    page = b"<html><head><title>502 Bad Gateway</title></head><body>" + b"y" * 5000 + b"</body></html>"
    loopback.script(*[Reply(raw=page, status=502, content_type="text/html")] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert caught.value.status == 502 and "502 Bad Gateway" in caught.value.message
    assert len(caught.value.message) < 400


@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("error, status, retried", [
    ("the model crashed", 500, True),  # an error that is a plain string
    ({"object": "error", "message": "the model crashed", "type": "BadRequestError", "code": 400}, 400, False),  # vLLM
])
async def test_an_error_inside_the_stream_is_named_and_its_code_read(loopback, make, error, status, retried):
    frames = openai_frames("Hi.")
    loopback.script(*[Reply(raw=[frames[0], frames[1], sse({"error": error})])] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), "stream")
    assert "the model crashed" in caught.value.message and caught.value.status == status
    assert loopback.hits == (2 if retried else 1)


async def test_a_body_of_another_shape_is_described_never_quoted(loopback, make, api, mode):
    """JSON that names no error may hold a model's text (a completions-shaped choice): its keys are
    named, its values never reach the failure's message."""
    body = {"choices": [{"index": 0, "text": "<thinking>PRIVATE plan</thinking>", "finish_reason": "stop"}]}
    loopback.script(*[Reply(raw=json.dumps(body).encode(), content_type="application/json")] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "PRIVATE" not in caught.value.message and "choices" in caught.value.message


@pytest.mark.parametrize("api", ["openai"])
async def test_bytes_that_are_not_utf8_fail_the_attempt_not_the_turn(loopback, make, mode):
    if mode == "stream":
        bad = (b'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"llama3","choices":'
               b'[{"index":0,"delta":{"content":"caf\xe9"},"finish_reason":null}]}\n\n')
        reply = Reply(raw=[bad, sse("[DONE]")])
    else:
        reply = Reply(raw=plain_body("openai", "caf\udce9").replace(b"\\udce9", b"\xe9"), content_type="application/json")
    loopback.script(reply, reply)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "not UTF-8" in caught.value.message and caught.value.retryable and loopback.hits == 2


def _refusal_frames(words: str) -> list[bytes]:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
    deltas = [{"role": "assistant", "content": None, "refusal": ""}, {"refusal": words[:9]}, {"refusal": words[9:]}]
    frames = [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    frames.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [f"data: {json.dumps(f)}\n\n".encode() for f in frames] + [b"data: [DONE]\n\n"]


def _refusal_body(words: str) -> bytes:
    return json.dumps({"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": None, "refusal": words}}],
                       "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}}).encode()


async def test_a_refusal_is_carried_apart_from_the_text(loopback, mode):
    """OpenAI's `refusal` (structured outputs): what the model said instead of answering reaches the
    engine as `Completion.refusal`, never as the reply's text."""
    words = "I can't help with that request."
    loopback.script(Reply(raw=_refusal_frames(words)) if mode == "stream" else
                    Reply(raw=_refusal_body(words), content_type="application/json"))
    provider = OpenAIProvider("gpt-4o-mini", api_key="k-test", base_url=loopback.url("/v1"), max_retries=0)
    try:
        request = Request(to="alice", system="You are Alice.", messages=[ChatMessage(role="user", content="Begin.")])
        shown: list[str] = []
        completion = await provider.complete(request, shown.append if mode == "stream" else None)
    finally:
        await provider.aclose()
    assert (completion.text, completion.refusal, "".join(shown)) == ("", words, "")
