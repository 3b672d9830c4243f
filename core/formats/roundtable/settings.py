"""The `roundtable:` section of a scene file (spec 002): its settings and their rules."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt
from pydantic_core import PydanticCustomError

from promptdesk.core.engine.scene import Scene, SceneModel, Slug
from promptdesk.core.providers.spec import ProviderSpec


class Roundtable(SceneModel):
    """Settings of the `roundtable` format (spec 002): the topic, the strategy and its phases, blind or
    sequential participation, the limits, the escalation triggers and the facilitator's provider."""

    topic: str = ""
    strategy: Slug = "free"
    strategies_dirs: list[str] = Field(default_factory=list)
    participation: Literal["parallel", "sequential"] = "parallel"
    max_rounds: PositiveInt = 20
    max_rounds_per_conflict: PositiveInt = 3
    confidence_threshold: float = Field(0.3, ge=0.0, le=1.0)
    critical_keywords: list[str] = Field(default_factory=lambda: ["security", "legal", "blocking", "must-have"])
    facilitator: ProviderSpec | None = None
    context: str = ""


def settings(scene: Scene) -> Roundtable:
    """The roundtable settings of `scene`, defaults filled in."""
    return scene.section("roundtable") or Roundtable()


def check(scene: Scene) -> None:
    """A roundtable needs a topic (or a prompt or goal)."""
    if not (settings(scene).topic or scene.prompt or scene.goal).strip():
        raise PydanticCustomError("missing", "a roundtable needs `roundtable.topic` (or a `prompt` or `goal`)",
                                  {"key": "roundtable"})
