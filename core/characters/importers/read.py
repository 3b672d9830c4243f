"""Recognise a source file and read it into an `Imported` character, within bounds.

The file's size is checked before it is read (`MAX_SOURCE_BYTES`); a card image is recognised by its
first bytes, whatever its name says, and read without decoding a pixel; JSON is parsed no deeper than
`promptdesk.core.protocol.bounded.MAX_DEPTH`. What comes out passes the display-name gate and is stripped of
control sequences (`model.admitted`).
"""

from __future__ import annotations

from pathlib import Path

from promptdesk.core.characters.importers.cards import DEFAULT_USER, card_json_from_image, from_card, is_card
from promptdesk.core.characters.importers.charx import charx_card_text, is_zip
from promptdesk.core.characters.importers.images import kind
from promptdesk.core.characters.importers.model import MAX_SOURCE_BYTES, Imported, ImportProblem, admitted, slugify
from promptdesk.core.characters.importers.tinytroupe import from_tiny_person, is_tiny_person
from promptdesk.core.protocol.bounded import Unbounded, load_json, read_capped


def read_bytes(path: Path, limit: int = MAX_SOURCE_BYTES, problem: type[ImportProblem] = ImportProblem) -> bytes:
    """The file's bytes, refused (as `problem`, naming the file) when missing, not a file or over
    `limit` bytes (checked before reading, and again as it is read)."""
    try:
        if not path.is_file():
            raise problem(f"{path}: {'not a file' if path.exists() else 'no such file'}")
        size = path.stat().st_size
        if size > limit:
            raise problem(f"{path}: {size:,} bytes; the limit is {limit:,}")
        with open(path, "rb") as handle:
            data = read_capped(handle, limit)
    except OSError as exc:
        raise problem(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if data is None:
        raise problem(f"{path}: over the limit of {limit:,} bytes")
    return data


def read_source(path: Path, user: str = DEFAULT_USER) -> Imported:
    """A card (JSON, PNG, WebP or CharX, any version) or a TinyPerson JSON; ImportProblem says why not. A name
    that leaves no slug (another script) is filed under the file's name, as a card cast directly is."""
    imported = _read(Path(path), user)
    if not slugify(imported.name):
        named = slugify(Path(path).name.rsplit(".", 1)[0].removesuffix(".card"))
        imported.file_slug, imported.file_named = named or "card", bool(named)
    return imported


def _json_text(path: Path, data: bytes) -> str:
    """A JSON file's text: UTF-8 (a byte order mark allowed), or UTF-16 with its byte order mark, as
    Windows tools save it."""
    try:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportProblem(f"{path}: neither a card image (PNG, WebP), a CharX archive nor UTF-8 JSON") from None


def _read(path: Path, user: str) -> Imported:
    data = read_bytes(path)
    if kind(data[:16]) is not None:
        card, notices = card_json_from_image(path, data)
        imported = from_card(path, card, user)
        imported.notices += notices
        return admitted(imported, str(path))
    text = charx_card_text(path, data) if is_zip(data[:4]) else _json_text(path, data)
    if text.lstrip().startswith("<"):
        raise ImportProblem(f"{path}: an XML, SVG or HTML file, not a card; a character card is a PNG or WebP image "
                            "or a JSON file")
    try:
        parsed = load_json(text)
    except Unbounded as exc:
        raise ImportProblem(f"{path}: {exc}") from None
    except ValueError as exc:
        where = f"line {exc.lineno}, column {exc.colno}: {exc.msg}" if hasattr(exc, "lineno") else str(exc)
        raise ImportProblem(f"{path}: not valid JSON ({where})") from None
    if is_tiny_person(parsed):
        return admitted(from_tiny_person(path, parsed), str(path))
    if is_card(parsed):
        return admitted(from_card(path, parsed, user), str(path))
    raise ImportProblem(f"{path}: not a character card (V1/V2/V3) nor a TinyTroupe TinyPerson")
