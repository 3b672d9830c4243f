"""The formats the wizard offers, and a scene file turned into another one (pure; the engine validates).

Single call is a one-participant `collaborate` scene with `max_rounds` 1. Turning a scene into a
format keeps its cast (the first one or two for single call and collaborate), its provider and its
goal (or prompt, or roundtable topic); the engine's own validation says what does not fit.
"""

from __future__ import annotations

from typing import Any

from core.scenes import Scene, scene_from_dict

FORMATS = (("single", "Single call"), ("collaborate", "Collaborate"), ("scene", "Scene"),
           ("roundtable", "Roundtable"))
"""(key, label) of every format the wizard offers, in the order shown."""


def format_of(scene: Scene) -> str:
    """The wizard's format key for a scene file (a one-round, one-participant collaboration is a single call)."""
    if scene.format == "collaborate" and len(scene.characters) == 1 and scene.collab.max_rounds == 1:
        return "single"
    return scene.format


def as_format(scene: Scene, key: str) -> Scene:
    """`scene` as format `key` (unchanged when it already is); raises the engine's `InvalidConfig`."""
    if key == format_of(scene):
        return scene
    goal = scene.goal or scene.prompt or scene.table.topic or scene.setting
    data: dict[str, Any] = scene.model_dump(exclude_none=True, exclude={"collaborate", "roundtable", "initial_speaker"})
    data.update(goal=goal, format="scene" if key == "scene" else ("roundtable" if key == "roundtable" else "collaborate"))
    if key in ("single", "collaborate"):
        data["characters"] = scene.characters[:1] if key == "single" else scene.characters[:2]
        data["cast"] = {k: v for k, v in data.get("cast", {}).items() if k in data["characters"]}
        data["perspectives"] = {k: v for k, v in data.get("perspectives", {}).items() if k in data["characters"]}
        data["collaborate"] = {"max_rounds": 1 if key == "single" else scene.collab.max_rounds}
    elif key == "roundtable":
        data["roundtable"] = {"topic": goal}
    return scene_from_dict(data, source=f"{scene.name} as {key}")
