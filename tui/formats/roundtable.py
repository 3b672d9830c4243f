"""The roundtable format's console side (spec 002): its lines, its panel rows, and its escalation.

The facilitator's questions, the participants' answers and the synthesis read as transcript lines;
the panel shows the round and phase, the latest synthesis's counts and whether answers are blind.
When the roundtable escalates, the stage opens `promptdesk.tui.formats.escalation_modal` and the operator's
answer goes back through the session's `answer_escalation` control.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from promptdesk.core.record.events import BaseEvent
from promptdesk.tui.formats.base import Choice, ConsoleFormat, Direct, LineMaker, Row, extra, marker_line, tagged
from promptdesk.tui.formats.escalation_modal import EscalationAnswer, EscalationModal
from promptdesk.tui.lines import Cast, Line, Piece, safe
from promptdesk.tui.snapshot import StageState


def _question(event: BaseEvent, cast: Cast) -> Line:
    return Line.of(("Facilitator asks: ", "note"), (safe(event.text), "note"))


def _answer(event: BaseEvent, cast: Cast) -> Line:
    confidence = extra(event, "confidence")
    sure = f" (confidence {confidence:.2f})" if isinstance(confidence, (int, float)) else ""
    why = safe(extra(event, "rationale") or "")
    return Line.of((cast.name(event.from_), cast.role(event.from_)), (f'  "{safe(event.text)}"', "speech"),
                   (sure, "tone"), (f" — {why}" if why else "", "muted"))


def _conflict(item: Any) -> str:
    return safe(item.get("topic") if isinstance(item, dict) else item)


def _listed(label: str, items: Any, show: Callable[[Any], str] = safe) -> list[Piece]:
    values = [show(x) for x in items] if isinstance(items, list) else []
    values = [v for v in values if v]
    return [(f" · {label}: ", "muted"), ("; ".join(values) if values else "none", "note")]


def _synthesis(event: BaseEvent, cast: Cast) -> Line:
    """The facilitator's synthesis: its text, consensus, open conflicts, next action, recommendation."""
    rnd = extra(event, "round")
    head = f"Synthesis (round {rnd}): " if isinstance(rnd, int) else "Synthesis: "
    pieces: list[Piece] = [(head, "note"), (safe(event.text), "note")]
    pieces += _listed("consensus", extra(event, "consensus"))
    pieces += _listed("open conflicts", extra(event, "conflicts"), _conflict)
    if extra(event, "next_action"):
        pieces.append((f" · next: {safe(extra(event, 'next_action'))}", "muted"))
    if extra(event, "recommendation"):
        pieces += [(" · recommendation: ", "muted"), (safe(extra(event, "recommendation")), "note")]
    return Line.of(*pieces)


def _decision(event: BaseEvent, cast: Cast) -> Line:
    who = "Your decision" if event.from_ == "operator" else "Coordinator"
    return Line.of((f"{who}: ", "note" if event.from_ == "operator" else "muted"), (safe(event.text), "muted"))


def _count(facts: dict[str, Any], key: str, count_key: str) -> int:
    """The synthesis's own count when it gives one, else the length of its list."""
    given = facts.get(count_key)
    if isinstance(given, int):
        return given
    items = facts.get(key)
    return len(items) if isinstance(items, list) else 0


