"""The vocabulary of the stage's text: role-tagged lines, the cast, and making untrusted text safe.

Nothing here knows about colours or widgets. A `Line` is `(text, role)` pieces; the transcript
maps each role to a style of the active theme. Every piece of untrusted text (anything an actor,
a character file or a scene file said) passes through `safe`, which strips terminal control
sequences; widgets then lay it out as plain text, never as markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from rich.cells import cell_len, set_cell_size

from promptdesk.core.protocol.sanitize import strip_controls

Piece = tuple[str, str]
"""A run of text and the role that styles it (`speaker-0`, `tone`, `event`, ...)."""

SPEAKER_ROLES = 8
"""Distinct speaker colours per theme; a larger cast (up to `promptdesk.core.engine.scene.MAX_CAST`) cycles them."""

ROLES = tuple(f"speaker-{i}" for i in range(SPEAKER_ROLES)) + (
    "speech", "target", "tone", "nonverbal", "interrupt", "event", "note", "system", "close", "beat",
    "muted", "title")
"""Every role a piece can have; each is a component class of the transcript."""


def safe(text: object) -> str:
    """Untrusted text made safe for a terminal: escape sequences and control characters removed."""
    return strip_controls("" if text is None else str(text))


def literal(text: object) -> str:
    """Untrusted text for a place that reads its text as markup (the command palette's titles and help):
    made `safe`, then every opening square bracket escaped, so that it is shown as written and never acts.
    (Textual's `escape` leaves `[Night]` and `[Evil]` as they are, and its markup then reads them as styles
    and drops them: `Dov [Night] Ashby` showed as `Dov  Ashby`.)"""
    return safe(text).replace("[", "\\[")


def printable(text: object) -> str:
    """Text printed to the terminal after the console (a path given on the command line): each control
    character (an escape sequence's ESC and BEL among them) written as its escape (`\\x1b`), so that it
    is read as it is and never acts on the terminal; nothing is taken out, so the path can still be found."""
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
                   for c in str(text))


def shown_path(path: object, cwd: Path | None = None) -> str:
    """A run folder as the operator reads it: relative to the working folder when it is inside it
    (`runs/the-apology-…`, as a run started here is named), else from the home folder (`~/…`), else whole."""
    return _shown(str(path), str(cwd or os.getcwd()))


@lru_cache(maxsize=64)
def _shown(path: str, cwd: str) -> str:
    full = Path(path).expanduser()
    if not full.is_absolute():
        return str(full)
    here = Path(cwd).resolve()
    full = full.resolve()
    for base, prefix in ((here, ""), (Path.home().resolve(), "~/")):
        try:
            return prefix + str(full.relative_to(base))
        except ValueError:
            continue
    return str(full)


class Line(NamedTuple):
    """One transcript line as role-tagged pieces; `plain` is what a person reads.

    Held as two tuples of strings so that thousands of kept lines cost the garbage collector
    nothing (`tuple(line)` is what the transcript keeps).
    """

    texts: tuple[str, ...]
    roles: tuple[str, ...]

    @classmethod
    def of(cls, *pieces: Piece) -> Line:
        """A line from `(text, role)` pieces."""
        return cls(tuple(t for t, _ in pieces), tuple(r for _, r in pieces))

    @property
    def pieces(self) -> tuple[Piece, ...]:
        """The `(text, role)` pieces, in order."""
        return tuple(zip(self.texts, self.roles))

    @property
    def plain(self) -> str:
        """The line's text without styles."""
        return "".join(self.texts)


@dataclass(frozen=True)
class Cast:
    """Slug to display name for one scene, in cast order (the order picks the speaker colour)."""

    names: Mapping[str, str]
    single_call: bool = False
    """A single call from the room: one participant, one reply (it reads as one call, not a conversation)."""
    answered: frozenset[str] = frozenset()
    """The close reasons that, for a single call, mean its participant answered (its format's words)."""

    def name(self, slug: str | None) -> str:
        """A cast member's display name (or the slug itself), made safe."""
        return safe(self.names.get(slug or "", slug or "?"))

    def role(self, slug: str) -> str:
        """The speaker role (colour) of a cast member; `muted` for anyone else."""
        order = list(self.names)
        return f"speaker-{order.index(slug) % SPEAKER_ROLES}" if slug in order else "muted"


def fit_name(name: str, room: int, cast: Iterable[str] = ()) -> str:
    """`name` in at most `room` cells: whole when it fits, else cut at its end with `…`. When that cut reads
    as another cast member's (a focus group's Nadia Kowalski and Nadia Kowalska both `Nadia Ko…`), the cut
    moves to where the two differ, keeping the name's end (`Nadi…lski`, `Nadi…lska`; `Patric…k Ng`), so no
    two panes or rows look alike when the room allows it."""
    if cell_len(name) <= room:
        return name
    longer = [other for other in cast if other != name and cell_len(other) > room]
    keep = max(1, room - 1)

    def cut(text: str, head: int) -> str:
        tail = ""
        for char in reversed(text):
            if cell_len(char + tail) > keep - head:
                break
            tail = char + tail
        return set_cell_size(text, keep - cell_len(tail)).rstrip() + "…" + tail

    balanced = keep - keep // 2
    for head in [keep, *sorted(range(1, keep), key=lambda h: (abs(h - balanced), -h))]:
        shown = cut(name, head)
        if all(cut(other, head) != shown for other in longer):
            return shown
    return cut(name, keep)
