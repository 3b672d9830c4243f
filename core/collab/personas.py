"""Participants of a collaboration: characters from disk, or the built-in assistant personas.

Spec 001's default pair is `gpt` and `claude`. When no character file of that slug is found in the
usual folders (a file that is found but broken is an error, never silently replaced), a plain
assistant persona is used instead (its `profile_path` points nowhere, so no
journal is ever appended to it). Any other missing slug fails as a missing character does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from core.characters import Character, load_character
from core.errors import CharacterLoadError, InvalidConfig
from core.scenes import Scene

BUILTIN = {
    "gpt": ("GPT", "A plain assistant persona: practical, structured, quick to turn a draft into steps and lists. "
                   "Edits for clarity and concision; flags gaps plainly."),
    "claude": ("Claude", "A plain assistant persona: careful, warm, good at first drafts and at checking that the "
                         "result really meets the goal. Prefers short, concrete wording."),
}
"""slug -> (display name, persona) for the built-in participants."""


def builtin(slug: str) -> Character:
    """The built-in persona for `slug` (one of BUILTIN)."""
    name, persona = BUILTIN[slug]
    nowhere = Path(f"<builtin:{slug}>")
    return Character(slug=slug, name=name, description=persona, profile=persona, journal="",
                     profile_path=nowhere, journal_path=nowhere)


def require_goal(scene: Scene) -> None:
    """A collaboration cannot start without a goal (spec 001: the user's original request)."""
    if not scene.goal.strip():
        raise InvalidConfig(f"scene {scene.name}: a collaboration needs a `goal` (or --collaborate GOAL)")


def load_participants(slugs: Sequence[str], dirs: Sequence[Path]) -> list[Character]:
    """Each participant from disk when a character file exists, else its built-in persona."""
    if len(set(slugs)) != len(slugs):
        raise InvalidConfig(f"a participant is listed twice: {', '.join(slugs)}")
    cast, failures = [], []
    for slug in slugs:
        try:
            cast.append(load_character(slug, dirs))
        except CharacterLoadError as exc:
            if slug in BUILTIN and "searched" in exc.context:
                cast.append(builtin(slug))
            else:
                failures.append(exc)
    if failures:
        raise CharacterLoadError("\n".join(f.message for f in failures),
                                 character=failures[0].context.get("character"))
    return cast
