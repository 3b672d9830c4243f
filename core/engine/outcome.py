"""Whether a run's model calls are getting through, and when a run cannot succeed.

Every call (turns, corrections, judges, facilitators, journals) reports here through
`promptdesk.core.engine.turn.call`. A call that fails in a way no retry can mend (the key was
rejected, the model or endpoint does not exist: `FATAL_STATUSES`) ends that actor's part, not the
scene (spec 003: "Continue scene with remaining characters"): the actor is marked *unavailable*
(`CallHealth.unavailable`), a `system` line says why once, and its turns are skipped from then on,
in formats that can play on without one (`Format.drops_unavailable_actors`). The run is stopped early,
closed with reason `provider-error`, when such a failure leaves no actor that can go on (none left,
or every one left shares the failing provider), when it is the coordinator's judge's or a
facilitator's, in a format that cannot play on without an actor, or when calls have failed back to
back for `FAILED_BEATS` beats' worth of every actor still playing. An actor whose own last
`FAILED_BEATS` calls failed, of any kind, while others still play, leaves the same way
(`CallHealth.failing_for_good`): a server down for it alone is not asked every beat again. A run in which no call succeeded
is a failed run whatever closed it (exit 1, the cause on stderr).
"""

from __future__ import annotations

import asyncio
from typing import Any

from promptdesk.core.errors import ProviderError
from promptdesk.core.record import outputs

PROVIDER_ERROR = "provider-error"
"""The close reason of a run stopped because its calls fail."""

FATAL_STATUSES = frozenset({401, 403, 404})
"""Statuses that say the configuration is wrong: retrying, or asking again next beat, cannot help."""

FAILED_BEATS = 3
"""Consecutive calls every cast member must have failed (about that many beats) before the run is stopped."""
UNAVAILABLE = outputs.UNAVAILABLE
"""The `reason` of the `system` line that says an actor is out of the scene for good (with `about`, its slug)."""


class CallHealth:
    """Per call target: succeeded and failed counts and the current failure streak; the last cause.

    Targets are cast slugs, or `judge`, `facilitator`... Only the cast decides: a coordinator that
    still answers (a rule-based facilitator, say) does not keep alive a run whose actors all fail."""

    def __init__(self, cast: list[str]) -> None:
        self.cast = set(cast)
        self.succeeded: dict[str, int] = {}
        self.failed: dict[str, int] = {}
        self.streak: dict[str, int] = {}
        self.cause: str | None = None
        self.unavailable: dict[str, str] = {}
        """Actors whose provider failed for good, and why: skipped for the rest of the scene."""
        self.announced: set[str] = set()
        """The unavailable actors whose `system` line has been said."""

    def ok(self, to: str) -> None:
        """A call for `to` succeeded: its streak is broken."""
        self.succeeded[to] = self.succeeded.get(to, 0) + 1
        self.streak[to] = 0

    def fail(self, to: str, error: BaseException) -> str | None:
        """A call for `to` failed; returns why the run should stop now, or None to go on."""
        self.failed[to] = self.failed.get(to, 0) + 1
        self.streak[to] = self.streak.get(to, 0) + 1
        self.cause = describe(error)
        if fatal(error):
            return self.cause
        playing = self.cast - set(self.unavailable)
        if playing and all(self.streak.get(slug, 0) >= FAILED_BEATS for slug in playing):
            return f"every actor's last {FAILED_BEATS} calls failed; the last failure: {self.cause}"
        return None

    def failing_for_good(self, to: str) -> str | None:
        """Why cast member `to` leaves the scene although its failures are of a kind a retry may mend
        (a 500, a 529, a timeout): its last `FAILED_BEATS` calls failed while others still play, answered (a
        server down for it alone); None while it may still answer. Asking it every beat or round
        again would only cost each time its retries and their waits, for the same failure."""
        if to not in self.cast or to in self.unavailable or self.streak.get(to, 0) < FAILED_BEATS:
            return None
        if not any(self.succeeded.get(other, 0) and self.streak.get(other, 0) < FAILED_BEATS
                   for other in self.cast - set(self.unavailable) - {to}):
            return None  # no one else is playing either: the run's own rule decides (`fail`)
        return f"its last {FAILED_BEATS} calls failed; the last failure: {self.cause}"

    def replay(self, event: Any) -> None:
        """Take one recorded event back in, as a resumed run replays its log: a call's outcome (the
        streaks that decide who fails for good) and an actor's leaving, so that an actor who left the
        scene before the kill stays gone after the resume, never called nor announced again."""
        extra = getattr(event, "model_extra", None) or {}
        if event.type == "call" and isinstance(event.target, str):
            if event.ok:
                self.ok(event.target)
            else:
                self.failed[event.target] = self.failed.get(event.target, 0) + 1
                self.streak[event.target] = self.streak.get(event.target, 0) + 1
        elif event.type == "system" and getattr(event, "reason", None) == UNAVAILABLE and extra.get("about") in self.cast:
            self.unavailable.setdefault(extra["about"], str(extra.get("error") or "its provider failed"))
            self.announced.add(extra["about"])

    def playing(self, slugs: list[str]) -> list[str]:
        """`slugs` without the unavailable actors, in order."""
        return [slug for slug in slugs if slug not in self.unavailable]

    @property
    def all_failed(self) -> bool:
        """True when calls failed and no call for the cast (or for anyone, with no cast) succeeded."""
        succeeded = sum(n for to, n in self.succeeded.items() if to in self.cast or not self.cast)
        return bool(self.failed) and succeeded == 0


def fatal(error: BaseException) -> bool:
    """A failure no retry can mend: the key was rejected, the model or endpoint does not exist."""
    return isinstance(error, ProviderError) and error.status in FATAL_STATUSES


def can_play_without(actors: dict[str, Any], health: CallHealth, slug: str) -> bool:
    """True when the scene can go on without actor `slug`, whose provider failed for good: another
    actor still plays, on another provider (every actor left sharing the failing one would fail too)."""
    failing = actors[slug].provider
    others = [actor for other, actor in actors.items() if other != slug and other not in health.unavailable]
    return any(actor.provider is not failing for actor in others)


def describe(error: BaseException) -> str:
    """One line naming what failed and what to fix (never an API key: provider messages are redacted)."""
    if isinstance(error, ProviderError):
        return error.message
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return "the call timed out"
    return f"{type(error).__name__}: {error}"
