"""A character card cast directly in a scene (`characters: [cards/Seraphina.png]`), read with the
same mapping and the same gate as `promptdesk import` (its name checked, its text stripped of control
sequences), without writing anything."""

from __future__ import annotations

from pathlib import Path

from core.characters.loading import Character
from core.errors import CharacterLoadError
from core.characters.importers.cards import DEFAULT_USER
from core.characters.importers.model import ImportProblem
from core.characters.importers.read import read_source
from core.protocol.sanitize import strip_controls


def card_character(slug: str, card: str, scene_folder: Path | None, cwd: Path) -> Character:
    """The character a card file plays, its path taken relative to the scene file (else `cwd`)."""
    path = Path(card)
    if not path.is_absolute():
        path = (scene_folder or cwd) / path
    try:
        imported = read_source(path, DEFAULT_USER)
    except ImportProblem as exc:
        raise CharacterLoadError(strip_controls(f"Character '{slug}' (a card): {exc}"), character=slug,
                                 path=str(path)) from None
    body = "\n\n".join(f"## {heading}\n\n{text}" for heading, text in imported.sections)
    return Character(slug=slug, name=imported.name, description=imported.description,
                     profile=f"# {imported.name}\n\n{body}\n", journal="", profile_path=path, journal_path=None)
