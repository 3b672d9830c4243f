"""A turn's request sent ahead: what is already known of it leaves while its beat is still played.

In a parallel beat every actor's next request is the thread it has already been sent (its briefing,
every exchange kept) followed by one new update, which only the end of the beat decides. A crowd's
beat used to build and send all its requests only then, one after another on one event loop: at
fifty actors the last body reached the server 90 ms or more after the first (the SDK and its HTTP
library cost about 1.2 ms a request), and the beat's slowest call left that much late.

So, on a provider asked to (`send_ahead`), when an actor's turn is done its next request is opened
at once (`EarlyCalls.open`): the SDK's
`post` starts with a body that streams (`Transfer-Encoding: chunked`), whose first chunk is the
body as far as the thread goes (`prefix`), and which then waits. When the request is asked
(`EarlyCalls.take` then `Early.finish`), only the rest of its body is built and written, once the
request is checked to go on from what the prefix was built from (`Early.begun`): the same messages
first, at least one after them. The server holds an unfinished body, which it cannot act
on: the request reaches the model when its last chunk does, after `prompts.jsonl` recorded it. The
bytes of the body are those of the whole request, and nothing else is sent.

Whatever does not fit goes back to the whole request: a request that does not go on from the prefix
(a thread the window dropped, another briefing) abandons the early call, and so does a call the
beat never asks (the actor left, the scene ended: `cancel_all` when the provider closes). An early
call that failed (a server that takes no body in chunks, a connection it closed while the beat was
played) is said in debug.log and the request is sent whole, once, as it would have been without
it (its retries and their waits are the whole request's); a server that refused one with an HTTP
status and then took the same request whole is sent no more early calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from promptdesk.core.providers.wire import wire_rest

log = logging.getLogger("promptdesk.providers")


class Early:
    """One request opened ahead, its body's `prefix` written, the rest awaited (`finish`)."""

    def __init__(self, prefix: bytes, post: Callable[[AsyncIterator[bytes]], Awaitable[Any]], begun: Any = None) -> None:
        self.prefix = prefix
        self.begun = begun
        """What the prefix was built from (the provider's to compare the request with)."""
        self._rest: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Future[Any] = asyncio.ensure_future(post(self._body()))
        self.task.add_done_callback(_retrieved)

    async def _body(self) -> AsyncIterator[bytes]:
        yield self.prefix
        rest = await self._rest
        if rest:
            yield rest

    async def finish(self, rest: bytes | None) -> tuple[Any, BaseException | None]:
        """(the response to the body the prefix and `rest` make, None) through this call, or (None, why)
        when it did not carry it: no `rest` (the request does not go on from the prefix; why: None), or
        the call failed (why: its exception: a server that takes no body in chunks, a connection it
        closed while the beat was played). The caller then sends the body whole, once, as it would
        have without an early call: whatever the early call met, no answer came of it."""
        if rest is None or self.task.done():
            failure = _failure(self.task) if self.task.done() else None
            self.abandon()
            return None, failure
        self._rest.set_result(rest)
        try:
            return await self.task, None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - no answer came of it: the request is sent whole
            return None, exc

    def abandon(self) -> None:
        """Close the call: its connection ends with the body unfinished, which no server acts on."""
        self.task.cancel()


class EarlyCalls:
    """A provider's early calls, one per recipient at most."""

    def __init__(self) -> None:
        self.calls: dict[str, Early] = {}
        self.refused = False
        """A server refused an early call but took the same request whole: no more are opened."""

    def open(self, to: str, prefix: bytes, post: Callable[[AsyncIterator[bytes]], Awaitable[Any]], begun: Any = None) -> None:
        """Open `to`'s next request with `prefix`, built from `begun` (an older one still open is abandoned)."""
        if self.refused:
            return
        if (old := self.calls.pop(to, None)) is not None:
            old.abandon()
        self.calls[to] = Early(prefix, post, begun)

    def take(self, to: str | None) -> Early | None:
        """`to`'s early call, now spent, if one is open."""
        return self.calls.pop(to, None) if to else None

    async def send(self, early: Early | None, params: dict[str, Any], known: dict[tuple[str, str], str],
                   whole: Callable[[], Awaitable[Any]], server: str) -> Any:
        """The streamed response to `params`: through `early` (a call taken for this request) when the
        request goes on from what it was opened with, only the rest of the body written (`wire_rest`);
        else `whole()`, once, as without an early call (`answered_whole` says why in debug.log)."""
        if early is None:
            return await whole()
        response, why = await early.finish(wire_rest(params, True, known, early.begun))
        if response is not None:
            return response
        answer = await whole()
        self.answered_whole(why, getattr(why, "status_code", None), server)
        return answer

    def answered_whole(self, why: BaseException | None, status: int | None, server: str) -> None:
        """The request an early call could not carry (`why`) was answered sent whole: a refusal
        with an HTTP `status` means the server takes no early call; said once in debug.log."""
        if why is None:
            return
        if _refuses_chunks(status) and not self.refused:
            self.refused = True
            log.warning("%s refused a request sent ahead of its beat (HTTP %s, a body sent in chunks) and took it "
                        "whole: requests are sent whole from now on", server, status)
        else:
            log.info("%s: a request sent ahead of its beat failed before its body was whole (%s); sent whole",
                     server, type(why).__name__)

    async def cancel_all(self) -> None:
        """Abandon every open call and wait until each has closed its connection."""
        calls, self.calls = list(self.calls.values()), {}
        for call in calls:
            call.abandon()
        for call in calls:
            with contextlib.suppress(BaseException):
                await call.task


def _refuses_chunks(status: int | None) -> bool:
    """Whether an HTTP status refuses the request's form (a body in chunks: 411 Length Required, 400,
    413, 415, 501), not the moment (408, 429, a 5xx that may pass)."""
    return status is not None and (400 <= status < 500 and status not in (408, 429) or status == 501)


def _failure(task: asyncio.Future[Any]) -> BaseException | None:
    return None if task.cancelled() else task.exception()


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Read a finished call's outcome, so an abandoned one never warns that it went unread."""
    if not task.cancelled():
        task.exception()
