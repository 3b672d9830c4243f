"""What the Anthropic and OpenAI providers share: key handling, the lazy SDK client, the one retry
loop, delta bookkeeping, timing, and turning SDK exceptions into safe `ProviderError`s.

Streaming contract (`complete(request, on_delta, on_reset)`): `on_delta(fragment)` is called with
each text fragment as it arrives, in order. A stream is complete only when its finish marker came
(Anthropic `message_stop`; OpenAI a `finish_reason` and `[DONE]`): a stream that just ends is a
failed call, retried like a 5xx. When an attempt fails after fragments were delivered (a dropped
connection, an error event, a missing finish marker), `on_reset()` is called first: every fragment
delivered so far is retracted, and the retry (if any) streams its answer from the start. A failure
that is not retried carries `partial_text` and `deltas` in its context (for the log only).
Timing (`latency_s`, `ttft_s`) is that of the attempt that answered.

Billing: a stream's usage is noted as it arrives (`Stream.observed`: Anthropic's `message_start`,
OpenAI's usage chunk). When an attempt fails after that, its observed usage is still billed: the
completion's `usage` adds every failed attempt's to its own, and the exception that ends a failed
call (a `ProviderError`, or the cancellation of a stopped or timed-out call) carries the billed total
as `usage`, so the call's record never understates what was spent.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import random
import time
from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any

from promptdesk.core.errors import InvalidConfig, ProviderError
from promptdesk.core.providers import concurrency
from promptdesk.core.providers.base_urls import check_base_url, not_found_hint
from promptdesk.core.providers.early import EarlyCalls
from promptdesk.core.providers.bodies import ERROR_TYPE_STATUS, error_detail, unanswered  # noqa: F401 - re-exported
from promptdesk.core.providers.base import Completion, DeltaCallback, Provider, Request, ResetCallback, Usage
from promptdesk.core.providers.rate_headers import spent_budget
from promptdesk.core.providers.streams import Stream
from promptdesk.core.providers.retry import RETRY_NOTICE, redact, status_error, transport_error, with_retries
from promptdesk.core.providers.whole_requests import send_whole
from promptdesk.core.providers.wire import wire_prefix
from promptdesk.core.providers.waits import OnWait, Wait, capped_wait

log = logging.getLogger("promptdesk.providers")

class RemoteProvider(Provider):
    """A provider that talks HTTP through a vendor SDK. Subclasses fill in the four hooks."""

    key_env: str = ""
    base_url_env: str = ""
    key_required: bool = True
    default_url: str = ""
    """The server the SDK calls when no base URL is given (named when a connection fails)."""
    finish_marker: str = "finish marker"
    """What a complete stream ends with, named in the error when it is missing."""

    def __init__(self, model: str | None, api_key: str | None = None, base_url: str | None = None, *,
                 timeout_s: float = 60.0, max_retries: int = 3, retry_after_cap_s: float = 30.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, rng: random.Random | None = None,
                 base_delay_s: float = 0.5, max_concurrency: int | None = None,
                 journal_timeout_s: float | None = None, send_ahead: bool = False) -> None:
        if not model:
            raise InvalidConfig(f"the {self.name} provider needs a model: set `model` in the scene's provider "
                                f"(or pass --model)")
        self.model = model
        self._api_key = api_key or (os.environ.get(self.key_env) if self.key_env else None) or None
        if self.key_required and not self._api_key:
            raise ProviderError(f"{self.name}: no API key; set {self.key_env} in the environment", status=None)
        self.base_url = base_url or (os.environ.get(self.base_url_env) if self.base_url_env else None) or None
        if self.base_url is not None:
            check_base_url(self.base_url, self.name, "--base-url or `base_url`" if base_url else self.base_url_env)
        self.timeout_s, self.max_retries, self.retry_after_cap_s = timeout_s, max_retries, retry_after_cap_s
        self.base_delay_s, self._sleep, self._rng = base_delay_s, sleep, rng or random.Random()
        self.max_concurrency, self.journal_timeout_s = max_concurrency, journal_timeout_s
        self._client: Any = None
        self._clients: dict[str, Any] = {}
        """One SDK client per recipient (`client_for`)."""
        self._tls: Any = None
        """The TLS context every recipient's client shares (built once: it is the slow part of a client)."""
        self.early = EarlyCalls()
        """Each recipient's next turn, sent ahead (`open_early`)."""
        self.send_ahead = send_ahead
        """Whether a turn's request may be opened before it is asked (`open_early`)."""
        self._encoded: dict[str, dict[tuple[str, str], str]] = {}
        """Each recipient's messages as JSON, from its last request (`promptdesk.core.providers.wire`)."""
        self.rate_wait: Wait | None = None
        """From the last response's rate-limit headers: the wait until a spent budget resets (capped
        by `retry_after_cap_s`), else None."""
        self.on_wait: OnWait | None = None
        """Told of each wait a response header asks for, as the response arrives: a retry's, and a
        spent budget's (set by a sweep's limiter, which pauses every run on it and tells the
        operator; `promptdesk.core.providers.ratelimit`). Each wait told is in the run's debug.log too."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    # -- hooks -----------------------------------------------------------------------------
    @abstractmethod
    def params(self, request: Request) -> dict[str, Any]:
        """The API's arguments for `request`."""

    @abstractmethod
    def _build_client(self, http_client: Any = None) -> Any:
        """Import the SDK and build its async client, with `max_retries=0` (on `http_client` when given)."""

    def _http_client_class(self) -> type | None:
        """The SDK's own HTTP client class (`DefaultAsyncHttpxClient`), when it has one."""
        return None

    @abstractmethod
    async def _plain(self, client: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        """One non-streaming call: the whole text and its usage (setting `stream.truncated` when the
        reply stopped at its token limit; nothing is emitted)."""

    @abstractmethod
    async def _stream(self, client: Any, request: Request, stream: Stream) -> tuple[str, Usage]:
        """One streaming call, passing each text fragment to `stream.emit` (and setting
        `stream.finished`, and `stream.truncated` when the reply stopped at its token limit)."""

    @abstractmethod
    def _translate(self, exc: Exception) -> ProviderError | None:
        """The ProviderError an SDK or transport exception means, or None for anything else."""

    # -- shared ----------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._build_client()
        return self._client

    def prepare(self) -> None:
        """Import the SDK, build the client and the TLS context every recipient's client will share
        (blocking: the session runs this off the event loop)."""
        self.client  # noqa: B018 - building it is the point
        self._shared_tls()

    def client_for(self, to: str | None) -> Any:
        """The SDK client that carries `to`'s calls: one per recipient, each with a connection pool
        of its own, sharing one TLS context.

        The SDK's pool looks at every connection it holds whenever a request starts or ends (it
        probes each idle one's socket), so with one client for a cast of fifty each beat pays those
        probes thousands of times, on the event loop, while its requests are leaving. An actor's
        calls never overlap, so its client keeps one connection, reused from beat to beat. Without
        the SDK's HTTP client class (or its TLS helper), every recipient shares `client`. Each
        recipient's client sends a request's head and body in one write (`send_whole`)."""
        if not to:
            return self.client
        found = self._clients.get(to)
        if found is None:
            tls = self._shared_tls()
            if tls is None:
                found = self.client
            else:
                http = self._http_client_class()(verify=tls)  # type: ignore[misc]
                send_whole(http)
                found = self._build_client(http_client=http)
            self._clients[to] = found
        return found

    def _shared_tls(self) -> Any:
        """The TLS context of the SDK's HTTP library, made as its own client makes one by default
        (its CA bundle, `SSL_CERT_FILE`/`SSL_CERT_DIR` honoured); None when it cannot be had."""
        if self._tls is None:
            try:
                import importlib

                http = self._http_client_class()
                library = importlib.import_module(http.__mro__[1].__module__.partition(".")[0]) if http else None
                self._tls = library.create_ssl_context() if library is not None else False
            except Exception:  # noqa: BLE001 - an older SDK or library: one shared client will do
                self._tls = False
        return self._tls or None

    async def complete(self, request: Request, on_delta: DeltaCallback | None = None,
                       on_reset: ResetCallback | None = None) -> Completion:
        """Send `request`, retrying what is worth retrying; stream into `on_delta` when given."""
        client, stream = self.client_for(request.to), Stream(on_delta, on_reset)
        limit = self.timeout_s
        if request.purpose == "journal" and self.journal_timeout_s is not None:
            client, limit = client.with_options(timeout=self.journal_timeout_s), self.journal_timeout_s
        watch = concurrency.server(concurrency.server_key(self))

        async def attempt() -> tuple[str, Usage]:
            stream.begin()
            mark, returned = watch.begin(), False
            try:
                call = self._plain(client, request, stream) if on_delta is None else self._stream(client, request, stream)
                text, usage = await self._within(call, limit, request.purpose == "journal")
                returned = True
                if on_delta is not None:
                    if not stream.finished:
                        raise self._unfinished(stream.ended_with)
                return text, stream.billed + usage
            except Exception as exc:  # noqa: BLE001 - translated, or re-raised untouched
                stream.bill_failed(answered=(returned and on_delta is not None)
                                   or (isinstance(exc, ProviderError) and "timed_out" in exc.context))
                error = exc if isinstance(exc, ProviderError) else self._translate(exc) or self._unreadable(exc)
                if error is None:
                    stream.retract()
                    raise
            if on_delta is not None and error.status is None and not _not_a_cut(error) and watch.another_since(mark):
                self._cut_by_another(watch)
            if stream.pieces:
                raise self._broken_stream(error, stream) from None
            raise error from None

        try:
            text, usage = await with_retries(attempt, max_retries=self.max_retries,
                                             retry_after_cap_s=self.retry_after_cap_s, base_delay_s=self.base_delay_s,
                                             sleep=self._sleep, on_retry=self._log_retry, rng=self._rng,
                                             on_wait=self._header_wait)
        except BaseException as exc:
            stream.bill_failed()  # an attempt cancelled mid-stream (a stop, a turn timeout) was billed too
            if isinstance(exc, asyncio.CancelledError) and stream.started:
                exc.usage = stream.billed + Usage(reported=False)  # type: ignore[attr-defined]
            elif stream.billed.total or not stream.billed.reported:
                exc.usage = stream.billed  # type: ignore[attr-defined]
            raise
        return Completion(text=text, usage=usage, provider=self.name, model=self.model,
                          latency_s=time.perf_counter() - stream.started, ttft_s=stream.ttft_s,
                          truncated=stream.truncated, refusal="".join(stream.refusal) or None,
                          unoffered_tool=stream.unoffered_tool, reasoning_only=stream.reasoning_only)

    async def _within(self, call: Any, limit: float, journal: bool = False) -> tuple[str, Usage]:
        """One attempt, bounded as a whole by `limit` seconds (the SDK's own timeout only bounds the
        wait between two reads, so a server trickling bytes could hold an attempt for ever): past it
        the attempt fails, retryable like any timeout, naming the setting that gave `limit`."""
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                return await call
        except TimeoutError:
            if not scope.expired():
                raise
            knob = "--journal-timeout or journal_timeout_s" if journal else "--timeout or timeout_s"
            raise ProviderError(f"{self.name}: timed out: no whole answer within {limit:g} s (the timeout bounds "
                                f"each attempt from its start to its last byte; a slow server needs a longer one: "
                                f"{knob})", status=None, retryable=True, timed_out=limit) from None

    def _unfinished(self, ended_with: str | None) -> ProviderError:
        """The failure of a stream that ended without its finish marker: retried like a 5xx. When
        its stop reason came, the message says so (a server that never sends the rest is named)."""
        came = f": its stop reason ({ended_with}) came, the rest never did" if ended_with else ""
        return ProviderError(f"{self.name}: the stream ended without its finish marker ({self.finish_marker}){came}; "
                             f"the answer may be cut short", status=None, retryable=True)

    def _unreadable(self, exc: Exception) -> ProviderError | None:
        """A body or a stream event that is not JSON (a proxy's keep-alive text, a broken server) or
        not UTF-8: the attempt failed, retried like a broken stream; None for any other exception."""
        if isinstance(exc, UnicodeDecodeError):
            return ProviderError(f"{self.name}: the server sent bytes that are not UTF-8 (at byte {exc.start})",
                                 status=None, retryable=True)
        if not isinstance(exc, json.JSONDecodeError):
            return None
        return ProviderError(f"{self.name}: the server sent a response that is not JSON ({exc.msg} at character "
                             f"{exc.pos})", status=None, retryable=True)

    def _no_answer(self, text: str, content_type: str) -> ProviderError:
        """A 200 response that holds no answer is a failed call. An error object in it is read as a
        stream's error event is (its type implies the status: an invalid request is not retried);
        anything else (an HTML page, JSON of another shape) is retried like a 5xx."""
        status, detail = unanswered(text, content_type)
        if status is not None:
            return self._status_error(status, f"error in a 200 response: {detail}")
        return ProviderError(redact(f"{self.name}: the server answered 200 without an answer ({detail})",
                                    self._api_key), status=None, retryable=True, answered_with=content_type or "?")

    async def _answer_body(self, raw: Any, answered: Callable[[Any], bool]) -> Any:
        """The parsed body of a plain response, when `answered` says it holds an answer; otherwise
        (an error object, an HTML page, text that is not JSON) the failure `_no_answer` gives."""
        http = raw.http_response
        try:
            parsed = await parsed_body(raw)
        except UnicodeDecodeError as exc:
            raise self._unreadable(exc) from None  # type: ignore[misc]
        except ValueError:
            parsed = None
        if parsed is None or isinstance(parsed, (str, bytes)) or not answered(parsed):
            raise self._no_answer(http.text, http.headers.get("content-type", ""))
        return parsed

    async def _expect_events(self, response: Any, whole: Callable[[dict[str, Any]], Any]) -> Any:
        """None for an event stream. A streamed request answered 200 with one JSON body that `whole`
        reads as a whole answer (a server that ignores `stream: true`) gives that answer; any other
        JSON or HTML body (an error object, a proxy's page) fails naming what it holds, not as a
        stream cut short."""
        media = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if "json" not in media and "html" not in media:
            return None
        text = (await response.aread()).decode("utf-8", "replace")
        try:
            body = json.loads(text) if "json" in media else None
        except ValueError:
            body = None
        if isinstance(body, dict) and (answer := whole(body)) is not None:
            log.warning("%s %s: the server answered a streamed request with one JSON body (it ignores stream: true); "
                     "taken as the whole answer", self.name, self.model)
            return answer
        raise self._no_answer(text, media)

    def saw_headers(self, headers: Any) -> None:
        """Note what the response's rate-limit headers say about the next request (at most
        `retry_after_cap_s`, however far off the reset they name)."""
        spent = spent_budget(headers)
        self.rate_wait = wait = None if spent is None else capped_wait(
            spent[0], self.retry_after_cap_s, f"the provider says the {spent[1]} budget is spent")
        if wait is not None and wait.seconds > 0 and self.on_wait is not None:  # only a limiter takes this wait
            self._header_wait(wait)

    def _header_wait(self, wait: Wait) -> None:
        """A wait a response header asked for is being taken: say so in debug.log and to `on_wait`."""
        log.warning("%s %s: %s", self.name, self.model, wait.text())
        if self.on_wait is not None:
            self.on_wait(wait)

    def _cut_by_another(self, watch: concurrency.Server) -> None:
        """A stream failed while another request to the same server had started: say so, once."""
        if watch.tell_once():
            text = concurrency.CUT_NOTICE.format(server=concurrency.server_key(self))
            log.warning("%s %s: %s", self.name, self.model, text)
            if self.on_notice is not None:
                self.on_notice(text)

    def _broken_stream(self, error: ProviderError, stream: Stream) -> ProviderError:
        """`error`, after retracting the fragments the failed attempt delivered (kept for the log)."""
        pieces = stream.retract()
        message = f"{error.message} — the {len(pieces)} deltas it had streamed were retracted"
        return ProviderError(message, status=error.status, retryable=error.retryable, partial_text="".join(pieces),
                             deltas=len(pieces), **error.context)

    def _log_retry(self, attempt: int, delay: float, reason: str) -> None:
        log.warning("%s %s: retry %d/%d in %.2fs after: %s", self.name, self.model, attempt, self.max_retries,
                    delay, reason)
        notice = RETRY_NOTICE.get()
        if notice is not None:
            notice(attempt, self.max_retries, delay, reason)

    def _status_error(self, status: int | None, detail: str, headers: Any = None, **context: Any) -> ProviderError:
        hint = not_found_hint(self.name, self.base_url) if status == 404 else ""
        return status_error(self.name, status, detail + hint, headers=headers, secrets=(self._api_key,),
                            key_env=self.key_env, **context)

    def _transport_error(self, exc: BaseException) -> ProviderError:
        return transport_error(self.name, exc, secrets=(self._api_key,), url=self.base_url or self.default_url)

    @property
    def sends_ahead(self) -> bool:
        """When asked (`send_ahead`), but not to a server whose calls wait for a place
        (`max_concurrency`: those waits keep the calls' order of arrival), nor once the server refused a
        request sent ahead."""
        return self.send_ahead and self.max_concurrency is None and not self.early.refused

    def open_early(self, request: Request) -> None:
        """Open `request.to`'s next turn now, its body written as far as `request`'s messages go
        (`promptdesk.core.providers.early`), when it `sends_ahead`."""
        if not self.sends_ahead or not request.to:
            return
        begun = self._begun(request)
        prefix = wire_prefix(begun, self._encoded.setdefault(request.to, {}))
        self.early.open(request.to, prefix, self._streamed_post(self.client_for(request.to)), begun)

    def _begun(self, request: Request) -> dict[str, Any]:
        """The API arguments a turn's request begins with, when `request` holds its thread so far."""
        return self.params(request)

    def _streamed_post(self, client: Any) -> Callable[[Any], Awaitable[Any]]:
        """Send a streamed request whose body is given (bytes, or chunks to stream) through `client`."""
        raise NotImplementedError

    async def drop_early(self) -> None:
        await self.early.cancel_all()

    async def aclose(self) -> None:
        """Abandon the calls sent ahead that no turn took, and close the SDK clients' connections."""
        await self.early.cancel_all()
        clients = {id(c): c for c in [self._client, *self._clients.values()] if c is not None}
        self._client, self._clients = None, {}
        for client in clients.values():
            await client.close()


def _not_a_cut(error: ProviderError) -> bool:
    """Whether a failure is no stream the server cut short: a reply it ended (`stopped` by its finish
    reason), a body in place of the stream, or an attempt our own timeout ended (`timed_out`)."""
    return any(key in error.context for key in ("stop_reason", "answered_with", "timed_out"))


async def parsed_body(raw: Any) -> Any:
    """The parsed body of an SDK raw response, whether its `parse()` is async or not."""
    parsed = raw.parse()
    return await parsed if inspect.isawaitable(parsed) else parsed
