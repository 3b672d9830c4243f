"""One `complete` call's stream as the providers see it: the fragments delivered to the listener
(and taken back when an attempt fails), the attempt's timing, how its reply ended, and what its
failed attempts were billed (`promptdesk.core.providers.remote` explains the contract)."""

from __future__ import annotations

import time

from promptdesk.core.providers.base import DeltaCallback, ResetCallback, Usage


class Stream:
    """Delta bookkeeping and timing for one `complete` call (reset at each attempt)."""

    def __init__(self, on_delta: DeltaCallback | None, on_reset: ResetCallback | None = None) -> None:
        self.on_delta, self.on_reset = on_delta, on_reset
        self.pieces: list[str] = []
        self.started = self.first = 0.0
        self.finished = False
        """Set by the provider when the stream's finish marker arrived."""
        self.truncated = False
        """Set by the provider when the attempt's reply stopped at its token limit."""
        self.ended_with: str | None = None
        """The stop reason the attempt's stream gave, when it gave one (set by the provider)."""
        self.unoffered_tool: str | None = None
        """The stop reason by which the attempt's reply asked to call a tool none offered (`stops.settle`)."""
        self.refusal: list[str] = []
        """What the model said instead of answering (OpenAI's `refusal`), as it arrived."""
        self.reasoning_only = False
        """Set by the provider when the reply's text was empty and the server sent reasoning apart from it."""
        self.observed: Usage | None = None
        """The usage the provider reported so far in this attempt (set by the provider as it arrives)."""
        self.billed = Usage()
        """What the call's failed attempts were billed, so far."""

    def begin(self) -> None:
        self.started, self.first, self.finished, self.observed = time.perf_counter(), 0.0, False, None
        self.truncated, self.refusal, self.ended_with, self.unoffered_tool = False, [], None, None
        self.reasoning_only = False

    def bill_failed(self, answered: bool = False) -> None:
        """The attempt failed: what it was billed still counts. An attempt the server took and answered
        with no usage seen (text had streamed, or its stream ended without its finish marker: `answered`)
        was billed an unknown amount, never 0: the call's usage is then unknown."""
        if self.observed is not None:
            self.billed, self.observed = self.billed + self.observed, None
        elif answered or self.pieces:
            self.billed = self.billed + Usage(reported=False)

    def retract(self) -> list[str]:
        """Take back every fragment delivered by the failed attempt: tell the listener, start afresh."""
        pieces, self.pieces = self.pieces, []
        if pieces and self.on_reset is not None:
            self.on_reset()
        return pieces

    def emit(self, piece: str | None) -> None:
        """Deliver one text fragment to the listener."""
        if not piece:
            return
        if not self.pieces:
            self.first = time.perf_counter()
        self.pieces.append(piece)
        if self.on_delta is not None:
            self.on_delta(piece)

    def whole(self, text: str, usage: Usage) -> tuple[str, Usage]:
        """A whole answer that came as one body, not as a stream: delivered as one fragment, complete."""
        self.emit(text)
        self.finished = True
        return text, usage

    @property
    def ttft_s(self) -> float | None:
        return self.first - self.started if self.on_delta is not None and self.pieces else None
