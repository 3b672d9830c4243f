"""The coordinator's judgment: is the scene over? It returns decisions, never dialogue.

Role C is `RuleCoordinator` (conservative leave-taking rules, `promptdesk.core.protocol.leave_taking`). Roles A and B
are `JudgeCoordinator`, an LLM judge asked for one JSON decision; a malformed answer falls back to
role C's rules for that check and is logged. Mechanical limits live in `promptdesk.core.engine.checks`.

At close every role gives a goal `Verdict` apart from the close reason: roles A and B ask their
judge whether the scene's goal was met; role C answers only from the scene's `goal_markers`
(each must appear in some speech, said by the person the goal names for it, if any) and otherwise
says "unknown" (None). Close words never decide it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError, model_validator

from promptdesk.core.errors import ProviderError
from promptdesk.core.protocol import judging
from promptdesk.core.protocol.bounded import load_json
from promptdesk.core.protocol.reasoning import without_reasoning
from promptdesk.core.protocol.goal_acts import marker_owners, same_person
from promptdesk.core.record.events import SpeakEvent
from promptdesk.core.protocol.leave_taking import takes_leave
from promptdesk.core.providers.base import ChatMessage, Request

Ask = Callable[[Request], Awaitable[str]]
"""How a coordinator calls its judge: the session sends, records and prices the request."""
Warn = Callable[[str], None]


class Decision(BaseModel):
    """One coordinator decision: continue, close(reason), nudge(actor), suggest_event(text)."""

    decision: Literal["continue", "close", "nudge", "suggest_event"]
    reason: str | None = None
    actor: str | None = None
    text: str | None = None
    goal_achieved: bool | None = None
    goal_reason: str | None = None
    goal_met: bool | None = None
    """A judge's answer, with every decision: has the goal been reached yet? (None: role C's markers decide.)"""
    positions_stated: bool | None = None
    """A judge's answer: has every character stated a final position since the close note? (None:
    role C's rule decides, see `promptdesk.core.engine.winding`.)"""

    @model_validator(mode="after")
    def _a_suggestion_is_a_short_event(self) -> Decision:
        """`suggest_event` carries its world event: some text, at most `SUGGESTION_MAX_CHARS` long."""
        if self.decision == "suggest_event":
            text = (self.text or "").strip()
            if not text:
                raise ValueError("suggest_event without the world event's text")
            if len(text) > judging.SUGGESTION_MAX_CHARS:
                raise ValueError(f"the suggested world event is {len(text)} characters long, over the limit of "
                                 f"{judging.SUGGESTION_MAX_CHARS}")
        return self


@dataclass
class Verdict:
    """Was the scene's goal met? `achieved` is True, False or None (unknown), with a one-line reason."""

    achieved: bool | None
    reason: str


CONTINUE = Decision(decision="continue")


@dataclass
class SceneView:
    """What a coordinator may look at: public speech and counters, nothing private."""

    beat: int
    max_beats: int
    goal: str
    new_speech: list[SpeakEvent] = field(default_factory=list)
    recent_lines: list[str] = field(default_factory=list)
    silent_streak: int = 0
    goal_markers: list[str] = field(default_factory=list)
    speeches: list[str] = field(default_factory=list)
    """Every spoken line's words so far (for the goal verdict and role C's goal markers)."""
    speakers: list[str] = field(default_factory=list)
    """Who said each of `speeches` (display names; empty when not known)."""
    cast: list[str] = field(default_factory=list)
    """The cast's display names (a judge asks whether each has stated a final position)."""
    names: list[str] = field(default_factory=list)
    """Every cast member's display name, unavailable ones included (whom a goal's names denote)."""
    display: dict[str, str] = field(default_factory=dict)
    """Each cast member's display name by slug (what the coordinator's own words call them)."""
    since_close_note: list[str] | None = None
    """The public lines since the close note went out (None: it has not; see `promptdesk.core.engine.winding`)."""
    suggested: list[str] = field(default_factory=list)
    """The world events the judge suggested earlier in the run (none withheld), so that it never repeats one."""


NO_GOAL_VERDICT = "unknown: the scene has no goal"
"""The goal verdict's reason for a scene without `goal:`, under every role."""


