"""Where a character's journal lives, so that a run reads its memory from where it writes it.

- `<slug>/profile.md` characters in a folder the user gave Promptdesk keep `journal.md` beside the
  profile.
- Every other character (a `.claude/agents/`-style `<slug>.md` file, a read-only folder, or the
  examples shipped with Promptdesk, whose folder holds the `EXAMPLES_MARKER` file) keeps its journal
  in Promptdesk's own store, `.promptdesk/journals/<slug>.md` beside the scene file.
- `--journals DIR` (or `journals: DIR` in the scene) puts every character's journal in DIR;
  `--journals none` runs without memory: no journal is read, none is written.

A store journal that does not exist yet starts from the journal found beside the character (if
any), which is copied into the store on the first entry: the character's own folder is never written.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from core.characters.loading import Character, read_inside

EXAMPLES_MARKER = ".promptdesk-examples"
"""A file in a characters folder that marks it as shipped examples: runs never write into it."""
STORE = Path(".promptdesk") / "journals"
NONE = "none"


def store_for(flag: str | Path | None, scene_setting: str | None, scene_folder: Path | None,
              cwd: Path) -> tuple[Path | None, bool]:
    """(store folder or None for "no memory", whether the user chose it explicitly).

    The flag wins over the scene's `journals:`; a relative flag is relative to `cwd`, a relative
    scene setting to the scene's folder; the default store sits beside the scene (or in `cwd`).
    """
    if flag is not None:
        return (None, True) if str(flag) == NONE else (cwd / Path(flag), True)
    base = scene_folder or cwd
    if scene_setting is not None:
        return (None, True) if scene_setting == NONE else (base / scene_setting, True)
    return base / STORE, False


def owns_folder(character: Character) -> bool:
    """True when the character lives in Promptdesk's `<slug>/profile.md` layout, in a writable
    folder that is not the shipped examples."""
    path = character.profile_path
    home = path.parent
    if path.name != "profile.md" or (home.parent / EXAMPLES_MARKER).exists():
        return False
    journal = character.journal_path
    return os.access(home, os.W_OK) and (journal is None or not journal.exists() or os.access(journal, os.W_OK))


def place(character: Character, store: Path | None, explicit: bool) -> Character:
    """The character with its journal read from (and to be written to) the place the rules give."""
    if store is None:
        return replace(character, journal="", journal_path=None)
    if not explicit and owns_folder(character):
        return character
    target = store / f"{character.slug}.md"
    if target.is_file() or target.is_symlink():
        return replace(character, journal=read_inside(target, store, character.slug), journal_path=target)
    return replace(character, journal_path=target)


def where(character: Character) -> str:
    """The journal location as notes.md records it."""
    return "none (this run has no memory)" if character.journal_path is None else str(character.journal_path)
