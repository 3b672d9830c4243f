"""Recognise a source file and read it into an `Imported` character."""

from __future__ import annotations

import json
from pathlib import Path

from core.characters.importers.cards import DEFAULT_USER, card_json_from_png, from_card, is_card, is_png
from core.characters.importers.model import MAX_SOURCE_BYTES, Imported, ImportProblem
from core.characters.importers.tinytroupe import from_tiny_person, is_tiny_person


def read_source(path: Path, user: str = DEFAULT_USER) -> Imported:
    """A card (JSON or PNG, any version) or a TinyPerson JSON; ImportProblem says why not."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ImportProblem(f"{path}: not a file")
        if size > MAX_SOURCE_BYTES:
            raise ImportProblem(f"{path}: {size:,} bytes; the limit is {MAX_SOURCE_BYTES:,}")
        if is_png(path):
            return from_card(path, card_json_from_png(path), user)
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ImportProblem(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ImportProblem(f"{path}: neither a PNG nor UTF-8 JSON") from None
    except OSError as exc:
        raise ImportProblem(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportProblem(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if is_tiny_person(data):
        return from_tiny_person(path, data)
    if is_card(data):
        return from_card(path, data, user)
    raise ImportProblem(f"{path}: not a character card (V1/V2/V3) nor a TinyTroupe TinyPerson")
