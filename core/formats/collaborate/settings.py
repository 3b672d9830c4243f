"""The `collaborate:` section of a scene file (spec 001): its settings and their rules."""

from __future__ import annotations

from pydantic import PositiveInt
from pydantic_core import PydanticCustomError

from promptdesk.core.engine.scene import Scene
from promptdesk.core.engine.scene_parts import SceneModel, Slug


class Collaborate(SceneModel):
    """Settings of the `collaborate` format (spec 001): the round cap, who speaks first, the session id
    and the transcript window passed to each call. `first` overrides `initial_speaker`."""

    max_rounds: PositiveInt = 6
    """The round cap: the collaboration ends after this many turns in all (`--max-rounds` wins)."""
    first: Slug | None = None
    """The participant who speaks first (`--first` wins); unset: the first of `characters`."""
    session_id: str | None = None
    """A name for the collaboration, recorded with it; unset: made from the run."""
    window_items: PositiveInt = 8
    """The most recent messages each call carries."""
    window_tokens: PositiveInt = 2500
    """About how many tokens of recent messages each call carries at most."""


def settings(scene: Scene) -> Collaborate:
    """The collaboration settings of `scene`, defaults filled in."""
    return scene.section("collaborate") or Collaborate()


def check(scene: Scene) -> None:
    """Its first speaker is a participant, and becomes the scene's `initial_speaker`. (The goal is
    checked when a collaboration is built to run: see `promptdesk.core.formats.collaborate.personas`.)"""
    first = settings(scene).first
    if first is not None:
        if first not in scene.characters:
            raise PydanticCustomError("not_in_cast", "collaborate.first '{slug}' is not in characters ({cast})",
                                      {"slug": first, "cast": ", ".join(scene.characters), "key": "collaborate"})
        scene.initial_speaker = first
