"""A wait a provider asked for in a response header, capped, and said to the operator once.

Two headers make a provider wait: `retry-after` (or `retry-after-ms`) on a failed response, before
the retry (`promptdesk.core.providers.retry`), and a rate-limit header saying a budget is spent (remaining 0)
with its reset time (`promptdesk.core.providers.rate_headers`), before the next request of a sweep
(`promptdesk.core.providers.ratelimit`). Either is a `Wait`: never longer than the provider spec's
`retry_after_cap_s`, whatever the server said (a reset in 2099 is a 30 s wait, not a hang), and with
a sentence for the operator ("waiting 30 s: the provider says the request budget is spent").

`Announcer` says each wait once: the runs and calls that queue behind a wait already announced do
not repeat it, and waits under a second are not worth a line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

NOTICE_MIN_S = 1.0
"""Waits shorter than this are taken without a word."""


@dataclass(frozen=True)
class Wait:
    """`seconds` to wait (capped), what the provider asked for (`asked_s`) and why, in words."""

    seconds: float
    asked_s: float
    why: str

    @property
    def capped(self) -> bool:
        return self.asked_s > self.seconds

    def text(self) -> str:
        """The operator's line: "waiting 30 s: the provider says the request budget is spent (...)"."""
        cap = f" (it asked for {span(self.asked_s)}; capped by retry_after_cap_s)" if self.capped else ""
        return f"waiting {span(self.seconds)}: {self.why}{cap}"


OnWait = Callable[[Wait], None]


def capped_wait(asked_s: float, cap_s: float, why: str) -> Wait:
    """The wait the provider asked for, at most `cap_s` (a NaN or negative ask is no wait)."""
    asked = asked_s if asked_s > 0 else 0.0  # NaN compares false: no wait
    return Wait(seconds=min(asked, max(0.0, cap_s)), asked_s=asked, why=why)


def span(seconds: float) -> str:
    """A duration for a person: `30 s`, `0.5 s`, `6 min`, `5 h`, `26,627 days`."""
    if not math.isfinite(seconds):
        return "forever"
    if seconds < 10:
        return f"{round(seconds, 1):g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:,.0f} days"


class Announcer:
    """Says each wait once: nothing more while an announced wait of the same provider is running.

    `now` is the clock the waits run on; `say` takes the line (the sweep's progress, a log)."""

    def __init__(self, now: Callable[[], float], say: Callable[[str], None], label: str = "") -> None:
        self.now, self.say, self.label = now, say, label
        self.until = -math.inf

    def __call__(self, wait: Wait) -> bool:
        """Announce `wait` unless an announced wait is still running (then it only extends that
        one: the calls queued behind it wait for the same thing); True when said."""
        if wait.seconds < NOTICE_MIN_S:
            return False
        now = self.now()
        running = now < self.until
        self.until = max(self.until, now + wait.seconds)
        if running:
            return False
        self.say(f"{self.label}: {wait.text()}" if self.label else wait.text())
        return True
