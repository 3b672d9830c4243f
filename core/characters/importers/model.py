"""What an importer produces: one character as Promptdesk will write it, plus what it left out."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from promptdesk.core.characters.loading import SLUG_MAX, name_problem
from promptdesk.core.characters.search import SPELT_OUT
from promptdesk.core.protocol.lines import inert
from promptdesk.core.protocol.sanitize import mend, strip_controls

MAX_SOURCE_BYTES = 4_000_000
"""Largest file an importer reads (cards with embedded art stay far below this)."""

MAX_FIELD_CHARS = 60_000
"""Longest single text field taken from a source; longer is refused as oversized, not cut."""


class ImportProblem(ValueError):
    """The source file cannot be imported; the message says why and names the file."""


@dataclass
class Imported:
    """One character read from a foreign format.

    `sections` are the profile's `## ` sections in order (heading, body); `front` is front matter
    kept for provenance; `snippet` holds scene suggestions (`setting`, `prompt`, `opener`);
    `dropped` names the source fields that have no place in Promptdesk and were left out;
    `notices` are things the person importing or casting it should know (a nickname used for `{{char}}`,
    macros left as written, a second card chunk not read).
    """

    name: str
    source: str
    role: str = ""
    description: str = ""
    sections: list[tuple[str, str]] = field(default_factory=list)
    front: dict[str, Any] = field(default_factory=dict)
    snippet: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    user_filled: bool = False
    """Whether `{{user}}` was written into a kept field (`import` then says how to choose who it is)."""
    file_slug: str = ""
    """The source file's name as a slug: the slug when the name leaves none (a name in another script)."""
    file_named: bool = True
    """Whether `file_slug` is the file's name (`ольга.json` leaves none either: `card`)."""

    @property
    def slug(self) -> str:
        """The name as a slug: ASCII-folded, lower case, runs of other characters as one hyphen; else
        the source file's name as one (`file_slug`)."""
        return slugify(self.name) or self.file_slug


_HEADING_LINE = re.compile(r"^([ \t]*)#", re.M)


def literal(text: str) -> str:
    """A field's text as a section body: a line that would read as a Markdown heading (`## Secret`) is
    escaped (`\\## Secret`), so that no field makes, ends or fakes a section of the profile."""
    return _HEADING_LINE.sub(lambda m: f"{m.group(1)}\\#", text)


def admitted(imported: Imported, where: str) -> Imported:
    """The character with every text it will write stripped of escape sequences and control characters,
    each section's body `literal` (a line of a card's text never makes or fakes a section), every text
    `inert` (no line of it passes for an engine line: `DIRECTOR NOTE:`, `[EVENT:`, `BEAT 7`), and its name passed through the display-name gate (`promptdesk.core.characters.loading.name_problem`): an
    import and a card cast directly are refused exactly as a character file with that name is."""
    problem = name_problem(imported.name)
    if problem:
        raise ImportProblem(f"{where}: the name {imported.name[:200]!r} {problem}; edit the name in the file "
                            f"to one line of printable text")
    clean = lambda text: mend(strip_controls(text))  # noqa: E731  (a JSON `\ud800` escape: no file can hold it)
    one_line = lambda text: inert(" ".join(clean(text).split()))  # noqa: E731
    imported.role, imported.description = one_line(imported.role), one_line(imported.description)
    imported.sections = [(one_line(heading), literal(inert(clean(body)))) for heading, body in imported.sections]
    imported.front = {key: [clean(str(item)) for item in value] if isinstance(value, list) else
                      clean(str(value)) for key, value in imported.front.items()}
    imported.snippet = {key: inert(clean(value)) for key, value in imported.snippet.items()}
    return imported


def slugify(name: str) -> str:
    """`Seraphina the Healer` -> `seraphina-the-healer`, `Astrid Sørensen` -> `astrid-sorensen`; "" when
    nothing slug-worthy is left (a name in another script)."""
    spelt = unicodedata.normalize("NFKD", name.translate(SPELT_OUT))
    folded = spelt.encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")
    return slug[:SLUG_MAX].rstrip("-")


def text_field(data: dict[str, Any], key: str, where: str) -> str:
    """A text field of the source, "" when absent; refused when it is not text or is oversized."""
    value = data.get(key)
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ImportProblem(f"{where}: `{key}` must be text, not {type(value).__name__}")
    if len(value) > MAX_FIELD_CHARS:
        raise ImportProblem(f"{where}: `{key}` is {len(value):,} characters; the limit is {MAX_FIELD_CHARS:,}")
    return value.replace("\r\n", "\n").strip()


def bullets(text: str) -> str:
    """Prose or a comma list as `- ` bullets, one per sentence or item (profiles read as bullet lists)."""
    text = text.strip()
    if not text:
        return ""
    lines = [line.strip(" -*\t") for line in text.splitlines() if line.strip(" -*\t")]
    if len(lines) == 1:
        line = lines[0]
        parts = re.split(r"(?<=[.!?])\s+", line) if re.search(r"[.!?]\s", line) else re.split(r"\s*[,;]\s*", line)
        lines = [p.strip() for p in parts if p.strip()]
    return "\n".join(f"- {line}" for line in lines)
