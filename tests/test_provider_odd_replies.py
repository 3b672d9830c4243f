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


def _stopped_frames(api: str, text: str, reason: str) -> list[bytes]:
    """A whole stream whose reply ends with the stop reason `reason`."""
    frames = anthropic_frames(text, {"input_tokens": 7, "output_tokens": 2}) if api == "anthropic" else \
        openai_frames(text, {"prompt_tokens": 7, "completion_tokens": 2})
    stop = "end_turn" if api == "anthropic" else "stop"
    return [frame.replace(f'"{stop}"'.encode(), f'"{reason}"'.encode()) for frame in frames]


def stopped(api: str, mode: str, text: str, reason: str) -> Reply:
    """A 200 answer in the API's own shape whose reply ended with `reason`."""
    if mode == "stream":
        return Reply(raw=_stopped_frames(api, text, reason))
    field = b'"stop_reason": "end_turn"' if api == "anthropic" else b'"finish_reason": "stop"'
    body = plain_body(api, text, {"anthropic": {"input_tokens": 7, "output_tokens": 2},
                                  "openai": {"prompt_tokens": 7, "completion_tokens": 2}}[api])
    return Reply(raw=body.replace(field, field.split(b":")[0] + f': "{reason}"'.encode()),
                 content_type="application/json")


@pytest.mark.parametrize("api", ["openai"])
async def test_a_reply_stopped_by_the_content_filter_is_a_failed_call_never_the_answer(loopback, make, mode):
    """Azure's and OpenAI's `finish_reason: content_filter`: the text let through is a part, not a reply."""
    loopback.script(*[stopped("openai", mode, "<thinking>q</thinking><speech>Well, the", "content_filter")] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "content filter" in caught.value.message and "finish_reason: content_filter" in caught.value.message
    assert caught.value.retryable is False and loopback.hits == 1
    billed = caught.value.usage  # the failed call was billed what the server said
    assert (billed.input_tokens, billed.output_tokens) == (7, 2)


@pytest.mark.parametrize("api", ["openai"])
async def test_a_reply_that_ended_in_error_is_retried_never_taken_whole(loopback, make):
    """OpenRouter ends a reply whose upstream failed with `finish_reason: error` (and [DONE])."""
    loopback.script(Reply(raw=_stopped_frames("openai", "<speech>Well, the", "error")),
                    Reply(raw=openai_frames("<speech>Whole.</speech>")))
    completion, shown = await complete(make(), "stream")
    assert completion.text == "<speech>Whole.</speech>" and "".join(shown) == completion.text
    assert loopback.hits == 2


@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_claude_refusal_stop_is_a_refusal_its_words_kept_apart(loopback, make, mode):
    """Anthropic's `stop_reason: refusal` (a safety classifier stopped the reply): the text sent so
    far is the refusal's words, taken back from the console; the reply's text is empty."""
    loopback.script(stopped("anthropic", mode, "<thinking>I will explain how to", "refusal"))
    completion, shown = await complete(make(), mode)
    assert (completion.text, completion.refusal, shown) == ("", "<thinking>I will explain how to", [])
    assert completion.usage.reported and loopback.hits == 1


@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_reply_stopped_by_a_full_context_window_fails_naming_what_to_shorten(loopback, make, mode):
    loopback.script(stopped("anthropic", mode, "<thinking>Long", "model_context_window_exceeded"))
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert "context window was full" in caught.value.message and "limits.window" in caught.value.message
    assert caught.value.retryable is False and loopback.hits == 1
    assert (caught.value.usage.input_tokens, caught.value.usage.output_tokens) == (7, 2)


async def test_thinking_blocks_are_never_the_replys_text(loopback, make, mode):
    """Extended thinking: `thinking` and `redacted_thinking` blocks (and their deltas) are private."""
    blocks = [{"type": "thinking", "thinking": "PRIVATE plan", "signature": "sig"},
              {"type": "redacted_thinking", "data": "EncryptedPRIVATE"}, {"type": "text", "text": "Hi."}]
    if mode == "plain":
        body = json.loads(plain_body("anthropic", "Hi.", {"input_tokens": 3, "output_tokens": 2}))
        reply = Reply(raw=json.dumps({**body, "content": blocks}).encode(), content_type="application/json")
    else:
        frames = anthropic_frames("Hi.", {"input_tokens": 3, "output_tokens": 2})
        thinking = [sse({"type": "content_block_start", "index": 0, "content_block": {**blocks[0], "thinking": ""}},
                        "content_block_start"),
                    sse({"type": "content_block_delta", "index": 0,
                         "delta": {"type": "thinking_delta", "thinking": "PRIVATE plan"}}, "content_block_delta"),
                    sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
                    sse({"type": "content_block_start", "index": 1, "content_block": blocks[1]}, "content_block_start"),
                    sse({"type": "content_block_stop", "index": 1}, "content_block_stop")]
        reply = Reply(raw=[frames[0], *thinking, *frames[1:]])
    loopback.script(reply)
    provider = AnthropicProvider("claude-sonnet-4-6", api_key="k-test", base_url=loopback.url(), max_retries=0)
    try:
        completion, shown = await complete(provider, mode)
    finally:
        await provider.aclose()
    assert completion.text == "Hi." and "PRIVATE" not in "".join(shown)


async def test_a_whole_answer_in_place_of_a_stream_is_taken_as_the_answer(loopback, make, api, all_logs):
    """A server that ignores `stream: true` and answers one JSON object has answered: its text is
    the reply, delivered whole, with its usage."""
    counts = {"anthropic": {"input_tokens": 12, "output_tokens": 3},
              "openai": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}[api]
    loopback.script(answer(api, "plain", "<thinking>q</thinking><speech>Whole.</speech>", counts))
    completion, shown = await complete(make(), "stream")
    assert completion.text == "<thinking>q</thinking><speech>Whole.</speech>" and shown == [completion.text]
    assert any("ignores stream: true" in r.getMessage() and r.levelno >= logging.WARNING for r in all_logs.records)
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (12, 3) and loopback.hits == 1


async def test_an_answer_in_place_of_a_stream_that_is_not_whole_is_described_not_called_an_error(loopback, make,
                                                                                                api):
    """An answer-shaped body without its stop reason is no whole answer: it is described by its
    keys (its `type: message` is not an error's type), and retried."""
    body = json.loads(plain_body(api, "PRIVATE words"))
    body.update({"stop_reason": None} if api == "anthropic" else {"choices": [{**body["choices"][0],
                                                                              "finish_reason": None}]})
    loopback.script(*[Reply(raw=json.dumps(body).encode(), content_type="application/json")] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), "stream")
    assert "without an answer" in caught.value.message and "a JSON object with the keys" in caught.value.message
    assert "PRIVATE" not in caught.value.message and caught.value.retryable and loopback.hits == 2


