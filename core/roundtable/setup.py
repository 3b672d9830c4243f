"""Preparing a session for the roundtable format (called by `core.setup.build_session`).

The strategy is loaded here so that a missing or broken strategy file fails before anything runs.
The coordinator role decides how the facilitator is played: A - an LLM facilitator that also sees
the operator's context (`notes.md`, the scene's coordinator notes); B - an LLM facilitator with only
its own prompt; C - pure code: the deterministic rule-based facilitator (questions from the
strategy's phases, synthesis by comparing positions), never an LLM. Escalation triggers and limits
are code in every role.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import InvalidConfig
from core.roundtable.calls import TableSetup
from core.roundtable.escalation import HEADLESS_CHOICES
from core.roundtable.prompts import facilitator_system
from core.roundtable.strategies import load_strategy, search_dirs
from core.scenes import ProviderSpec, Scene

if TYPE_CHECKING:
    from core.session import Session

RULE_BASED = "rule-based facilitator (pure code, the offline improviser's facilitator)"


def facilitator_spec(scene: Scene, options: Any) -> ProviderSpec:
    """`roundtable.facilitator`, else the scene's judge or provider; flags override as for every call."""
    from core.setup import provider_spec

    table = scene.table
    if table.facilitator is None:
        return provider_spec(scene, None, options)
    return provider_spec(scene.model_copy(update={"judge": table.facilitator}), None, options)


def prepare(session: Session, scene: Scene, options: Any, pool: Any, role: str, cwd: Path) -> None:
    """Attach the strategy, the facilitator and the headless escalation policy; note them in notes.md.

    Role A's facilitator sees notes.md but never the coordinator notes: it writes the questions the
    participants read, so anything it sees could reach them."""
    from core.setup import turn_timeout

    on_escalate = getattr(options, "on_escalate", None)
    if on_escalate is not None and on_escalate not in HEADLESS_CHOICES:
        raise InvalidConfig(f"--on-escalate must be one of {', '.join(HEADLESS_CHOICES)}, not {on_escalate!r}")
    strategy = load_strategy(scene.table.strategy, search_dirs(scene.table.strategies_dirs, cwd))
    spec = facilitator_spec(scene, options) if role != "C" else ProviderSpec(name="offline")
    session.roundtable_setup = TableSetup(
        strategy=strategy, facilitator=pool.get(spec),
        facilitator_system=facilitator_system(session.notes if role == "A" else ""),
        facilitator_timeout_s=turn_timeout(spec), on_escalate=on_escalate,
        headless=bool(getattr(options, "headless", False)))
    played_by = RULE_BASED if role == "C" else f"provider {spec.name}, model {spec.model or 'default'}"
    session.notes += (f"- Roundtable: strategy {strategy.name} ({', '.join(p.name for p in strategy.phases)}), "
                      f"participation {scene.table.participation}, max {scene.table.max_rounds} rounds\n"
                      f"- Facilitator: {played_by}\n"
                      f"- On escalation: {on_escalate or ('conclude (batch, no --on-escalate)' if options.headless else 'ask the operator')}\n")
    session.start_info["roundtable"] = {"topic": scene.table.topic, "strategy": strategy.name,
                                        "participation": scene.table.participation, "facilitator": played_by}


def participant_briefing(character: Any, scene: Scene, names: list[str]) -> str:
    """The `_briefer` of the roundtable format: a participant's own profile and the answer format."""
    from core.roundtable.prompts import participant_system

    return participant_system(character)
