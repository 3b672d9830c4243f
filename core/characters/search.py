"""Finding a character's file: by its file name or by its `name:`, never by building a path.

What the user types (a slug, already checked by the slug rule) is compared with the files listed
in each characters folder: a `<name>/profile.md` folder or a `<name>.md` file. Names are folded
before comparing: case ignored, spaces and underscores as hyphens, `CamelCase` split
(`CodeReviewer.md`, `code_reviewer.md` and `code-reviewer.md` are all `code-reviewer`), accents dropped
(`José García` is also `jose-garcia`, `Sørensen` `sorensen`: only ASCII can be typed), and a dot
may be typed or given as a hyphen (`powershell-5.1-expert` or `powershell-5-1-expert`). In each
folder, every file answering to the name by any of these is found: the exact name, a folded file name,
a front matter `name:`. The first folder holding one wins; two answering in one folder are refused.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from promptdesk.core.characters import front_matter
from promptdesk.core.errors import CharacterLoadError

_SEPARATORS = re.compile(r"[\s_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
PEEK_BYTES = 16_384
"""How much of a file is read to find its `name:` (front matter sits at the top)."""


SPELT_OUT = str.maketrans({"ø": "o", "Ø": "O", "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
                           "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "TH",
                           "ħ": "h", "Ħ": "H", "ı": "i", "ŋ": "ng", "Ŋ": "NG", "ŧ": "t", "Ŧ": "T", "ĸ": "k"})
"""Latin letters Unicode gives no decomposition, as their languages spell them in ASCII."""


DECORATION = frozenset({"So", "Sk", "Mn", "Me"})
"""Unicode categories a name wears rather than spells (emoji and other pictographs, their skin tones and
variation selectors, enclosing marks): dropped from its ASCII spelling, as from an imported card's slug."""


def ascii_spelling(text: str) -> str:
    """`José García` -> `Jose Garcia`, `Sørensen` -> `Sorensen`, `🚀 Rocket Reviewer` -> `Rocket Reviewer`:
    accents and emoji dropped and the letters above spelt out; "" when the text holds anything else not
    ASCII (another script), so that no part of a name is silently dropped."""
    spelt = "".join(ch for ch in unicodedata.normalize("NFKD", text.translate(SPELT_OUT))
                    if not unicodedata.combining(ch) and unicodedata.category(ch) not in DECORATION)
    spelt = re.sub(r"^[\s_-]+|[\s_-]+$", "", spelt) if spelt != text else spelt
    return spelt if spelt.isascii() else ""


@functools.lru_cache(maxsize=8192)
def fold(text: str) -> frozenset[str]:
    """Every folded form a name is matched by (its ASCII spelling's too: only ASCII can be typed). Kept:
    every lookup folds every file name of the folder again."""
    bases = {text.strip(), ascii_spelling(text.strip())} - {""}
    forms = {form for base in bases for form in (_SEPARATORS.sub("-", base.lower()),
                                                 _SEPARATORS.sub("-", _CAMEL.sub("-", base).lower()))}
    return frozenset(forms | {form.replace(".", "-") for form in forms})


def suggestion(text: str) -> str:
    """The folded form to suggest typing (CamelCase split, dots kept; accents dropped when that leaves
    ASCII)."""
    base = ascii_spelling(text.strip()) or text.strip()
    return _SEPARATORS.sub("-", _CAMEL.sub("-", base).lower())


@dataclass(frozen=True)
class Candidate:
    """A character file found on disk, with the journal beside it and the name it is listed under."""

    profile: Path
    journal: Path
    label: str
    folder: Path

    def front_name(self) -> str:
        """The front matter `name:` of the file, or "" (an unreadable file has none). Kept per file version
        (`FRONT_NAMES`): a sweep casts from the same folders in every run, and parsing every file of a
        folder for each character of each run made a run's cost grow with the folder."""
        try:
            seen = os.stat(self.profile)
            key = (str(self.profile), seen.st_ino, seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns)
            if (name := FRONT_NAMES.get(key)) is not None:
                return name
            with open(self.profile, encoding="utf-8-sig", errors="replace") as handle:
                head = handle.read(PEEK_BYTES)
            name = front_matter.split(head).text("name")
        except (OSError, ValueError):
            return ""
        if len(FRONT_NAMES) >= FRONT_NAMES_KEPT:
            FRONT_NAMES.clear()
        FRONT_NAMES[key] = name
        return name


FRONT_NAMES: dict[tuple[str, int, int, int, int], str] = {}
"""The `name:` of each character file read, by path and version (inode, size, modification and change times):
an edited file is read again."""
FRONT_NAMES_KEPT = 20_000


NESTED_DEPTH = 2
"""How deep below a characters folder `<name>.md` files are found: agent collections install in subfolders
(`cp -r agents/* ~/.claude/agents/` gives `.claude/agents/engineering/frontend-developer.md`), which Claude
Code reads."""


