"""Preparing a session for the roundtable format (its `prepare` hook, called by `promptdesk.core.casting.build.build_session`).

The strategy is loaded here so that a missing or broken strategy file fails before anything runs.
The coordinator role decides how the facilitator is played: A - an LLM facilitator that also sees
the operator's context (`notes.md`, the scene's coordinator notes); B - an LLM facilitator with only
its own prompt; C - pure code: the deterministic rule-based facilitator (questions from the
strategy's phases, synthesis by comparing positions), never an LLM. Escalation triggers and limits
are code in every role.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from promptdesk import resources
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.formats.roundtable.calls import TableSetup
from promptdesk.core.formats.roundtable.flags import HEADLESS_CHOICES
from promptdesk.core.formats.roundtable.prompts import facilitator_system
from promptdesk.core.formats.roundtable.strategies import Strategy, load_strategy, search_dirs
from promptdesk.core.engine.format import Setup
from promptdesk.core.engine.scene import Scene
from promptdesk.core.formats.roundtable.settings import settings
from promptdesk.core.formats.roundtable.table import Table
from promptdesk.core.providers.spec import ProviderSpec

if TYPE_CHECKING:
    from promptdesk.core.engine.session import Session

RULE_BASED = "rule-based facilitator (pure code, the offline improviser's facilitator)"


def facilitator_spec(scene: Scene, setup: Setup) -> ProviderSpec:
    """`roundtable.facilitator`, else the scene's judge or provider; flags override as for every call."""
    table = settings(scene)
    if table.facilitator is None:
        return setup.spec_for(scene, None)
    return setup.spec_for(scene.model_copy(update={"judge": table.facilitator}), None)


def prepare(session: Session, setup: Setup) -> None:
    """Attach the strategy, the facilitator and the headless escalation policy; note them in notes.md.

    Role A's facilitator sees notes.md but never the coordinator notes: it writes the questions the
    participants read, so anything it sees could reach them."""
    scene, options, role = session.scene, setup.options, setup.role
    table = settings(scene)
    on_escalate = getattr(options, "on_escalate", None)
    if on_escalate is not None and on_escalate not in HEADLESS_CHOICES:
        raise InvalidConfig(f"--on-escalate must be one of {', '.join(HEADLESS_CHOICES)}, not {on_escalate!r}")
    try:
        strategy = load_strategy(table.strategy, search_dirs(table.strategies_dirs, setup.cwd, scene.folder))
    except InvalidConfig as exc:
        if exc.context.get("file"):
            raise
        where, line = _strategy_key(scene)
        raise InvalidConfig(f"{where}: roundtable.strategy: {exc.message}", file=scene.file_name, line=line) from None
    strategy.check_speakers(list(session.actors))
    participation = _participation(session, table, strategy)
    whose = " (the strategy's)" if participation != table.participation else ""
    spec = facilitator_spec(scene, setup) if role != "C" else ProviderSpec(name="offline")
    session.format_state = Table(TableSetup(
        strategy=strategy, facilitator=setup.pool.get(spec),
        facilitator_system=facilitator_system(session.notes if role == "A" else ""),
        facilitator_timeout_s=spec.turn_timeout_s, on_escalate=on_escalate,
        headless=bool(getattr(options, "headless", False)), participation=participation))
    played_by = RULE_BASED if role == "C" else f"provider {spec.name}, model {spec.model or 'default'}"
    if role == "C" and table.facilitator is not None:  # a model the scene names, never called: say so
        named = table.facilitator.name + (f":{table.facilitator.model}" if table.facilitator.model else "")
        unused = (f"roundtable.facilitator ({named}) unused: coordinator role C plays the facilitator in pure code; "
                  f"choose role A or B to have that model facilitate")
        session.notices.append(unused)
        session.notes += f"- {unused}\n"
    session.notes += (f"- Roundtable: strategy {strategy.name}{strategy_origin(strategy)} "
                      f"({', '.join(p.name for p in strategy.phases)}), "
                      f"participation {participation}{whose}, "
                      f"max {table.max_rounds} rounds\n"
                      f"- Facilitator: {played_by}\n"
                      f"- On escalation: {on_escalate or ('conclude (batch, no --on-escalate)' if options.headless else 'ask the operator')}\n")
    session.start_info["roundtable"] = {"topic": table.topic, "strategy": strategy.name,
                                        "participation": participation, "facilitator": played_by}


def _participation(session: Session, table, strategy: Strategy) -> str:
    """The scene's `roundtable.participation` when it writes one, else the strategy's (spec 002: a strategy
    that builds on each answer is sequential), else parallel; the run's turns (notes.md, the `start`
    event, metadata.json) follow it."""
    chosen = participation_of(table, strategy)
    scene = session.scene
    if chosen != scene.turns:
        session.notes = session.notes.replace(f"({scene.format}, {scene.turns} turns)", f"({scene.format}, {chosen} turns)", 1)
        scene.turns = session.state.turns_mode = chosen
        session.start_info.get("scene", {})["turns"] = chosen
    return chosen


def participation_of(table, strategy: Strategy | None) -> str:
    """How the table answers: the scene's `roundtable.participation` when it writes one, else the strategy's."""
    if "participation" in table.model_fields_set or strategy is None or strategy.participation is None:
        return table.participation
    return strategy.participation


def scene_participation(scene: Scene, cwd: Path | None = None) -> str:
    """`participation_of` for a scene not yet built (the console's summary): its strategy read as a run
    reads it, or the scene's own setting when that strategy cannot be read (the run will say why)."""
    table = settings(scene)
    try:
        strategy = load_strategy(table.strategy, search_dirs(table.strategies_dirs, cwd, scene.folder))
    except InvalidConfig:
        strategy = None
    return participation_of(table, strategy)


def _strategy_key(scene: Scene) -> tuple[str, int | None]:
    """`file:line` of the scene file's `roundtable.strategy` (the file alone when its line cannot be found;
    `scene NAME` for a scene built in code)."""
    if not scene.file_name or scene.folder is None:
        return f"scene {scene.name}", None
    path = scene.folder / scene.file_name
    try:
        node = yaml.compose(path.read_text(encoding="utf-8-sig"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return str(path), None
    line = None
    for key in ("roundtable", "strategy"):
        if not isinstance(node, yaml.MappingNode):
            return str(path), None
        node, line = next(((v, k.start_mark.line + 1) for k, v in node.value
                           if isinstance(k, yaml.ScalarNode) and k.value == key), (None, None))
    return (f"{path}:{line}", line) if line else (str(path), None)


def strategy_origin(strategy: Strategy) -> str:
    """Where a strategy was read from, when it is not a shipped one (` from strategies/disney.yaml`): a
    file of yours that shadows a shipped name is then told apart from it in the record."""
    source = Path(strategy.source) if strategy.source else None
    if source is None or source.parent.resolve() == resources.strategies_dir().resolve():
        return ""
    try:  # as you would type it from where you ran the scene (role A's facilitator reads notes.md)
        return f" from {source.resolve().relative_to(Path.cwd().resolve())}"
    except (OSError, ValueError):
        return f" from {source}"
