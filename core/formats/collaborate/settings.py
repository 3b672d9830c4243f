"""The `collaborate:` section of a scene file (spec 001): its settings and their rules."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic_core import PydanticCustomError

from promptdesk.core.engine.scene import Scene
from promptdesk.core.engine.scene_parts import SceneModel, Slug


Count = Annotated[int, Field(gt=0, strict=True)]
"""A whole number above 0, written as one: `true` (YAML's `yes`, `on`) or `2.5` is refused, never read as 1 or 2."""


class Collaborate(SceneModel):
    """Settings of the `collaborate` format (spec 001): the round cap, who speaks first, the session id
    and the transcript window passed to each call. `first` overrides `initial_speaker`."""

    max_rounds: Count = 6
    """The round cap: the collaboration ends after this many turns in all (`--max-rounds` wins)."""
    first: Slug | None = None
    """The participant who speaks first (`--first` wins); unset: the first of `characters`."""
    session_id: str | None = None
    """A name for the collaboration, recorded with it; unset: made from the run."""
    window_items: Count = 8
    """The most recent messages each call carries."""
    window_tokens: Count = 2500
    """About how many tokens of recent messages each call carries at most."""


def settings(scene: Scene) -> Collaborate:
    """The collaboration settings of `scene`, defaults filled in."""
    return scene.section("collaborate") or Collaborate()


KEPT = ("router", "you", "user", "all")
"""Spec 001's own parties: the router, the human (`you`, the transcript's `user`) and `all`, the
audience of a reply that hands off to no one. A participant listed under one would be taken for it."""


def check(scene: Scene) -> None:
    """A collaboration has a goal (spec 001: the user's original request), two participants or one
    for a single call (one round), and takes one turn at a
    time (its `turns` is `sequential`, whatever a scene turned into a collaboration had); its first speaker is a participant, and becomes the scene's
    `initial_speaker`."""
    for slug in scene.characters:
        if slug in KEPT:
            raise PydanticCustomError("kept", "'{slug}' is a name a collaboration keeps for itself ({kept}): the "
                                      "record would take the participant for spec 001's own {slug}; list it under "
                                      "another name (e.g. '{slug}-1')",
                                      {"slug": slug, "kept": ", ".join(KEPT), "key": "characters"})
    if len(scene.characters) == 1 and settings(scene).max_rounds != 1:
        raise PydanticCustomError("single", "one participant alone is a single call, one call and one reply: set "
                                  "collaborate.max_rounds: 1 (--max-rounds 1), or add a second participant to hand "
                                  "the work to (it would otherwise hand it to itself for {rounds} rounds)",
                                  {"rounds": settings(scene).max_rounds, "key": "characters"})
    if not scene.goal.strip():
        raise PydanticCustomError("missing", "a collaboration needs a `goal`: the task the two assistants work on "
                                  "(or run it with --collaborate GOAL)", {"key": "goal"})
    scene.turns = "sequential"
    first = settings(scene).first
    if first is not None:
        if first not in scene.characters:
            raise PydanticCustomError("not_in_cast", "collaborate.first '{slug}' is not in characters ({cast})",
                                      {"slug": first, "cast": ", ".join(scene.characters), "key": "collaborate"})
        scene.initial_speaker = first
