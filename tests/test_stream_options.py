"""A server that refuses `stream_options` (older Azure API versions, some gateways and local
servers answer 400 or 422 naming it): the stream is asked again without it, once per provider, its
usage then unknown unless the server sends it anyway; any other 400 is the failed call it was."""

from __future__ import annotations

import logging

import pytest

from promptdesk.core.errors import ProviderError
from promptdesk.core.providers.openai_provider import OpenAIProvider
from loopback import Reply, loopback  # noqa: F401 - fixture
from test_provider_odd_replies import complete
from test_stream_faults import sleep  # noqa: F401 - fixture: the fake sleep

REFUSED = "Unrecognized request argument supplied: stream_options"


def refusing(status: int = 400, words: str = REFUSED):
    """A server that refuses any request carrying `stream_options`, and answers others without usage."""
    def answer(recorded):
        if "stream_options" in recorded.body:
            return Reply(status=status, error_message=words, error_type="invalid_request_error")
        return Reply(text="<speech>Fine.</speech>", no_usage=True)
    return answer


@pytest.fixture
async def provider(loopback, sleep):
    made = OpenAIProvider("llama3", base_url=loopback.url("/v1"), compatible=True, sleep=sleep, timeout_s=5.0,
                          max_retries=0)
    yield made
    await made.aclose()


@pytest.mark.parametrize("status", [400, 422])
async def test_a_server_that_refuses_stream_options_is_asked_again_without_them_once(loopback, provider, caplog,
                                                                                   status):
    loopback.default = refusing(status)
    caplog.set_level(logging.WARNING)
    first, shown = await complete(provider, "stream")
    assert first.text == "<speech>Fine.</speech>" and "".join(shown) == first.text
    assert not first.usage.reported  # the server sent none: unknown, never 0
    assert ["stream_options" in r.body for r in loopback.requests] == [True, False]
    bodies = [dict(r.body) for r in loopback.requests]
    bodies[0].pop("stream_options")
    assert bodies[0] == bodies[1]  # the same request, less the option the server refused
    second, _ = await complete(provider, "stream")
    assert second.text == first.text and len(loopback.requests) == 3 and "stream_options" not in loopback.requests[2].body
    said = [r.getMessage() for r in caplog.records if "stream_options" in r.getMessage()]
    assert len(said) == 1 and "usage" in said[0]


async def test_another_400_is_not_taken_for_a_refusal_of_stream_options(loopback, provider):
    loopback.default = refusing(400, "model 'llama3' not found, try pulling it first")
    with pytest.raises(ProviderError) as caught:
        await complete(provider, "stream")
    assert "not found" in caught.value.message and len(loopback.requests) == 1
