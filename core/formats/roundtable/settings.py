"""The `roundtable:` section of a scene file (spec 002): its settings and their rules."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from pydantic_core import PydanticCustomError

from promptdesk.core.engine.scene import Scene
from promptdesk.core.engine.scene_parts import SceneModel, Slug
from promptdesk.core.providers.spec import ProviderSpec


Count = Annotated[int, Field(gt=0, strict=True)]
"""A whole number above 0, written as one: `true` (YAML's `yes`, `on`) or `2.5` is refused, never read as 1 or 2."""


class Roundtable(SceneModel):
    """Settings of the `roundtable` format (spec 002): the topic, the strategy and its phases, blind or
    sequential participation, the limits, the escalation triggers and the facilitator's provider."""

    topic: str = ""
    """The question the table discusses; unset: the scene's `prompt` or `goal`."""
    strategy: Slug = "free"
    """The strategy's name: `free`, `debate`, `disney`, `six-hats` or one of your own (`strategies/<name>.yaml`)."""
    strategies_dirs: list[str] = Field(default_factory=list)
    """More folders to look for strategy files in, first (relative to the working folder)."""
    participation: Literal["parallel", "sequential"] = "parallel"
    """`parallel`: participants answer blind, each unaware of the others' answers; `sequential`:
    each sees the answers before theirs (recorded as not blind)."""
    max_rounds: Count = 20
    """The most rounds the table may take before it concludes."""
    max_rounds_per_conflict: Count = 3
    """Rounds one disagreement may last before the facilitator escalates it to you."""
    confidence_threshold: float = Field(0.3, ge=0.0, le=1.0, strict=True)
    """A participant's stated confidence under this counts as doubt the facilitator follows up."""
    critical_keywords: list[str] = Field(default_factory=lambda: ["security", "legal", "blocking", "must-have"])
    """Words that make an answer critical: the facilitator escalates when one appears."""
    facilitator: ProviderSpec | None = None
    """The facilitator's provider (roles A and B); unset: the scene's `judge`, else its `provider`."""
    context: str = ""
    """Background the facilitator and every participant are given with the topic."""


def settings(scene: Scene) -> Roundtable:
    """The roundtable settings of `scene`, defaults filled in."""
    return scene.section("roundtable") or Roundtable()


def check(scene: Scene) -> None:
    """A roundtable needs a topic (or a prompt or goal). Its turns are its participation: the scene's
    `turns` (recorded in `notes.md`, the `start` event and `metadata.json`) is set from it, whatever a
    scene turned into a roundtable (the console's wizard) had."""
    table = settings(scene)
    if "all" in scene.characters:
        raise PydanticCustomError("kept", "'all' is the word a roundtable keeps for every participant (a question "
                                  "for `all`, a phase whose speakers are `all`): list the participant under "
                                  "another name (e.g. 'all-1')", {"key": "characters"})
    if not (table.topic or scene.prompt or scene.goal).strip():
        raise PydanticCustomError("missing", "a roundtable needs `roundtable.topic` (or a `prompt` or `goal`)",
                                  {"key": "roundtable"})
    scene.turns = table.participation