@pytest.mark.parametrize("api, suffix, advice", [
    ("openai", "", "the base URL is most likely {url}/v1"),
    ("openai", "/v1/chat/completions", "already ends in /chat/completions, which the SDK adds itself: try {url}/v1"),
    ("anthropic", "/v1", "ends in /v1, which the Anthropic SDK adds itself (it posts to {url}/v1/v1/messages): "
                         "try {url}"),
])
async def test_a_404_from_a_base_url_of_the_wrong_form_names_the_url_to_try(loopback, sleep, api, suffix, advice):
    loopback.script(Reply(status=404, raw=b"404 page not found", content_type="text/plain"))
    url = loopback.url()
    if api == "anthropic":
        provider = AnthropicProvider("claude-sonnet-4-6", api_key="k-test", base_url=url + suffix, sleep=sleep)
    else:
        provider = OpenAIProvider("llama3", base_url=url + suffix, compatible=True, sleep=sleep)
    try:
        with pytest.raises(ProviderError) as caught:
            await complete(provider, "stream")
    finally:
        await provider.aclose()
    assert advice.format(url=url) in caught.value.message and caught.value.status == 404


async def test_a_404_from_a_base_url_of_the_right_form_blames_no_url(loopback, make, api):
    loopback.script(Reply(status=404, error_message="model 'llama9' not found"))
    with pytest.raises(ProviderError) as caught:
        await complete(make(), "stream")
    assert "model 'llama9' not found" in caught.value.message and "try http" not in caught.value.message
    assert "most likely" not in caught.value.message


@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_sent_apart_is_never_the_reply_and_debug_log_says_how_much(loopback, make, mode, field,
                                                                                   all_logs):
    """vLLM and llama.cpp send `reasoning_content`, Ollama and OpenRouter `reasoning`: never part of
    the reply (nor shown), but debug.log says it came, and that it may have taken every token."""
    secret = "PRIVATE chain of thought " * 4
    if mode == "stream":
        base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "qwq"}
        frames = [{"role": "assistant"}, {field: secret[:50]}, {field: secret[50:]}]
        reply = Reply(raw=[sse({**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}) for d in frames]
                      + [sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}), sse("[DONE]")])
    else:
        body = json.loads(plain_body("openai", ""))
        body["choices"][0].update(message={"role": "assistant", "content": None, field: secret}, finish_reason="length")
        reply = Reply(raw=json.dumps(body).encode(), content_type="application/json")
    loopback.script(reply)
    completion, shown = await complete(make(), mode)
    assert completion.text == "" and completion.truncated and shown == []
    said = [r.getMessage() for r in all_logs.records if "reasoning apart" in r.getMessage()
            and r.levelno >= logging.WARNING]  # the level a run's debug.log takes
    assert len(said) == 1 and f"{len(secret)} characters" in said[0] and "reasoning off" in said[0]
    assert "PRIVATE" not in all_logs.text


