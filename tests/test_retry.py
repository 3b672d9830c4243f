"""The one retry layer: what is retried, how long it waits, how it gives up, and what it never says."""

from __future__ import annotations

import random
from email.utils import format_datetime
from datetime import datetime, timezone

import pytest

from promptdesk.core.errors import ProviderError
from promptdesk.core.providers.retry import (backoff_delay, is_retryable_status, parse_retry_after, redact, status_error,
                                  transport_error, with_retries)
from loopback import CANARY, FakeSleep, assert_no_leak


class Script:
    """An async call that raises the scripted failures in turn, then returns "ok"."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def http(status: int, headers: dict[str, str] | None = None) -> ProviderError:
    return status_error("test", status, "scripted", headers=headers)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
async def test_transient_statuses_are_retried(status):
    sleep, call = FakeSleep(), Script(http(status))
    assert await with_retries(call, max_retries=3, retry_after_cap_s=30, sleep=sleep) == "ok"
    assert call.calls == 2 and len(sleep.calls) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_never_retried(status):
    sleep, call = FakeSleep(), Script(http(status))
    with pytest.raises(ProviderError) as caught:
        await with_retries(call, max_retries=3, retry_after_cap_s=30, sleep=sleep)
    assert call.calls == 1 and sleep.calls == []
    assert caught.value.status == status and not caught.value.retryable
    assert caught.value.context["attempts"] == 1


def test_status_classification():
    assert all(is_retryable_status(s) for s in (408, 409, 429, 500, 501, 599, 529))
    assert not any(is_retryable_status(s) for s in (None, 200, 301, 400, 401, 403, 404, 413, 422))


@pytest.mark.parametrize("failure", [TimeoutError("slow"), ConnectionResetError("reset"),
                                     transport_error("test", TimeoutError())])
async def test_timeouts_and_connection_errors_are_retried(failure):
    sleep, call = FakeSleep(), Script(failure, failure)
    assert await with_retries(call, max_retries=2, retry_after_cap_s=30, sleep=sleep) == "ok"
    assert call.calls == 3


async def test_other_exceptions_propagate_untouched():
    call = Script(KeyError("a bug"))
    with pytest.raises(KeyError):
        await with_retries(call, max_retries=3, retry_after_cap_s=30, sleep=FakeSleep())
    assert call.calls == 1


async def test_giving_up_after_max_retries_plus_one_attempts():
    sleep, call = FakeSleep(), Script(*[http(503)] * 10)
    with pytest.raises(ProviderError) as caught:
        await with_retries(call, max_retries=3, retry_after_cap_s=30, sleep=sleep)
    assert call.calls == 4 and len(sleep.calls) == 3
    error = caught.value
    assert error.status == 503 and error.retryable and error.context["attempts"] == 4
    assert "gave up after 4 attempts" in error.message


async def test_zero_retries_means_one_attempt():
    call = Script(http(500))
    with pytest.raises(ProviderError) as caught:
        await with_retries(call, max_retries=0, retry_after_cap_s=30, sleep=FakeSleep())
    assert call.calls == 1 and "(gave up after 1 attempt)" in caught.value.message


async def test_backoff_grows_exponentially_with_jitter_and_is_capped():
    sleep = FakeSleep()
    call = Script(*[http(500)] * 6)
    await with_retries(call, max_retries=6, retry_after_cap_s=4.0, base_delay_s=0.5, sleep=sleep,
                       rng=random.Random(7))
    fulls = [min(4.0, 0.5 * 2 ** n) for n in range(6)]  # 0.5 1 2 4 4 4
    for delay, full in zip(sleep.calls, fulls, strict=True):
        assert full / 2 <= delay <= full
    assert max(sleep.calls) <= 4.0


async def test_jitter_is_deterministic_for_a_seeded_rng():
    delays = []
    for _ in range(2):
        sleep = FakeSleep()
        await with_retries(Script(*[http(500)] * 3), max_retries=3, retry_after_cap_s=30, sleep=sleep,
                           rng=random.Random(42))
        delays.append(sleep.calls)
    assert delays[0] == delays[1]
    assert backoff_delay(1, 0.5, 30, random.Random(1)) == backoff_delay(1, 0.5, 30, random.Random(1))


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "2"}, 2.0),
    ({"Retry-After": "2.5"}, 2.5),
    ({"retry-after": "3600"}, 10.0),
    ({"retry-after-ms": "250"}, 0.25),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"retry-after": "0"}, 0.0),
])
async def test_retry_after_is_honoured_up_to_the_cap(headers, expected):
    sleep = FakeSleep()
    await with_retries(Script(http(429, headers)), max_retries=1, retry_after_cap_s=10.0, sleep=sleep)
    assert sleep.calls == [pytest.approx(expected)]


def test_retry_after_as_an_http_date():
    now = datetime(2026, 11, 1, 12, 0, 0, tzinfo=timezone.utc)
    later = format_datetime(datetime(2026, 11, 1, 12, 0, 45, tzinfo=timezone.utc), usegmt=True)
    earlier = format_datetime(datetime(2026, 11, 1, 11, 0, 0, tzinfo=timezone.utc), usegmt=True)
    assert parse_retry_after({"retry-after": later}, now=now.timestamp()) == pytest.approx(45)
    assert parse_retry_after({"retry-after": earlier}, now=now.timestamp()) == 0.0
    assert parse_retry_after({"retry-after": "soon-ish"}) is None
    assert parse_retry_after({"retry-after-ms": "x"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


async def test_on_retry_reports_attempt_delay_and_reason():
    seen = []
    await with_retries(Script(http(429, {"retry-after": "1"}), http(500)), max_retries=3, retry_after_cap_s=30,
                       sleep=FakeSleep(), on_retry=lambda *args: seen.append(args), rng=random.Random(0))
    assert [attempt for attempt, _, _ in seen] == [1, 2]
    assert seen[0][1] == 1.0 and "HTTP 429" in seen[0][2]
    assert "HTTP 500" in seen[1][2]


def test_messages_never_carry_a_key():
    error = status_error("anthropic", 401, f"invalid x-api-key: {CANARY}", secrets=(CANARY,),
                         key_env="ANTHROPIC_API_KEY")
    assert "ANTHROPIC_API_KEY" in error.message
    assert_no_leak(error)
    assert CANARY not in redact(f"Authorization: Bearer {CANARY}")
    assert CANARY not in redact(f"key={CANARY}")
    assert redact("secret-value-123 here", "secret-value-123") == "[redacted] here"
    assert_no_leak(transport_error("openai", ConnectionError(f"reset while sending {CANARY}")))


@pytest.mark.parametrize(("retry_after", "waits", "says"), [
    ("86400", 30.0, "waiting 30 s: the provider asked for a pause before the retry (HTTP 429 with retry-after) "
                    "(it asked for 24 h; capped by retry_after_cap_s)"),
    ("1e400", 30.0, "waiting 30 s: the provider asked for a pause before the retry (HTTP 429 with retry-after) "
                    "(it asked for forever; capped by retry_after_cap_s)"),
    ("7", 7.0, "waiting 7 s: the provider asked for a pause before the retry (HTTP 429 with retry-after)"),
])
async def test_a_wait_the_server_asks_for_is_capped_and_told_before_it_is_taken(retry_after, waits, says):
    sleep, told = FakeSleep(), []

    def on_wait(wait):
        assert sleep.calls == []                             # told before the wait, not after it
        told.append(wait.text())
    await with_retries(Script(http(429, {"retry-after": retry_after})), max_retries=1, retry_after_cap_s=30,
                       sleep=sleep, on_wait=on_wait)
    assert sleep.calls == [waits] and told == [says]


async def test_a_backoff_wait_is_not_the_servers_and_is_not_told():
    told = []
    await with_retries(Script(http(500), http(503)), max_retries=2, retry_after_cap_s=30, sleep=FakeSleep(),
                       on_wait=told.append)
    assert told == []


def test_waits_read_as_a_person_would_say_them():
    from promptdesk.core.providers.waits import capped_wait, span

    assert [span(s) for s in (0.25, 7, 30, 360, 5 * 3600, 3 * 86400)] == [
        "0.2 s", "7 s", "30 s", "6 min", "5 h", "3 days"]
    assert capped_wait(float("nan"), 30, "x").seconds == 0.0
    assert capped_wait(-5, 30, "x").seconds == 0.0 and capped_wait(50, 0, "x").seconds == 0.0
