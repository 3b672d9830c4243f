"""Characters: slugs, where their files live, how they are read, and their journals (DESIGN §4).

A character is named by a slug and resolved, first hit wins, from the `--characters-dir` folders,
then `./characters/`, then `./.claude/agents/`, then the scene file's own (`<its folder>/characters/`,
and `characters/` beside a `scenes/` folder: `beside_scene`). In each folder two layouts are accepted:

- `<name>/profile.md`, with the journal at `<name>/journal.md`;
- `<name>.md` (the `.claude/agents` form), with the journal at `<name>.journal.md` beside it, also in the
  folder's subfolders, two deep (as agent collections install: `.claude/agents/engineering/frontend-developer.md`).

The file is found by its listed name or its `name:` (see `promptdesk.core.characters.search`), never by a path
built from what the user typed. Either file may open with front matter, read tolerantly (see
`promptdesk.core.characters.front_matter`). Where a run keeps the journal is decided by `promptdesk.core.characters.journal_store`.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from promptdesk import resources
from promptdesk.core.characters import search as character_search

from promptdesk.core.characters import front_matter
from promptdesk.core.characters.front_matter import examples, without_examples
from promptdesk.core.characters.name_gate import NAME_MAX, name_problem, normalised
from promptdesk.core.errors import CharacterLoadError, InvalidConfig
from promptdesk.core.protocol.bounded import Unbounded, read_capped
from promptdesk.core.protocol.person_names import latin
from promptdesk.core.protocol.sanitize import file_text, strip_controls

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]*(?:\.[a-z0-9][a-z0-9-]*)*")
SLUG_MAX = 64
SLUG_RULE = (f"a slug is 1-{SLUG_MAX} characters of lower-case letters, digits and hyphens, "
             "starting with a letter or digit, with single dots between them (no '/', '..', spaces or capitals)")

_DASH = re.compile(r"[-—–]")


def _before_dash(heading: str) -> str:
    """The part of a heading before its first dash set off by blanks (`Ann Lee - Ferry Captain`): each
    dash looked at once (an expression of blanks, a dash, blanks backtracked through a long run of
    blanks with no dash after it, quadratic: 59 s for a heading of 100,000 spaces)."""
    for dash in _DASH.finditer(heading):
        at = dash.start()
        if 0 < at < len(heading) - 1 and heading[at - 1].isspace() and heading[at + 1].isspace():
            return heading[:at]
    return heading


def _other_script(slug: object, what: str) -> str:
    """How to name, in ASCII, what a user wrote in another script (`李明`, `喫茶店`): its display name keeps it."""
    if not isinstance(slug, str) or slug.isascii() or not any(c.isalpha() and not c.isascii() for c in slug):
        return ""
    plain = "".join(c for c in unicodedata.normalize("NFKD", slug) if not unicodedata.combining(c)).lower()
    if SLUG_RE.fullmatch(plain):  # `José`: its letters typed plain (`name: José` is found as `jose`)
        return f" Type it as `{plain}`."
    if what == "character":
        ascii_name = _romanised(slug)
        file, listed = (f"`characters/{ascii_name}.md`", f"`{ascii_name}`") if ascii_name else (
            "`characters/<ascii-name>.md`", "that file name")
        return (f" A character named in another script is cast by an ASCII file or folder name ({file}"
                f" holding `name: {slug}`), listed here as {listed}; {slug} stays its display name.")
    return f" Give it an ASCII name; a scene's `title:` may be in any script (`title: {slug}`)." if what == "scene name" else ""


def _romanised(name: str) -> str:
    """A slug for a Cyrillic or Greek name spelt in Latin letters (`Ольга` -> `olga`); "" for other scripts
    (`李明`: no spelling can be guessed, so the message names none rather than another person's)."""
    slug = re.sub(r"[^a-z0-9]+", "-", latin(name).lower()).strip("-")
    return slug if slug and SLUG_RE.fullmatch(slug) else ""


def validate_slug(slug: str, what: str = "character") -> str:
    """Return `slug` if it is a valid slug; else raise InvalidConfig naming it and the rule.

    Pure string check: it runs before any path is built from the slug.
    """
    if not isinstance(slug, str) or len(slug) > SLUG_MAX or not SLUG_RE.fullmatch(slug):
        raise InvalidConfig(f"Invalid {what} {slug!r}: {SLUG_RULE}.{_other_script(slug, what)}", slug=slug, what=what)
    return slug


def is_slug(text: str) -> bool:
    """Whether `text` may be typed as a character's name (see `validate_slug`)."""
    return len(text) <= SLUG_MAX and bool(SLUG_RE.fullmatch(text))


@dataclass(frozen=True)
class Character:
    """One character as read from disk: who it is, its profile and its journal so far."""

    slug: str
    name: str
    description: str
    profile: str
    journal: str
    profile_path: Path
    journal_path: Path | None
    """Where this run reads and appends the journal; None when the run has no memory."""
    journal_claim: Path | None = None
    """A store journal's owner file (`journal_store.place`): the display name of the character whose
    memory it is, written with the first entry when it is missing."""


def search_dirs(characters_dirs: Sequence[Path] = (), cwd: Path | None = None,
                scene_folder: Path | None = None) -> list[Path]:
    """The folders searched for characters, in order: the given ones, `characters/`, `.claude/agents/`,
    then those the scene file brings (`beside_scene`)."""
    base = Path.cwd() if cwd is None else Path(cwd)
    ordered = [Path(d) for d in characters_dirs] + [base / "characters", base / ".claude" / "agents"]
    return distinct(ordered + beside_scene(scene_folder, "characters"))


def distinct(folders: Sequence[Path]) -> list[Path]:
    """`folders` in order, each folder once (a folder reached by two paths, a link, counts once)."""
    seen: dict[Path, Path] = {}
    for folder in folders:
        seen.setdefault(folder.resolve(), folder)
    return list(seen.values())


def beside_scene(scene_folder: Path | None, kind: str) -> list[Path]:
    """The folders named `kind` (`characters`, `strategies`) that a scene file brings: the one in the
    scene's folder, and for a scene in a `scenes/` folder the one beside that folder (the layout
    `promptdesk init` writes, and the shipped examples' own)."""
    if scene_folder is None:
        return []
    found = [scene_folder / kind]
    if scene_folder.name == "scenes":
        found.append(scene_folder.parent / kind)
    return found


CHARACTER_FILE_MAX = 1_048_576
"""A profile or journal file over 1 MB is refused before it is read (a briefing is a page or two)."""


def _read(path: Path, slug: str) -> str:
    """Read a UTF-8 text file of at most `CHARACTER_FILE_MAX` bytes, turning every failure into a
    CharacterLoadError naming it."""
    try:
        with path.open("rb") as handle:
            raw = read_capped(handle, CHARACTER_FILE_MAX)
        if raw is None:
            raise CharacterLoadError(f"Character '{slug}': {path} is over the limit of 1 MB ({CHARACTER_FILE_MAX:,} "
                                     f"bytes); shorten it (move old journal entries elsewhere).",
                                     character=slug, path=str(path))
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CharacterLoadError(f"Character '{slug}': {path} is not valid UTF-8 ({exc.reason} at byte {exc.start}).",
                                 character=slug, path=str(path)) from exc
    except OSError as exc:
        raise CharacterLoadError(f"Character '{slug}': cannot read {path} ({exc.strerror or exc}).",
                                 character=slug, path=str(path)) from exc


def _split_front_matter(text: str, path: Path, slug: str) -> front_matter.FrontMatter:
    """Split tolerant front matter (see `promptdesk.core.characters.front_matter`) from the body; a file whose front
    matter never closes, whose body is empty, or is only an unresolved include, is refused."""
    try:
        parsed = front_matter.split(text)
    except front_matter.Unclosed as exc:
        raise CharacterLoadError(f"Character '{slug}': {path}:1: {exc}.", character=slug, path=str(path)) from None
    except Unbounded as exc:  # "the file holds ..." is said of the front matter; "the alias ..." is its alias
        said = str(exc)
        said = (f"the front matter {said.removeprefix('the file ')}" if said.startswith("the file ")
                else f"the front matter's {said.removeprefix('the ')}")
        raise CharacterLoadError(f"Character '{slug}': {path}:{exc.line or 1}: {said.rstrip('.')}{'' if said.endswith('?') else '.'}",
                                 character=slug, path=str(path)) from None
    body = parsed.body
    if not body.strip():
        where = f"below the front matter (which ends on line {parsed.body_line - 1})" if parsed.meta or text.startswith("---") else ""
        raise CharacterLoadError(f"Character '{slug}': {path} has no profile text {where}".rstrip()
                                 + " (write who the character is).", character=slug, path=str(path))
    if _INCLUDES_ONLY.fullmatch(body):
        first = next(i for i, line in enumerate(body.splitlines()) if line.strip())
        raise CharacterLoadError(f"Character '{slug}': {path}:{parsed.body_line + first}: the body is only an include "
                                 f"({body.strip().splitlines()[0].strip()}), which Promptdesk does not resolve; "
                                 f"paste the included text into the file.", character=slug, path=str(path))
    return parsed


_INCLUDES_ONLY = re.compile(r"\s*(?:\{\{\s*file\s*:[^}]*\}\}\s*)+")


def display_name(slug: str, profile: str, front_name: str | None = None) -> str:
    """Front matter `name`, else the first `# ` heading before " - " / " — ", else the title-cased slug."""
    if front_name and front_name.strip():
        return front_name.strip()
    for line in profile.splitlines():
        if line.startswith("# "):
            name = _before_dash(line[2:].strip()).strip()
            if name:
                return name
            break
    return slug.replace("-", " ").title()


def read_inside(path: Path, root: Path, slug: str) -> str:
    """Read `path` only if it resolves inside `root`: a symlink out of the tree is refused."""
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        raise CharacterLoadError(f"Character '{slug}': {path} resolves outside {root} "
                                 f"(a symlink leaving the folder); replace it with a regular file.",
                                 character=slug, path=str(path))
    return _read(path, slug)


def check_name(slug: str, name: str, path: Path | str) -> str:
    """The display name, or a CharacterLoadError naming the character, the file and what to fix."""
    problem = name_problem(name)
    if problem:
        raise CharacterLoadError(f"Character '{slug}': the display name {name[:NAME_MAX * 2]!r} in {path} {problem}; "
                                 f"give it a one-line name of printable text.", character=slug, path=str(path))
    return name


def with_fields(character: Character, fields: Sequence[str]) -> Character:
    """The character with the chosen front matter fields written into its profile, so that its
    briefing carries them: `description` without its `<example>` blocks, `examples` those blocks
    alone; every other field (`tools`, `model`, `color`…) never does."""
    chosen = {"description": without_examples(character.description), "examples": examples(character.description)}
    extra = [f"{key.title()}: {chosen[key]}" for key in fields if chosen.get(key)]
    if not extra:
        return character
    return replace(character, profile=character.profile.rstrip() + "\n\n" + "\n".join(extra) + "\n")


def check_display_names(cast: Sequence[Character]) -> None:
    """Refuse a display name that fails `check_name` (whichever way the character came in), and two cast
    members whose display names match once normalised (case, Unicode compatibility forms, punctuation):
    no transcript could tell them apart."""
    seen: dict[str, Character] = {}
    for character in cast:
        check_name(character.slug, character.name, character.profile_path)
        other = seen.setdefault(normalised(character.name), character)
        if other is not character:
            raise InvalidConfig(f"Two cast members are both called {character.name!r}: '{other.slug}' "
                                f"({other.profile_path}) and '{character.slug}' ({character.profile_path}); "
                                f"give one of them another `name:`.", name=character.name)


def _from_files(slug: str, profile_path: Path, journal_path: Path, folder: Path) -> Character:
    """Build a Character from its profile file and (possibly missing) journal file, both of
    which must stay inside the characters `folder`."""
    parsed = _split_front_matter(read_inside(profile_path, folder, slug), profile_path, slug)
    name = check_name(slug, display_name(slug, parsed.body, parsed.text("name", fold=False)), profile_path)
    present = journal_path.is_file() or journal_path.is_symlink()
    journal = read_inside(journal_path, folder, slug) if present else ""
    return Character(slug=slug, name=name, description=strip_controls(parsed.text("description")),
                     profile=strip_controls(parsed.body), journal=strip_controls(journal),
                     profile_path=profile_path, journal_path=journal_path)


def load_character(slug: str, dirs: Sequence[Path], cwd: Path | None = None,
                   names: dict[Path, str] | None = None) -> Character:
    """Find (by file name or `name:`, see `promptdesk.core.characters.search`) and read one character; raise
    CharacterLoadError listing the paths searched and the nearest names on disk if absent. `names`: the
    files' `name:` read so far, shared by the loads of one cast."""
    validate_slug(slug)
    found = character_search.find(slug, dirs, cwd, names)
    if found is not None:
        return _from_files(slug, found.profile, found.journal, found.folder)
    searched = [str(path) for folder in dirs for path in (Path(folder) / slug / "profile.md", Path(folder) / f"{slug}.md")]
    where = ", ".join(searched) if searched else "(no folders to search)"
    near = character_search.near_matches(slug, dirs, cwd, castable=is_slug)
    hint = f" Did you mean {' or '.join(near)}?" if near else _example_hint(slug, dirs)
    unnamed = [] if near or hint else character_search.uncastable(dirs, cwd, castable=is_slug)
    hint += (f" Found, but named only in another script, which a cast cannot type: {', '.join(unnamed)}; "
             f"give the file an ASCII name (`{slug}.md`, say) to cast it as '{slug}'.") if unnamed else ""
    raise CharacterLoadError(f"Character '{slug}' not found. Searched: {where}.{hint}", character=slug,
                             searched=searched, near=near)


def _example_hint(slug: str, dirs: Sequence[Path]) -> str:
    """Where a slug that is one of the example characters Promptdesk ships can be had: only the example
    scenes cast them from where they are installed."""
    try:
        shipped = resources.characters_dir()
    except (resources.MissingResource, OSError):
        return ""
    if not (shipped / slug / "profile.md").is_file() or any(Path(d).resolve() == shipped.resolve() for d in dirs):
        return ""
    return (f" '{slug}' is one of the example characters shipped with Promptdesk, which only the example scenes "
            f"cast: `promptdesk init DIR` copies them into DIR/characters/ to cast in scenes of your own (or give "
            f"--characters-dir {shipped} to read them where they are).")


def load_cast(slugs: Sequence[str], dirs: Sequence[Path]) -> list[Character]:
    """Load every character or none: slugs are checked first, then every failure is reported."""
    for slug in slugs:
        validate_slug(slug)
    duplicates = sorted({s for s in slugs if list(slugs).count(s) > 1})
    if duplicates:
        raise InvalidConfig(f"Duplicate character(s) in the cast: {', '.join(duplicates)}.", duplicates=duplicates)
    cast: list[Character] = []
    failures: list[CharacterLoadError] = []
    names: dict[Path, str] = {}
    for slug in slugs:
        try:
            cast.append(load_character(slug, dirs, names=names))
        except CharacterLoadError as exc:
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise CharacterLoadError("\n".join(f.message for f in failures),
                                 character=failures[0].context.get("character"),
                                 characters=[f.context.get("character") for f in failures])
    check_display_names(cast)
    return cast


JOURNAL_ENTRY_MAX = 8000
"""The longest journal entry kept, in characters; a longer one is cut and says so."""


def cap_entry(entry: str) -> str:
    """The entry, cut to `JOURNAL_ENTRY_MAX` characters with a visible note when longer."""
    entry = entry.strip()
    if len(entry) <= JOURNAL_ENTRY_MAX:
        return entry
    return entry[:JOURNAL_ENTRY_MAX].rstrip() + f"\n\n[entry cut at {JOURNAL_ENTRY_MAX} characters]"


def _private_folder(folder: Path) -> None:
    """Make `folder` and any missing folder above it, each readable by you alone (0700); a folder
    that exists is left as it is."""
    missing = []
    while not folder.exists() and not folder.is_symlink() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir(mode=0o700, exist_ok=True)


def append_journal(character: Character, entry: str, *, when: datetime, scene_title: str) -> None:
    """Append an entry under a dated `## YYYY-mm-dd HH:MM — title` header, creating the file if needed.

    A journal that does not exist yet starts with what the run read as the character's journal
    (a store seeded from the journal beside the character); a run without memory writes nothing.
    """
    path = character.journal_path
    if path is None:
        return
    _private_folder(path.parent)
    if not path.exists() and not path.is_symlink():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # a memory is private: yours alone
        with os.fdopen(fd, "w", encoding="utf-8") as started:
            started.write(character.journal if character.journal.strip() else "")
    lead = ""
    if path.is_file() and path.stat().st_size:
        with path.open("rb") as existing:
            existing.seek(-1, 2)
            lead = "" if existing.read(1) == b"\n" else "\n"
    block = f"{lead}\n## {when:%Y-%m-%d %H:%M} — {scene_title}\n\n{file_text(cap_entry(entry))}\n"
    with path.open("a", encoding="utf-8") as journal:
        journal.write(block)
    claim = character.journal_claim
    if claim is not None and not claim.exists() and not claim.is_symlink():
        fd = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as owner:
            owner.write(character.name + "\n")
