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
async def test_a_stream_without_done_still_fails_whatever_its_finish_reason(loopback, make):
    loopback.script(Reply(raw=[chunk({"content": SPEECH}), chunk({}, None)]),
                    Reply(raw=[chunk({"content": SPEECH}), chunk({}, "stop")]))
    for _ in range(2):
        with pytest.raises(ProviderError, match=r"finish marker \(\[DONE\]\)"):
            await complete(make(max_retries=0), "stream")
