"""Where a character's journal lives, so that a run reads its memory from where it writes it.

- `<slug>/profile.md` characters in a folder the user gave Promptdesk keep `journal.md` beside the
  profile.
- Every other character (a `.claude/agents/`-style `<slug>.md` file, a read-only folder, or the
  examples shipped with Promptdesk, whose folder holds the `EXAMPLES_MARKER` file) keeps its journal
  in Promptdesk's own store, `.promptdesk/journals/<slug>.md` beside the scene file.
- `--journals DIR` (or `journals: DIR` in the scene) puts every character's journal in DIR;
  `--journals none` runs without memory: no journal is read, none is written. DIR must be a folder
  (or not exist yet): a file is refused.
- `PROMPTDESK_JOURNAL_STORE=DIR` in the environment moves the default store (every scene's) to DIR;
  characters that own their folder still keep their journal beside their profile.

A store journal that does not exist yet starts from the journal found beside the character (if
any), which is copied into the store on the first entry: the character's own folder is never written.
Every entry goes under a dated heading whose scene title is made safe like every other written
text: no control or escape sequence, one line (`append_entry`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from promptdesk import resources
from promptdesk.core.characters.loading import Character, append_journal, cap_entry, read_inside
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.protocol.lines import folded
from promptdesk.core.protocol.sanitize import file_text, strip_controls

EXAMPLES_MARKER = ".promptdesk-examples"
"""A file in a characters folder that marks it as shipped examples: runs never write into it."""
STORE = Path(".promptdesk") / "journals"
NONE = "none"
OWNER = ".owner"
"""Beside each store journal (`<slug>.md.owner`): whose memory it is. Two characters answering to one slug
(an agent file `joker.md` and a card `cards/joker.json`, cast by two scenes of one folder) never read each
other's journal: the second keeps `<slug>--<8 hex of its name>.md`."""
STORE_ENV = "PROMPTDESK_JOURNAL_STORE"
"""An environment variable naming the default store for every scene (instead of the one beside it)."""


def store_for(flag: str | Path | None, scene_setting: str | None, scene_folder: Path | None,
              cwd: Path, env: dict[str, str] | None = None) -> tuple[Path | None, bool]:
    """(store folder or None for "no memory", whether the user chose it explicitly).

    The flag wins over the scene's `journals:`; a relative flag is relative to `cwd`, a relative
    scene setting to the scene's folder; the default store sits beside the scene (or in `cwd`),
    unless `PROMPTDESK_JOURNAL_STORE` names another. A store that is not a folder is refused, and so is a
    scene's setting outside the scene's folder (`..`, an absolute path, a symlink leading out): a scene
    someone hands you cannot read your other notes into the briefings, nor write there.
    """
    if flag is not None:
        return (None, True) if str(flag) == NONE else (_folder(cwd / Path(flag), "--journals"), True)
    base = scene_folder or cwd
    if scene_setting is not None:
        if scene_setting == NONE:
            return None, True
        if scene_folder is not None and not (base / scene_setting).resolve().is_relative_to(scene_folder.resolve()):
            raise InvalidConfig(f"the scene's `journals:` ({scene_setting!r}) is outside the scene file's folder "
                                f"({scene_folder}): the journals are read into the briefings sent to the models and "
                                "written after each scene, so a scene may only name a folder beside it or below it; "
                                "name one there, or choose a folder elsewhere yourself with --journals DIR")
        return _folder(base / scene_setting, "the scene's `journals:`"), True
    moved = (os.environ if env is None else env).get(STORE_ENV)
    if moved:
        return _folder(cwd / Path(moved), STORE_ENV), False
    return base / STORE, False


def _folder(path: Path, named: str) -> Path:
    """`path`, when it is a folder or can become one (its nearest existing ancestor is a folder)."""
    existing = path
    while not existing.exists() and not existing.is_symlink() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        what = "is a file" if existing == path else f"cannot be made: {existing} is a file"
        raise InvalidConfig(f"{named} must be a folder for the journals, and {path} {what}; "
                            f"give a folder (it is created if missing) or `none` to run without memory")
    return path