def closes_naturally(speech: SpeakEvent) -> bool:
    """The line's act is taking leave (erring toward continuing; see `promptdesk.core.protocol.leave_taking`)."""
    if speech.action == "silent" and not speech.nonverbal:
        return False
    return takes_leave(speech.text or "", speech.nonverbal, speech.raw)


def marker_verdict(view: SceneView) -> Verdict:
    """Role C's goal verdict: from `goal_markers` only (each must appear in some speech), else unknown.
    A marker that stands in a clause of the goal naming who must do it (`Bob gives a sincere apology`,
    marker `apolog`) counts only when that person says it. A scene with no `goal:` has no verdict, as
    under roles A and B: its markers check nothing."""
    if not view.goal.strip():
        return Verdict(None, NO_GOAL_VERDICT)
    if not view.goal_markers:
        return Verdict(None, "unknown: the scene defines no goal_markers to check")
    spoken = [_same_form(s).lower() for s in view.speeches]
    known = len(view.speakers) == len(spoken) and bool(spoken)
    by = [_same_form(s) for s in view.speakers] if known else [""] * len(spoken)
    cast = tuple(dict.fromkeys(map(_same_form, [*view.names, *view.cast, *view.speakers])))
    markers = [_same_form(m) for m in view.goal_markers]
    owners = {m: marker_owners(_same_form(view.goal), m, cast) if known else () for m in markers}
    missing = [m for m in markers if not any(
        m.lower() in s and (not owners[m] or any(same_person(o, who, cast) for o in owners[m]))
        for s, who in zip(spoken, by))]
    if missing:
        named = [f"{m} (by {' or '.join(owners[m])})" if owners[m] else m for m in missing]
        return Verdict(False, f"goal markers never spoken: {', '.join(named)}")
    return Verdict(True, f"every goal marker was spoken: {', '.join(view.goal_markers)}")


def _same_form(text: str) -> str:
    """Text in its compatibility form (NFKC): a name, a marker or a line written composed or decomposed
    (`José`), or in full-width letters, reads as the same text in the goal, the cast and the speech."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


class RuleCoordinator:
    """Role C: pure code, no LLM. Deterministic and free of routing bias."""

    role = "C"

    async def decide(self, view: SceneView, ask: Ask | None = None, warn: Warn | None = None) -> Decision:
        for speech in view.new_speech:
            if closes_naturally(speech):
                return Decision(decision="close", reason="natural", text=f"{view.display.get(speech.from_, speech.from_)} took leave")
        return CONTINUE

    async def verdict(self, view: SceneView, ask: Ask | None = None, warn: Warn | None = None) -> Verdict:
        """Unknown unless the scene's goal markers can be checked; never inferred from close words."""
        return marker_verdict(view)


class VerdictAnswer(BaseModel):
    """The judge's goal verdict at close."""

    goal_achieved: bool | None
    reason: str = ""


