"""Escalation to the operator (spec 002): the four triggers, and the desk where the operator answers.

Triggers (pure): a conflict open for `max_rounds_per_conflict` rounds in a row; a participant's
confidence below `confidence_threshold`; a critical keyword in an answer or the synthesis; the
facilitator's own `next_action: escalate`. A trigger the operator already chose to `continue` past
is acknowledged and does not fire again (a conflict's count starts over; a keyword is not raised
twice; a participant's low confidence is raised again only after it has recovered).

The desk: `open()` a future, then the console answers through `Session.direct("answer_escalation", ...)`
(accept | own | continue), or the headless `--on-escalate` policy answers at once.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptdesk.core.formats.roundtable.answers import Answer, Synthesis
from promptdesk.core.formats.roundtable.state import RoundtableState

OPERATOR_CHOICES = ("accept", "own", "continue")


@dataclass(frozen=True)
class Trigger:
    """Why a round escalates: `kind` is conflict | confidence | keyword | facilitator."""

    kind: str
    key: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "key": self.key, "detail": self.detail}


UNSPACED = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                      "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]")
"""Characters of scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, kana, Han): a
keyword's edge in one of them has no word boundary to wait for."""


def _pattern(keyword: str) -> str:
    before = "" if UNSPACED.match(keyword[0]) else r"(?<![\w-])"
    after = "" if UNSPACED.match(keyword[-1]) else r"(?![\w-])"
    return before + re.escape(keyword) + after


def keyword_hits(keywords: Sequence[str], texts: Sequence[str]) -> list[str]:
    """The critical keywords found (whole words, any case) in any of `texts`; a keyword in a script
    written without spaces (`安全`, `ความปลอดภัย`) wherever it stands."""
    joined = "\n".join(texts)
    return [k for k in keywords if k.strip() and re.search(_pattern(k.strip()), joined, re.I)]


def triggers(state: RoundtableState, answers: Mapping[str, Answer], synthesis: Synthesis, *,
             max_rounds_per_conflict: int, threshold: float, keywords: Sequence[str]) -> list[Trigger]:
    """Every trigger this round fires, not counting those the operator already acknowledged."""
    found: list[Trigger] = []
    for key, age in state.conflict_ages.items():
        if age >= max_rounds_per_conflict:
            found.append(Trigger("conflict", f"conflict:{key}", f"conflict '{key}' open for {age} rounds"))
    for slug, answer in answers.items():
        if answer.confidence is not None and answer.confidence < threshold:
            found.append(Trigger("confidence", f"confidence:{slug}",
                                 f"{state.participants.get(slug, slug)}'s confidence {answer.confidence:.2f} "
                                 f"is below {threshold:.2f}"))
        elif answer.confidence is not None:
            state.acknowledged.discard(f"confidence:{slug}")
    texts = [f"{a.position}\n{a.rationale}" for a in answers.values()]
    texts += [synthesis.synthesis, *synthesis.consensus, *(c["topic"] for c in synthesis.conflicts)]
    for word in keyword_hits(keywords, texts):
        found.append(Trigger("keyword", f"keyword:{word.lower()}", f"critical keyword '{word}'"))
    if synthesis.next_action == "escalate":
        found.append(Trigger("facilitator", f"facilitator:{state.round}", "the facilitator asked for a decision"))
    return [t for t in found if t.key not in state.acknowledged]


def acknowledge(state: RoundtableState, fired: Sequence[Trigger]) -> None:
    """The operator chose to continue: these triggers do not fire again as they stand."""
    for trigger in fired:
        state.acknowledged.add(trigger.key)
        if trigger.kind == "conflict":
            state.conflict_ages.pop(trigger.key.removeprefix("conflict:"), None)
            state.acknowledged.discard(trigger.key)


@dataclass
class Answered:
    """The operator's (or the headless policy's) answer to one escalation."""

    decision: str
    text: str | None = None
    by: str = "operator"


class EscalationDesk:
    """Holds the one open escalation and takes the operator's answer to it."""

    def __init__(self) -> None:
        self._future: asyncio.Future[Answered] | None = None
        self.current: dict[str, Any] | None = None

    @property
    def is_open(self) -> bool:
        return self._future is not None and not self._future.done()

    def open(self, details: dict[str, Any]) -> asyncio.Future[Answered]:
        """Open an escalation (before announcing it, so that an answer can never arrive too early)."""
        self._future = asyncio.get_running_loop().create_future()
        self.current = details
        return self._future

    def answer(self, decision: str, text: str | None = None) -> None:
        """accept (the facilitator's recommendation) | own (the operator's `text`) | continue."""
        if decision not in OPERATOR_CHOICES:
            raise ValueError(f"an escalation is answered with {' | '.join(OPERATOR_CHOICES)}, not {decision!r}")
        if decision == "own" and not (text or "").strip():
            raise ValueError("an `own` decision needs its text")
        if not self.is_open:
            raise ValueError("no escalation is waiting for an answer")
        assert self._future is not None
        self._future.set_result(Answered(decision, (text or "").strip() or None))

    def close(self) -> None:
        self._future, self.current = None, None
