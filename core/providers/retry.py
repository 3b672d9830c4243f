"""The one retry layer of every real provider, and the helpers that describe a failure safely.

SDK clients are built with `max_retries=0`; `with_retries` is the only place a call is repeated.
A provider's attempt raises `ProviderError` (see `status_error`, `transport_error`) whose
`retryable` flag and `retry_after_s` context decide what happens next. Messages pass through
`redact` so no API key ever reaches an exception, a log line or the run folder.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from promptdesk.core.errors import ProviderError
from promptdesk.core.providers.waits import OnWait, capped_wait

T = TypeVar("T")
OnRetry = Callable[[int, float, str], None]
"""`on_retry(attempt, delay_s, reason)`: attempt is the number of the retry about to happen (1, 2...)."""
RETRY_NOTICE: ContextVar[Callable[[int, int, float, str], None] | None] = ContextVar("retry_notice", default=None)
"""Set by whoever makes a call (an actor's turn) to hear of its retries while they wait:
`notice(attempt, max_retries, delay_s, reason)`, so that a retry after a 429 shows live, not only in `debug.log`."""

NEVER_RETRIED = frozenset({400, 401, 403, 404, 422})
RETRIED = frozenset({408, 409, 429})

_CONTEXT_FULL = re.compile(r"context (length|window|size)|maximum context|prompt is too long|too many tokens|"
                           r"exceeds? the (available )?context", re.IGNORECASE)
"""How a server says that a request does not fit the model's context (vLLM, llama.cpp, llama-cpp-python,
OpenAI, Anthropic)."""
_SECRETISH = re.compile(r"(sk-[A-Za-z0-9_\-]{4,}|(?i:bearer)\s+\S+|(?i:x-api-key)[\"':=\s]+\S+)")


def is_retryable_status(status: int | None) -> bool:
    """408, 409, 429 and every 5xx (529 included) are worth another try; nothing else is."""
    if status is None or status in NEVER_RETRIED:
        return False
    return status in RETRIED or 500 <= status <= 599


def redact(text: str, *secrets: str | None) -> str:
    """`text` with the given secrets, and anything shaped like a key or bearer token, blanked out."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _SECRETISH.sub("[redacted]", text)


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    lower = {str(k).lower(): v for k, v in headers.items()}
    try:
        if (ms := lower.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
    except ValueError:
        pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def status_error(provider: str, status: int | None, detail: str, *, headers: Mapping[str, str] | None = None,
                 secrets: tuple[str | None, ...] = (), key_env: str = "", **context: Any) -> ProviderError:
    """A ProviderError for an HTTP status (or a stream error event), with retry facts attached.

    `key_env` names the environment variable the key came from, for the 401 hint."""
    where_key = f"{key_env} (or the key passed in)" if key_env else "the API key passed in"
    hint = {401: f" — the API key was rejected: check {where_key}",
            403: " — the key is not allowed to use this model or endpoint",
            404: " — check the model name and the base URL"}.get(status or 0, "")
    if status in (400, 413) and _CONTEXT_FULL.search(detail):
        hint = (" — the request is longer than the model's context window: lower limits.window (the turns each "
                "request carries), or serve the model with a longer context (llama.cpp: -c; llama-cpp-python: "
                "--n_ctx; vLLM: --max-model-len; Ollama: num_ctx)")
    if status in (400, 422) and "cache_control" in detail:
        hint = (" — the server refuses the prompt cache's marks (cache_control), which isolation (b) sends to Claude: "
                "play isolation (a), or reach Claude through a server that takes them")
    where = f"HTTP {status}" if status else "error"
    message = redact(f"{provider}: {where}: {detail}{hint}", *secrets)
    return ProviderError(message, status=status, retryable=is_retryable_status(status),
                         retry_after_s=parse_retry_after(headers), **context)


def transport_error(provider: str, exc: BaseException, *, secrets: tuple[str | None, ...] = (),
                    url: str | None = None, **context: Any) -> ProviderError:
    """A retryable ProviderError for a timeout, a refused or dropped connection, a broken stream;
    the cause beneath the SDK's words is named (`Connect call failed`, a name that does not resolve),
    and a server never reached is named by its `url`."""
    kind = "timed out" if "timeout" in type(exc).__name__.lower() else "connection failed"
    detail = str(exc).strip()
    chain = _chain(exc)
    cause = next((str(inner).strip()[:200] for inner in reversed(chain[1:]) if str(inner).strip()), "")
    if cause and cause not in detail:
        detail = f"{detail}: {cause}" if detail else cause
    unreached = url and any(type(inner).__name__ in ("ConnectError", "ConnectTimeout", "ConnectionRefusedError",
                                                     "gaierror") for inner in chain)
    hint = (f"; is the server running at {url}, and is that its address?" if unreached else
            "; a slow server needs a longer --timeout (timeout_s)" if kind == "timed out" else "")
    message = redact(f"{provider}: {kind} ({type(exc).__name__}{': ' + detail if detail else ''}){hint}", *secrets)
    return ProviderError(message, status=None, retryable=True, **context)


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions beneath it (each one's cause, else its context), outermost first."""
    chain: list[BaseException] = []
    inner: BaseException | None = exc
    while inner is not None and all(inner is not seen for seen in chain):
        chain.append(inner)
        inner = inner.__cause__ or inner.__context__
    return chain


def _rate_limited(failure: ProviderError, cap_s: float) -> str:
    """What to change when a call gave up on a rate limit (HTTP 429), "" for any other failure."""
    if failure.status != 429:
        return ""
    asked = failure.context.get("retry_after_s")
    longer = (f"; it asked to wait {float(asked):,.0f} s, longer than retry_after_cap_s ({cap_s:g} s)"
              if isinstance(asked, (int, float)) and asked > cap_s else "")
    return (f" — the server's rate limit held through every retry{longer}: lower --max-concurrency (or a sweep's "
            f"--concurrency), or raise max_retries or retry_after_cap_s in the scene's provider")


def backoff_delay(retry: int, base_delay_s: float, cap_s: float, rng: random.Random) -> float:
    """Exponential backoff with equal jitter for retry number `retry` (1, 2...), at most `cap_s`."""
    full = min(cap_s, base_delay_s * 2 ** (retry - 1))
    return full / 2 + rng.uniform(0, full / 2)


async def with_retries(call: Callable[[], Awaitable[T]], *, max_retries: int, retry_after_cap_s: float,
                       base_delay_s: float = 0.5, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                       on_retry: OnRetry | None = None, rng: random.Random | None = None,
                       on_wait: OnWait | None = None) -> T:
    """Await `call()`; on a retryable failure wait and try again, at most `max_retries` more times.

    Retryable: a `ProviderError` with `retryable=True`, or a stdlib `TimeoutError`/`ConnectionError`.
    The wait is the server's `retry-after` when it gave one, else exponential backoff with jitter,
    never more than `retry_after_cap_s`; a wait the server asked for is told to `on_wait` (a
    `promptdesk.core.providers.waits.Wait`) before it is taken. Any other exception propagates untouched. Giving up
    raises a `ProviderError` with the last status, `retryable` as classified and `attempts` in its
    context.
    """
    rng = rng or random.Random()
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except ProviderError as exc:
            failure = exc
        except (TimeoutError, ConnectionError) as exc:
            failure = transport_error("provider", exc)
        failure.context["attempts"] = attempt
        if not failure.retryable:
            raise failure
        if attempt > max_retries:
            raise ProviderError(f"{failure.message} (gave up after {attempt} attempt{'' if attempt == 1 else 's'})"
                                f"{_rate_limited(failure, retry_after_cap_s)}", status=failure.status,
                                retryable=True, usage=failure.usage, **failure.context) from None
        hinted = failure.context.get("retry_after_s")
        if hinted is None:
            delay = backoff_delay(attempt, base_delay_s, retry_after_cap_s, rng)
        else:
            status = f"HTTP {failure.status}" if failure.status else "an error"
            wait = capped_wait(float(hinted), retry_after_cap_s,
                               f"the provider asked for a pause before the retry ({status} with retry-after)")
            delay = wait.seconds
            if on_wait is not None:
                on_wait(wait)
        if on_retry is not None:
            on_retry(attempt, delay, failure.message)
        await sleep(delay)