class JudgeCoordinator:
    """Roles A and B: an LLM judge behind the same `decide` interface as role C."""

    def __init__(self, role: Literal["A", "B"], *, goal: str, operator_context: str = "") -> None:
        self.role = role
        self.goal = goal
        self.operator_context = operator_context
        self.director_notes: list[str] = []
        self.fallback = RuleCoordinator()

    def _system(self, prompt: str) -> str:
        """The judge's system prompt: role A also sees the operator's notes; role B only its prompt."""
        system = judging.SYSTEM.format(prompt=prompt, goal=self.goal or judging.NO_GOAL)
        if self.role == "A":
            notes = "\n".join(f"- {n}" for n in self.director_notes) or judging.NO_NOTES
            system += judging.OPERATOR.format(context=self.operator_context, notes=notes)
        return system

    def request(self, view: SceneView) -> Request:
        """The judge's request after a beat: the recent speech and the counters."""
        lines = "\n".join(view.recent_lines) or judging.NO_SPEECH_YET
        cast = judging.CAST.format(names=", ".join(view.cast)) if view.cast else ""
        if view.since_close_note is None:
            since = judging.NO_CLOSE_NOTE
        else:
            since = judging.SINCE_CLOSE_NOTE.format(lines="\n".join(view.since_close_note) or judging.NONE_YET)
        listed = "\n".join(f"- {e}" for e in view.suggested)
        suggested = judging.SUGGESTED.format(events=listed) if view.suggested else ""
        user = judging.DECISION.format(beat=view.beat, max_beats=view.max_beats, silent=view.silent_streak,
                                       cast=cast, lines=lines, since=since, suggested=suggested)
        return Request(to="judge", purpose="judge", system=self._system(judging.JUDGE_SYSTEM), beat=view.beat,
                       max_tokens=200, messages=[ChatMessage(role="user", content=user)])

    def verdict_request(self, view: SceneView) -> Request:
        """The judge's request at close: was the goal met?"""
        lines = "\n".join(view.recent_lines) or judging.NO_SPEECH
        user = judging.VERDICT.format(beat=view.beat, lines=lines)
        return Request(to="judge", purpose="judge", system=self._system(judging.VERDICT_SYSTEM), beat=view.beat,
                       max_tokens=200, messages=[ChatMessage(role="user", content=user)])

    async def verdict(self, view: SceneView, ask: Ask | None = None, warn: Warn | None = None) -> Verdict:
        """The judge's goal verdict with its one-line reason; an unusable answer falls back to role C's."""
        if not self.goal:
            return Verdict(None, NO_GOAL_VERDICT)
        try:
            if ask is None:
                raise ValueError("no way to ask the judge")
            answer = VerdictAnswer.model_validate(load_json(_json_object(await ask(self.verdict_request(view)))))
            return Verdict(answer.goal_achieved, " ".join(answer.reason.split())[:200] or "(no reason given)")
        except (ValueError, ValidationError, ProviderError) as exc:
            if warn:
                warn(f"judge verdict unusable, role C's goal markers used: {fault(exc)}")
            return marker_verdict(view)

    @staticmethod
    def parse(text: str) -> Decision:
        """Validate the judge's answer; raises ValueError when it is not one decision."""
        try:
            return Decision.model_validate(load_json(_json_object(text), object_pairs_hook=_once))
        except (ValueError, ValidationError) as exc:
            raise ValueError(f"invalid judge decision: {fault(exc)}") from exc

    async def decide(self, view: SceneView, ask: Ask | None = None, warn: Warn | None = None) -> Decision:
        """Ask the judge; on a malformed answer or a failed call, use role C's rules this once."""
        if ask is None:
            raise ValueError("an LLM judge needs a way to ask")
        try:
            return self.parse(await ask(self.request(view)))
        except (ValueError, ProviderError) as exc:
            if warn:
                warn(f"judge decision unusable, role C rules used for beat {view.beat}: {exc}")
            return await self.fallback.decide(view)


def fault(exc: BaseException) -> str:
    """What was wrong with a judge's answer, in one line: a schema error by field
    (`goal_achieved: Field required`), without pydantic's echo of the answer and its documentation link."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(part) for part in error['loc']) or 'the answer'}: {error['msg']}"
                         for error in exc.errors())
    return str(exc)


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object from its pairs; ValueError when a key is given twice (`"decision": "continue"` then
    `"decision": "close"`: JSON keeps the last silently, and which the judge meant cannot be told)."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        raise ValueError(f"the key {next(k for k, _ in pairs if k in seen or seen.add(k))[:40]!r} is given twice")
    return data


def _json_object(text: str) -> str:
    """The outermost `{…}` in a judge's answer (from its first `{` to its last `}`, found in linear
    time) after a reasoning model's `<think>…</think>` preamble (`without_reasoning`: a draft decision
    inside it is never read); raises ValueError when there is none."""
    answer = without_reasoning(text)
    start, end = answer.find("{"), answer.rfind("}")
    if (start < 0 or end < start) and len(answer) < len(text.strip()) and not answer.strip():
        raise ValueError("no JSON object in the judge's answer: it is all reasoning (`<think>`), cut off or never "
                         "answered; a reasoning model needs more than a judge's 200 tokens: play the judge on a model "
                         "that does not reason, or serve it with its reasoning off")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the judge's answer")
    text = answer
    return text[start:end + 1]