def candidates(folder: Path, depth: int = 0) -> Iterator[Candidate]:
    """Every character file in one folder: `<name>/profile.md` folders first, then `<name>.md` files, then
    the `<name>.md` files of its other subfolders (not hidden, not symlinked, `NESTED_DEPTH` deep), each
    listed under its own name and kept as a character of `folder`."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    files, below = [], []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        if _is_dir(entry) and (path / "profile.md").is_file():
            yield Candidate(path / "profile.md", path / "journal.md", entry.name, folder)
        elif entry.name.endswith(".md") and not entry.name.endswith(".journal.md") and _is_file(entry):
            stem = entry.name[:-3]
            files.append(Candidate(path, path.with_name(f"{stem}.journal.md"), stem, folder))
        elif depth < NESTED_DEPTH and _is_dir(entry) and not entry.is_symlink():
            below.append(path)
    yield from files
    for sub in below:
        for candidate in candidates(sub, depth + 1):
            if candidate.profile.name != "profile.md":
                yield Candidate(candidate.profile, candidate.journal, candidate.label, folder)


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


def find(slug: str, dirs: Sequence[Path], cwd: Path | None = None,
         names: dict[Path, str] | None = None) -> Candidate | None:
    """The one file, in the first folder holding any, that answers to `slug`: by its listed name, by a
    name that folds to it, or by its `name:`. Two or more files of that folder answering to it are
    refused (`CharacterLoadError` naming each and how to pick one): none is chosen silently.

    `names`: the `name:` of each file read so far, kept by the caller across the finds of one cast (a
    cast of n characters from one folder would otherwise read every file n times)."""
    names = {} if names is None else names
    for folder in dirs:
        answering = answering_in(slug, Path(folder), names)
        if len(answering) == 1:
            return answering[0][0]
        if answering:
            raise _ambiguous(slug, answering, cwd)
    return None


def answering_in(slug: str, folder: Path, names: dict[Path, str] | None = None) -> list[tuple[Candidate, str]]:
    """Every file of one folder that answers to `slug`, each with how it does ("its file name"...)."""
    wanted, names = fold(slug), {} if names is None else names
    found = []
    for candidate in candidates(folder):
        how = _answers(candidate, slug, wanted, names)
        if how:
            found.append((candidate, how))
    return found


def _answers(candidate: Candidate, slug: str, wanted: set[str], names: dict[Path, str]) -> str:
    """How a file answers to `slug` ("" when it does not): its file name, folded, or its `name:`."""
    ways = []
    if candidate.label == slug:
        ways.append("its file name")
    elif fold(candidate.label) & wanted:
        ways.append(f"its file name `{candidate.label}`, folded")
    if candidate.profile not in names:
        names[candidate.profile] = candidate.front_name()
    name = names[candidate.profile]
    if name and fold(name) & wanted:
        ways.append(f"its `name: {name}`")
    return " and ".join(ways)


def _ambiguous(slug: str, answering: list[tuple[Candidate, str]], cwd: Path | None) -> CharacterLoadError:
    """The refusal for several files answering to one name."""
    files = [f"`{_shown(c.profile, cwd)}` (by {how})" for c, how in answering]
    listed = ", ".join(files[:-1]) + f" and {files[-1]}"
    return CharacterLoadError(
        f"Character '{slug}' is ambiguous: {len(files)} files answer to it: {listed}. Pick one: rename the "
        f"others' files or change their `name:` so that only one answers to '{slug}', or move the one you "
        f"mean into a folder of its own and pass it with --characters-dir (searched first).",
        character=slug, candidates=[str(c.profile) for c, _ in answering])


def near_matches(slug: str, dirs: Sequence[Path], cwd: Path | None = None, n: int = 3,
                 castable: Callable[[str], bool] = lambda name: True) -> list[str]:
    """"`code-reviewer` (from `.claude/agents/CodeReviewer.md`)" for the closest names on disk; only
    names `castable` accepts (a name holding `/` cannot be typed as a character) are offered."""
    options: dict[str, Candidate] = {}
    for folder in dirs:
        for candidate in candidates(Path(folder)):
            for name in (candidate.label, candidate.front_name()):
                if name and castable(suggestion(name)):
                    options.setdefault(suggestion(name), candidate)
    close = difflib.get_close_matches(slug, list(options), n=n, cutoff=0.6)
    return [f"`{name}` (from `{_shown(options[name].profile, cwd)}`)" for name in close]


def uncastable(dirs: Sequence[Path], cwd: Path | None = None, n: int = 3,
               castable: Callable[[str], bool] = lambda name: True) -> list[str]:
    """"`.claude/agents/ольга.md` (Ольга Смирнова)" for the files on disk that no name can be typed for
    (a file name and a `name:` both in another script): they are cast only once renamed."""
    found: list[str] = []
    for folder in dirs:
        for candidate in candidates(Path(folder)):
            names = [name for name in (candidate.label, candidate.front_name()) if name]
            if names and not any(castable(suggestion(name)) for name in names):
                found.append(f"`{_shown(candidate.profile, cwd)}` ({names[-1]})")
    return found[:n]


def _shown(path: Path, cwd: Path | None) -> str:
    """A path relative to the working folder when it is inside it."""
    base = Path.cwd() if cwd is None else cwd
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)
