"""The coordinator's judgment: is the scene over? It returns decisions, never dialogue.

Role C is `RuleCoordinator` (conservative close words and exit actions). Roles A and B are
`JudgeCoordinator`, an LLM judge asked for one JSON decision; a malformed answer falls back to
role C's rules for that check and is logged. Mechanical limits live in `core.limits`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ValidationError

from core.errors import ProviderError
from core.events import SpeakEvent
from core.providers.base import ChatMessage, Request

Ask = Callable[[Request], Awaitable[str]]
"""How a coordinator calls its judge: the session sends, records and prices the request."""
Warn = Callable[[str], None]

CLOSE_WORDS = re.compile(
    r"\b(thank you (both|all)|i'?ll let you go|i should (head out|get going|be going|let you get on)"
    r"|i'?d better (go|get going|be going)|safe travels|goodbye)\b", re.IGNORECASE)
EXIT_ACTIONS = re.compile(
    r"\b(leaves|walks out|heads (for|out|to) the door|puts on (his|her|their) coat|stands to leave"
    r"|exits|picks up (his|her|their) (coat|bag|keys) and (goes|leaves))\b", re.IGNORECASE)


class Decision(BaseModel):
    """One coordinator decision: continue, close(reason), nudge(actor), suggest_event(text)."""

    decision: Literal["continue", "close", "nudge", "suggest_event"]
    reason: str | None = None
    actor: str | None = None
    text: str | None = None
    goal_achieved: bool = False


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


def closes_naturally(speech: SpeakEvent) -> bool:
    """Close words in the words, or an exit action in the gesture (erring toward continuing)."""
    if speech.action == "silent" and not speech.nonverbal:
        return False
    return bool(CLOSE_WORDS.search(speech.text or "") or EXIT_ACTIONS.search(speech.nonverbal or "")
                or EXIT_ACTIONS.search(_stage_directions(speech.raw or "")))


def _stage_directions(raw: str) -> str:
    """The `*…*` stage directions inside a raw speech."""
    return " ".join(re.findall(r"\*([^*]+)\*", raw))


class RuleCoordinator:
    """Role C: pure code, no LLM. Deterministic and free of routing bias."""

    role = "C"

    async def decide(self, view: SceneView, ask: Ask | None = None, warn: Warn | None = None) -> Decision:
        for speech in view.new_speech:
            if closes_naturally(speech):
                return Decision(decision="close", reason="natural", goal_achieved=True,
                                text=f"close words from {speech.from_}")
        return CONTINUE


JUDGE_SYSTEM = """\
You are the coordinator of a scene played by separate actors. You never write dialogue, stage
directions or summaries. You only decide, after each beat, one of:
- continue: the scene should go on
- close: the scene has reached a natural end (reason: "natural"); set goal_achieved if the goal was met
- nudge: an actor should be told the end is approaching (actor: their name)
- suggest_event: the scene is stuck; propose a short world event for the operator (text)
Err toward letting the scene continue. Answer with one JSON object only:
{"decision": "...", "reason": "...", "actor": null, "text": null, "goal_achieved": false}"""


class JudgeCoordinator:
    """Roles A and B: an LLM judge behind the same `decide` interface as role C."""

    def __init__(self, role: Literal["A", "B"], *, goal: str, operator_context: str = "") -> None:
        self.role = role
        self.goal = goal
        self.operator_context = operator_context
        self.director_notes: list[str] = []
        self.fallback = RuleCoordinator()

    def request(self, view: SceneView) -> Request:
        """The judge's request: role A also sees the operator's notes; role B sees only speech."""
        system = f"{JUDGE_SYSTEM}\n\nScene goal: {self.goal or '(none given)'}"
        if self.role == "A":
            notes = "\n".join(f"- {n}" for n in self.director_notes) or "(none)"
            system += f"\n\n## Operator context (notes.md)\n\n{self.operator_context}\n\n## Director's notes\n\n{notes}"
        lines = "\n".join(view.recent_lines) or "(no speech yet)"
        user = (f"Beat {view.beat} of at most {view.max_beats}. Silent beats in a row: {view.silent_streak}.\n\n"
                f"SPEECH SO FAR:\n{lines}\n\nYour decision, as JSON only:")
        return Request(to="judge", purpose="judge", system=system, beat=view.beat, max_tokens=200,
                       messages=[ChatMessage(role="user", content=user)])

    @staticmethod
    def parse(text: str) -> Decision:
        """Validate the judge's answer; raises ValueError when it is not one decision."""
        match = re.search(r"\{.*\}", text, re.DOTALL)
        if not match:
            raise ValueError("no JSON object in the judge's answer")
        try:
            return Decision.model_validate(json.loads(match.group(0)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise ValueError(f"invalid judge decision: {exc}") from exc

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
