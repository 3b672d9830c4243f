"""A Sotopia agent as a Promptdesk character: `<slug>/profile.md`.

The profile holds what Sotopia's runner tells the agent of itself (`relationship`): its background (name,
age, gender, occupation, pronouns, public information), its personality and values, and its secret, under
`## Secret`, the one section the engine treats as the character's secret: private to it (the audit names a
leak of it as one), shown to the evaluator. The fields Sotopia keeps but never puts in an agent's prompt
(Big Five, moral values, Schwartz values, decision-making style) are kept in the front matter with the
agent's pk, so nothing is lost, and no briefing carries them. A line of a field that would read as a
Markdown heading is escaped (`literal`): markup stays text. Every text passes the same gate as any
imported character (`promptdesk.core.characters.importers.model.admitted`: the display name, control
sequences).
"""

from __future__ import annotations


from promptdesk.core.characters.importers.model import Imported, admitted, literal
from promptdesk.core.experiments.sotopia.export import Agent
from promptdesk.core.experiments.sotopia.relationship import identity, kind_of

SECRET_HEADING = "Secret"
"""The profile section the engine reads as the character's secret (`promptdesk.core.protocol.evaluation.secret_of`)."""


def character_of(agent: Agent, key: str, source: str) -> Imported:
    """The character an agent plays; `ImportProblem` (naming `key`) when its name fails the gate."""
    sections = [("Background", literal(identity(agent))), ("Personality and values", literal(agent.personality)),
                (SECRET_HEADING, literal(agent.secret))]
    front: dict[str, object] = {"source": f"sotopia AgentProfile {agent.pk} from {source}"}
    for label, value in (("age", str(agent.age or "")), ("gender", agent.gender), ("pronouns", agent.pronoun),
                         ("occupation", agent.occupation), ("big_five", agent.big_five),
                         ("moral_values", list(agent.moral_values)), ("schwartz_values", list(agent.schwartz_values)),
                         ("decision_making_style", agent.decision_style)):
        if value:
            front[label] = value
    imported = Imported(name=agent.name, source="sotopia", role=agent.occupation, description=kind_of(agent),
                        sections=[(h, b) for h, b in sections if b], front=front)
    return admitted(imported, key)
