"""Finding a character's file: by its file name or by its `name:`, never by building a path.

What the user types (a slug, already checked by the slug rule) is compared with the files listed
in each characters folder: a `<name>/profile.md` folder or a `<name>.md` file. Names are folded
before comparing: case ignored, spaces and underscores as hyphens, `CamelCase` split
(`CodeReviewer.md`, `code_reviewer.md` and `code-reviewer.md` are all `code-reviewer`), and a dot
may be typed or given as a hyphen (`powershell-5.1-expert` or `powershell-5-1-expert`). In each
folder, in search order: the exact name, then a folded file name, then a front matter `name:`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.characters import front_matter

_SEPARATORS = re.compile(r"[\s_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
PEEK_BYTES = 16_384
"""How much of a file is read to find its `name:` (front matter sits at the top)."""


def fold(text: str) -> set[str]:
    """Every folded form a name is matched by."""
    base = text.strip()
    forms = {_SEPARATORS.sub("-", base.lower()), _SEPARATORS.sub("-", _CAMEL.sub("-", base).lower())}
    return forms | {form.replace(".", "-") for form in forms}


def suggestion(text: str) -> str:
    """The folded form to suggest typing (CamelCase split, dots kept)."""
    return _SEPARATORS.sub("-", _CAMEL.sub("-", text.strip()).lower())


@dataclass(frozen=True)
class Candidate:
    """A character file found on disk, with the journal beside it and the name it is listed under."""

    profile: Path
    journal: Path
    label: str
    folder: Path

    def front_name(self) -> str:
        """The front matter `name:` of the file, or "" (an unreadable file has none)."""
        try:
            with open(self.profile, encoding="utf-8-sig", errors="replace") as handle:
                head = handle.read(PEEK_BYTES)
            return front_matter.split(head).text("name")
        except (OSError, ValueError):
            return ""


def candidates(folder: Path) -> Iterator[Candidate]:
    """Every character file in one folder: `<name>/profile.md` folders first, then `<name>.md` files."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    files = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        if _is_dir(entry) and (path / "profile.md").is_file():
            yield Candidate(path / "profile.md", path / "journal.md", entry.name, folder)
        elif entry.name.endswith(".md") and not entry.name.endswith(".journal.md") and _is_file(entry):
            stem = entry.name[:-3]
            files.append(Candidate(path, path.with_name(f"{stem}.journal.md"), stem, folder))
    yield from files


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def find(slug: str, dirs: Sequence[Path]) -> Candidate | None:
    """The first file, in folder order, listed under `slug` or under a name that folds to it."""
    wanted = fold(slug)
    for folder in dirs:
        listed = list(candidates(Path(folder)))
        rules = (lambda c: c.label == slug, lambda c: bool(fold(c.label) & wanted),
                 lambda c: bool(fold(c.front_name()) & wanted) if c.front_name() else False)
        for rule in rules:
            match = next((c for c in listed if rule(c)), None)
            if match is not None:
                return match
    return None


def near_matches(slug: str, dirs: Sequence[Path], cwd: Path | None = None, n: int = 3) -> list[str]:
    """"`code-reviewer` (from `.claude/agents/CodeReviewer.md`)" for the closest names on disk."""
    options: dict[str, Candidate] = {}
    for folder in dirs:
        for candidate in candidates(Path(folder)):
            for name in (candidate.label, candidate.front_name()):
                if name:
                    options.setdefault(suggestion(name), candidate)
    close = difflib.get_close_matches(slug, list(options), n=n, cutoff=0.6)
    return [f"`{name}` (from `{_shown(options[name].profile, cwd)}`)" for name in close]


def _shown(path: Path, cwd: Path | None) -> str:
    """A path relative to the working folder when it is inside it."""
    base = Path.cwd() if cwd is None else cwd
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)
