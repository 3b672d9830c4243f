"""A character card cast directly in a scene (`characters: [cards/Seraphina.png]`), read with the
same mapping and the same gate as `promptdesk import` (its name checked, its text stripped of control
sequences), without writing anything. What `import` would report as left out travels with it
(`CastCard`): the fields dropped, and the scenario and first message it suggests for a scene."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from promptdesk.core.characters.loading import Character
from promptdesk.core.errors import CharacterLoadError
from promptdesk.core.characters.importers.cards import DEFAULT_USER
from promptdesk.core.characters.importers.model import ImportProblem
from promptdesk.core.characters.importers.read import read_source
from promptdesk.core.protocol.sanitize import strip_controls


@dataclass
class CastCard:
    """A card cast directly: the character it plays, the source fields dropped (as `import` names
    them), and its `scenario` and `opener` (first message) when it has them."""

    character: Character
    card: str
    dropped: list[str] = field(default_factory=list)
    scenario: str = ""
    opener: str = ""
    told: list[str] = field(default_factory=list)
    """What `import` would note about the card (a nickname, macros left as written, a chunk not read)."""

    def notices(self, offered: bool, because: dict[str, str] | None = None) -> list[str]:
        """What the person running the scene should know was left out (nothing when nothing was);
        `because`: under `card_scenario: true`, what the scene does not take of this card, and why."""
        where = f"{self.character.name} (card {self.card})"
        out = [f"{where}: {notice}" for notice in self.told]
        out += [f"{where}: dropped (no place in Promptdesk): {', '.join(self.dropped)}"] if self.dropped else []
        unused = [what for what, text in (("scenario", self.scenario), ("first message", self.opener)) if text]
        if unused and not offered:
            out.append(f"{where}: not used: {', '.join(unused)} (set `card_scenario: true` in the scene to offer "
                       f"them where the scene leaves them unset)")
        out += [f"{where}: not used: {what} ({why})" for what, why in (because or {}).items() if offered]
        return out


def cast_card(slug: str, card: str, scene_folder: Path | None, cwd: Path) -> CastCard:
    """The card a scene casts, its path taken relative to the scene file (else `cwd`)."""
    path = Path(card)
    if not path.is_absolute():
        path = (scene_folder or cwd) / path
    try:
        imported = read_source(path, DEFAULT_USER)
    except ImportProblem as exc:
        raise CharacterLoadError(strip_controls(f"Character '{slug}' (a card): {exc}"), character=slug,
                                 path=str(path)) from None
    body = "\n\n".join(f"## {heading}\n\n{text}" for heading, text in imported.sections)
    character = Character(slug=slug, name=imported.name, description=imported.description,
                          profile=f"# {imported.name}\n\n{body}\n", journal="", profile_path=path, journal_path=None)
    return CastCard(character, card=strip_controls(card), dropped=list(imported.dropped),
                    scenario=imported.snippet.get("scenario", ""), opener=imported.snippet.get("opener", ""),
                    told=list(imported.notices))


def card_character(slug: str, card: str, scene_folder: Path | None, cwd: Path) -> Character:
    """The character a card file plays (`cast_card` without what was left out)."""
    return cast_card(slug, card, scene_folder, cwd).character
