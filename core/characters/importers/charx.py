"""A CharX card (Character Card V3's `.charx`): a zip archive holding the card as `card.json` at its
root, with the card's assets (images, audio, ...) beside it.

Only `card.json` is read, and within bounds: the archive is already capped by `MAX_SOURCE_BYTES`, and
`card.json` is inflated to at most `MAX_SOURCE_BYTES` (a compression bomb is refused, whatever size
the archive declares for it). The assets are never extracted; the card's `assets` field is reported
as dropped like any field Promptdesk has no place for.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from promptdesk.core.characters.importers.model import MAX_SOURCE_BYTES, ImportProblem

ZIP_MAGIC = b"PK\x03\x04"
CARD_JSON = "card.json"


def is_zip(head: bytes) -> bool:
    """Whether a file's first bytes are a zip archive's (a CharX card, or another archive)."""
    return head.startswith(ZIP_MAGIC)


def charx_card_text(path: Path, data: bytes) -> str:
    """The text of the archive's root `card.json`; ImportProblem names what keeps it from being read."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ImportProblem(f"{path}: a damaged zip archive ({exc}); a CharX card is a zip holding `card.json`") from None
    with archive:
        info = next((i for i in archive.infolist() if i.filename == CARD_JSON), None)
        if info is None:
            raise ImportProblem(f"{path}: a zip archive with no `card.json` at its root, so not a CharX card "
                                "(export the card as CharX, PNG or JSON from the app that made it)")
        if info.flag_bits & 0x1:
            raise ImportProblem(f"{path}: its `card.json` is encrypted; export the card again without a password")
        try:
            with archive.open(info) as member:
                raw = member.read(MAX_SOURCE_BYTES + 1)
        except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError, EOFError) as exc:
            raise ImportProblem(f"{path}: its `card.json` cannot be read from the archive ({exc})") from None
    if len(raw) > MAX_SOURCE_BYTES:
        raise ImportProblem(f"{path}: its `card.json` inflates past {MAX_SOURCE_BYTES:,} bytes; it is not read")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportProblem(f"{path}: its `card.json` is not UTF-8") from None