class RoundtableFormat(ConsoleFormat):
    """A facilitator asks, participants answer (blind, unless sequential), the facilitator synthesises."""

    name: ClassVar[str] = "roundtable"
    noun: ClassVar[str] = "roundtable"
    choices: ClassVar[tuple[Choice, ...]] = (Choice("roundtable", "Roundtable", 3),)
    lines: ClassVar[Mapping[str, LineMaker]] = {
        "question": _question, "answer": _answer, "synthesis": _synthesis, "decision": _decision,
        "round": marker_line, "phase": marker_line, "escalate": tagged("⚠ Escalation: ", "system"),
    }
    markers: ClassVar[frozenset[str]] = frozenset({"round"})
    control_events: ClassVar[frozenset[str]] = frozenset({"escalate", "decision"})
    asks_on: ClassVar[frozenset[str]] = frozenset({"escalate"})
    ask_help: ClassVar[str] = "Answer the roundtable's escalation (it waits for your decision)"
    has_thinking: ClassVar[bool] = False
    """Participants answer in the open: no private thinking to show."""
    counts_silences: ClassVar[bool] = False

    # -- the session panel ---------------------------------------------------------------------

    def fold(self, state: StageState, event: BaseEvent) -> None:
        """The round and phase under way, the latest synthesis's counts, and answers no longer blind."""
        facts = event.model_extra or {}
        if isinstance(facts.get("round"), int) and event.type in ("round", "phase", "question"):
            state.round = facts["round"]
        if isinstance(facts.get("phase"), str):
            state.phase = facts["phase"]
        if event.type == "answer" and event.from_:
            state.answers = dict(state.answers or {})
            state.answers[event.from_] = state.answers.get(event.from_, 0) + 1
        if event.type == "synthesis":
            state.consensus_count = _count(facts, "consensus", "consensus_count")
            state.conflict_count = _count(facts, "conflicts", "conflict_count")
        if event.type == "system" and getattr(event, "reason", None) == "not-blind":
            state.blind = False

    def live_facts(self, state: Any) -> dict[str, Any]:
        """Answers are blind unless participation is sequential."""
        return {"blind": state.turns_mode != "sequential"}

    def progress_row(self, state: StageState) -> Row:
        """The round, and the phase under way."""
        return Row("Round", f"{state.round or 0}" + (f" · {safe(state.phase)}" if state.phase else ""))

    def rows(self, state: StageState) -> list[Row]:
        """Phase, consensus and conflict counts, and whether answers are blind."""
        blind = state.blind is not False
        return [Row("Phase", safe(state.phase) if state.phase else "—"),
                Row("Consensus", str(state.consensus_count or 0)),
                Row("Conflicts", str(state.conflict_count or 0), "bold" if state.conflict_count else ""),
                Row("Answers", "blind (parallel)" if blind else "not blind (sequential)", "" if blind else "bold")]

    def turn_counts(self, state: StageState) -> tuple[str, Mapping[str, int]]:
        """Participants answer questions: the panel counts their answers."""
        return "Answers given", state.answers or {}

    # -- the escalation ------------------------------------------------------------------------

    def waiting(self, format_state: Any) -> dict[str, Any] | None:
        """The open escalation's details, while it waits for the operator."""
        desk = getattr(format_state, "desk", None)
        return desk.current if desk is not None and desk.is_open else None

    def dialog(self, details: dict[str, Any]) -> EscalationModal:
        """Every position, the facilitator's recommendation, and the operator's three answers."""
        return EscalationModal(details)

    def is_dialog(self, screen: Any) -> bool:
        return isinstance(screen, EscalationModal)

    def answer(self, direct: Direct, answer: EscalationAnswer) -> None:
        """accept | own (with its text) | continue; raises `ValueError` when the engine refuses it."""
        direct("answer_escalation", decision=answer.decision, text=answer.text)

    # -- the wizard ----------------------------------------------------------------------------

    def topic(self, scene: Any) -> str:
        """The roundtable's topic."""
        from promptdesk.core.formats.roundtable.settings import settings

        return settings(scene).topic

    def wizard_fields(self, key: str) -> tuple[str, ...]:
        """A roundtable is bounded by its rounds (its `roundtable:` section), not by beats."""
        return ("seed",)

    def bound(self, scene: Any) -> str:
        """A roundtable runs in rounds, not beats."""
        from promptdesk.core.formats.roundtable.settings import settings

        return f"at most {settings(scene).max_rounds} rounds"

    def summary_rows(self, scene: Any) -> list[tuple[str, str]]:
        """The topic, the strategy (and how participants answer), and the round cap."""
        from promptdesk.core.formats.roundtable.settings import settings

        from promptdesk.core.formats.roundtable.setup import scene_participation

        table = settings(scene)
        return [("Topic", table.topic or scene.prompt or scene.goal or "—"),
                ("Strategy", f"{table.strategy} ({scene_participation(scene)} answers)"),
                ("Rounds", f"at most {table.max_rounds}")]

    def fill(self, data: dict[str, Any], scene: Any, key: str, goal: str) -> None:
        """The goal becomes the topic."""
        data[self.name] = {"topic": goal}