@pytest.mark.parametrize("api", ["openai"])
async def test_content_sent_as_a_list_of_parts_is_its_text_parts_never_its_thinking(loopback, make, mode):
    """Mistral's reasoning models (and some gateways) send `content` as a list of parts: the reply is
    its text parts; a thinking part is private, never the reply nor shown."""
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "PRIVATE plan"}]}
    if mode == "stream":
        frames = openai_frames("")
        text = [json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "magistral",
                            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]})
                for content in ([thinking], [{"type": "text", "text": "<speech>Hi.</speech>"}])]
        reply = Reply(raw=[frames[0], *(sse(t) for t in text), *frames[2:]])
    else:
        body = json.loads(plain_body("openai", ""))
        body["choices"][0]["message"]["content"] = [thinking, {"type": "text", "text": "<speech>Hi.</speech>"}]
        reply = Reply(raw=json.dumps(body).encode(), content_type="application/json")
    loopback.script(reply)
    completion, shown = await complete(make(), mode)
    assert completion.text == "<speech>Hi.</speech>" and "PRIVATE" not in "".join(shown)


@pytest.mark.parametrize("api", ["openai"])
async def test_a_stream_of_more_choices_than_asked_for_is_read_as_its_first_choice_alone(loopback, make):
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "llama3"}
    both = [{"index": i, "delta": {"content": text}, "finish_reason": None} for i, text in ((0, "<speech>A"), (1, "OTHER"))]
    end = [{"index": i, "delta": {}, "finish_reason": "stop"} for i in (0, 1)]
    loopback.script(Reply(raw=[sse({**base, "choices": both}), sse({**base, "choices": [{**both[0], "delta": {
        "content": ".</speech>"}}]}), sse({**base, "choices": end}), sse("[DONE]")]))
    completion, shown = await complete(make(), "stream")
    assert completion.text == "".join(shown) == "<speech>A.</speech>"


@pytest.mark.parametrize("body", [
    {"object": "error", "message": "This model's maximum context length is 2048 tokens. However, you requested 2100 "
     "tokens (1076 in the messages, 1024 in the completion).", "type": "BadRequestError", "param": None, "code": 400},
    {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
               "type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}},
    {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000"}},
], ids=["vllm", "llama.cpp", "anthropic"])
async def test_a_request_too_long_for_the_context_window_names_what_to_change(loopback, make, api, body):
    loopback.script(Reply(status=400, raw=json.dumps(body).encode(), content_type="application/json"))
    with pytest.raises(ProviderError) as caught:
        await complete(make(), "stream")
    assert "longer than the model's context window: lower limits.window" in caught.value.message
    assert "--max-model-len" in caught.value.message and loopback.hits == 1


async def test_another_400_gets_no_context_window_advice(loopback, make, api):
    loopback.script(Reply(status=400, error_message="temperature must be at most 2"))
    with pytest.raises(ProviderError) as caught:
        await complete(make(), "stream")
    assert "temperature must be at most 2" in caught.value.message and "context window" not in caught.value.message


@pytest.mark.parametrize("api", ["openai"])
@pytest.mark.parametrize("body, said", [
    (b'data: {"choices": [{"index": 0, "delta": {"content": "<thinking>PRIVATE plan"}}]}\n\n',
     "an event stream labelled application/json"),
    (b"<thinking>PRIVATE plan</thinking><speech>Hi.</speech>", "characters of text that is not JSON, not quoted"),
], ids=["mislabelled-stream", "bare-text"])
async def test_a_200_body_of_bare_text_is_described_never_quoted(loopback, make, mode, body, said):
    """Text in a 200 in place of the answer may be the model's own words (a stream labelled as JSON, a
    server answering bare text): it is described, never quoted into a failure that stderr, notes.md
    and metadata.json show."""
    loopback.script(*[Reply(raw=body, content_type="application/json")] * 2)
    with pytest.raises(ProviderError) as caught:
        await complete(make(), mode)
    assert said in caught.value.message and "PRIVATE" not in caught.value.message and loopback.hits == 2
