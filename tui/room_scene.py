"""The scene a room command runs: a `collaborate` scene built in code from the stage's own scene.

The provider (and any per-participant override) is the base scene's; the limits are the new
scene's own (the `collaborate` defaults, or 1 round for a single call), never the stage's it was
started from. Validation is the engine's (`scene_from_dict`).
"""

from __future__ import annotations

from core.scenes import Scene, scene_from_dict
from tui.room_commands import RoomCommand


def room_scene(command: RoomCommand, base: Scene) -> Scene:
    """A validated `format: collaborate` scene for `command` (raises the engine's `InvalidConfig`)."""
    first = command.participants[0]
    who = " + ".join(command.participants)
    cast = {slug: spec.model_dump(exclude_none=True) for slug, spec in base.cast.items()
            if slug in command.participants}
    return scene_from_dict({
        "name": "single-call" if command.single else "collaboration",
        "title": f"Single call: @{first}" if command.single else f"Collaboration: {who}",
        "format": "collaborate", "goal": command.goal, "characters": list(command.participants), "cast": cast,
        "collaborate": {"first": first, **({"max_rounds": command.max_rounds} if command.max_rounds else {})},
        "provider": base.provider.model_dump(exclude_none=True)}, source="the room")