def owns_folder(character: Character) -> bool:
    """True when the character lives in Promptdesk's `<slug>/profile.md` layout, in a writable
    folder that is not the shipped examples (marked by `EXAMPLES_MARKER`, or simply the characters
    folder of the installed package, marker or not)."""
    path = character.profile_path
    home = path.parent
    if path.name != "profile.md" or (home.parent / EXAMPLES_MARKER).exists() or shipped(home.parent):
        return False
    journal = character.journal_path
    return os.access(home, os.W_OK) and (journal is None or not journal.exists() or os.access(journal, os.W_OK))


def shipped(folder: Path) -> bool:
    """Whether `folder` is the characters folder Promptdesk ships (a damaged install without one has
    nothing there to protect)."""
    try:
        return folder.resolve() == resources.characters_dir().resolve()
    except (resources.MissingResource, OSError):
        return False


def place(character: Character, store: Path | None, explicit: bool) -> Character:
    """The character with its journal read from (and to be written to) the place the rules give."""
    if store is None:
        return replace(character, journal="", journal_path=None)
    if not explicit and owns_folder(character):
        return character
    target = store / f"{character.slug}.md"
    if _owner(target) not in (None, character.name):
        target = store / f"{character.slug}--{hashlib.sha256(character.name.encode()).hexdigest()[:8]}.md"
    claim = target.with_name(target.name + OWNER)
    if target.is_file() or target.is_symlink():
        return replace(character, journal=read_inside(target, store, character.slug), journal_path=target,
                       journal_claim=claim)
    return replace(character, journal_path=target, journal_claim=claim)


def _owner(journal: Path) -> str | None:
    """The display name of the character a store journal belongs to (its `OWNER` file, written with its
    first entry); None when it names none (no journal yet, or one kept before owners were written)."""
    try:
        return (journal.with_name(journal.name + OWNER).read_text(encoding="utf-8").strip() or None)
    except (OSError, UnicodeDecodeError):
        return None


def heading_title(title: str) -> str:
    """A scene title as a journal heading holds it: no control or escape sequence, on one line."""
    return folded(strip_controls(title)) or "Untitled scene"


def append_entry(character: Character, entry: str, *, when: datetime, scene_title: str) -> None:
    """Append one entry to the character's journal under its dated heading (title made safe)."""
    append_journal(character, entry, when=when, scene_title=heading_title(scene_title))


def drop_torn_entry(character: Character, entry: str, *, scene_title: str) -> bool:
    """Cut from the character's journal the block of `entry` that an append cut off part way (a kill
    or a power loss while it was written): the journal's tail from its last `\n## ` is the start of
    that entry's block, as `append_entry` writes it, and not the whole of it. True when one was cut;
    any other tail, and any journal that cannot be read or written, is left as it is."""
    path = character.journal_path
    text = file_text(cap_entry(entry))
    if path is None or not text:
        return False
    try:
        data = path.read_bytes()
        start = data.rindex(b"\n## ")
        tail = data[start + 4:].decode("utf-8", errors="ignore")  # a cut may split a character
    except (OSError, ValueError):
        return False
    stamp = tail[:16] if len(tail) >= 16 else tail
    whole = f"{stamp} \u2014 {heading_title(scene_title)}\n\n{text}\n"
    if tail == whole or not whole.startswith(tail) or not _is_stamp(stamp):
        return False
    try:
        with path.open("r+b") as journal:
            journal.truncate(start)
    except OSError:
        return False
    return True


def _is_stamp(start: str) -> bool:
    """Whether `start` can begin a heading's `YYYY-mm-dd HH:MM` stamp."""
    shape = "dddd-dd-dd dd:dd"
    return len(start) <= len(shape) and all(c.isdigit() if s == "d" else c == s for c, s in zip(start, shape))


def holds_entry(character: Character, entry: str) -> bool:
    """True when the character's journal already holds `entry` as `append_entry` writes it (or when
    there is nothing to write: no journal, or an empty entry)."""
    text = file_text(cap_entry(entry))
    path = character.journal_path
    if path is None or not text:
        return True
    try:
        return text in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
