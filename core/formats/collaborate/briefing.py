"""A participant's system prompt in a collaboration: spec 001 §4's shared rules, its name, its own
persona (profile) and the §3 schema. Nothing of the other participant's persona is ever in it."""

from __future__ import annotations

from collections.abc import Sequence

from promptdesk.core.characters.loading import Character
from promptdesk.core.formats.collaborate.context import system_prompt
from promptdesk.core.formats.collaborate.envelope import schema
from promptdesk.core.engine.scene import Scene


def build_collab_briefing(character: Character, scene: Scene, cast_names: Sequence[str]) -> str:
    """Same signature as `promptdesk.core.engine.briefing.build_briefing`, for the `collaborate` format."""
    persona = character.profile
    perspective = scene.perspective_for(character.slug)
    if perspective:
        persona = f"{persona.strip()}\n\nYour private perspective: {perspective.strip()}"
    return system_prompt(character.slug, list(scene.characters), persona, schema(list(scene.characters)))
