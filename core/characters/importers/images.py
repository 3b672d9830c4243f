"""Card images read without decoding a pixel: a PNG's text chunks, a WebP's EXIF and XMP.

A card image carries its JSON in metadata; its pixels are never needed, so they are never decoded
(a card declaring 60,000 x 60,000 pixels reads as fast as a thumbnail). The file's bytes (already
bounded by `MAX_SOURCE_BYTES`) are walked chunk by chunk with `struct`:

- PNG: `tEXt`, `zTXt` and `iTXt` chunks, keyword -> text (a compressed chunk is inflated only for
  the keywords asked for, and never past `TEXT_MAX_BYTES`);
- WebP (a RIFF file): the `EXIF` chunk's UserComment (TavernAI and SillyTavern write the card JSON
  there) and `chara`/`ccv3` in the `XMP ` chunk (read as XML by `importers.xmp`, never by a pattern).

`kind(head)` names any other image type from its first bytes, so that it is refused as what it is.
"""

from __future__ import annotations

import struct
import zlib

from promptdesk.core.characters.importers.model import MAX_SOURCE_BYTES, ImportProblem
from promptdesk.core.characters.importers.xmp import XmpProblem, xmp_fields

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TEXT_MAX_BYTES = MAX_SOURCE_BYTES
"""The most a compressed text chunk may inflate to (a zlib bomb is refused, not inflated)."""
KEYS_SHOWN = 10
"""At most this many other text chunk keywords are named when no card chunk is found."""

_OTHER_IMAGES = ((b"\xff\xd8\xff", "JPEG"), (b"GIF87a", "GIF"), (b"GIF89a", "GIF"), (b"BM", "BMP"),
                 (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"), (b"\x00\x00\x01\x00", "ICO"), (b"8BPS", "Photoshop"),
                 (b"\xff\x0a", "JPEG XL"), (b"\x00\x00\x00\x0cJXL ", "JPEG XL"), (b"qoif", "QOI"))


def kind(head: bytes) -> str | None:
    """The image type a file's first bytes announce: "PNG", "WebP", another image type's name, or None."""
    if head.startswith(PNG_MAGIC):
        return "PNG"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        return "AVIF" if brand.startswith(b"avi") else "HEIC" if brand[:3] in (b"hei", b"hev", b"mif") else None
    return next((name for magic, name in _OTHER_IMAGES if head.startswith(magic)), None)


def png_texts(data: bytes, where: str, wanted: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """({keyword: text} for the `wanted` keywords, every keyword found) of a PNG's text chunks. A keyword
    is matched in any capitals and the first chunk of each wins, as SillyTavern reads a card."""
    if not data.startswith(PNG_MAGIC):
        raise ImportProblem(f"{where}: not a readable PNG (no PNG signature)")
    texts: dict[str, str] = {}
    found: list[str] = []
    at = len(PNG_MAGIC)
    while at < len(data):
        if at + 12 > len(data):
            raise ImportProblem(f"{where}: not a readable PNG (cut short at byte {at:,})")
        length, name = struct.unpack_from(">I4s", data, at)
        body = data[at + 8: at + 8 + length]
        if len(body) < length:
            raise ImportProblem(f"{where}: not a readable PNG (its {name.decode('latin-1')!r} chunk at byte {at:,} "
                                f"is cut short)")
        if name == b"IEND":
            break
        if name in (b"tEXt", b"zTXt", b"iTXt"):
            keyword, _, rest = body.partition(b"\x00")
            key = keyword.decode("latin-1")
            found.append(key)
            if key.lower() in wanted and key.lower() not in texts:
                texts[key.lower()] = _chunk_text(name, rest, where, key)
        at += 12 + length
    return texts, found


def _chunk_text(name: bytes, rest: bytes, where: str, key: str) -> str:
    """The text of one `tEXt`, `zTXt` or `iTXt` chunk (after its keyword)."""
    if name == b"tEXt":
        return rest.decode("latin-1")
    if name == b"zTXt":
        return _inflate(rest[1:], where, key).decode("latin-1")
    if len(rest) < 2:
        raise ImportProblem(f"{where}: the `{key}` iTXt chunk is cut short")
    compressed, text = rest[0], rest[2:]
    for _ in range(2):  # the language tag and the translated keyword
        text = text.partition(b"\x00")[2]
    raw = _inflate(text, where, key) if compressed else text
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportProblem(f"{where}: the `{key}` iTXt chunk is not UTF-8") from None


def _inflate(data: bytes, where: str, key: str) -> bytes:
    """zlib data inflated to at most `TEXT_MAX_BYTES`; more is refused as a bomb."""
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(data, TEXT_MAX_BYTES)
    except zlib.error as exc:
        raise ImportProblem(f"{where}: the `{key}` chunk's compressed text is damaged ({exc})") from None
    if inflater.unconsumed_tail:
        raise ImportProblem(f"{where}: the `{key}` chunk inflates past {TEXT_MAX_BYTES:,} bytes (a compression "
                            "bomb?); it is not read")
    return raw


def webp_texts(data: bytes, where: str) -> tuple[dict[str, str], str | None]:
    """The card text candidates of a WebP (`ccv3` and `chara` from its XMP, `UserComment` from its
    EXIF), and why its XMP could not be read (None when it could, or when there is none)."""
    if not (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        raise ImportProblem(f"{where}: not a readable WebP (no RIFF/WEBP header)")
    chunks: dict[bytes, bytes] = {}
    at = 12
    while at + 8 <= len(data):
        name, size = struct.unpack_from("<4sI", data, at)
        body = data[at + 8: at + 8 + size]
        if len(body) < size:
            raise ImportProblem(f"{where}: not a readable WebP (its {name.decode('latin-1')!r} chunk at byte {at:,} "
                                f"is cut short)")
        chunks.setdefault(name, body)
        at += 8 + size + (size & 1)
    texts: dict[str, str] = {}
    problem = None
    if b"XMP " in chunks:
        try:
            texts.update(xmp_fields(chunks[b"XMP "], ("ccv3", "chara")))
        except XmpProblem as exc:
            problem = str(exc)
    comment = exif_user_comment(chunks.get(b"EXIF", b""))
    if comment:
        texts["UserComment"] = comment
    return texts, problem


_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8}
_EXIF_IFD, _USER_COMMENT = 0x8769, 0x9286


def exif_user_comment(exif: bytes) -> str:
    """The UserComment of EXIF data (in IFD0 or the Exif IFD), its 8-byte charset header read; "" if none."""
    tiff = exif.removeprefix(b"Exif\x00\x00")
    order = {b"II": "<", b"MM": ">"}.get(tiff[:2])
    if order is None or len(tiff) < 8:
        return ""

    def entries(offset: int) -> dict[int, bytes]:
        found: dict[int, bytes] = {}
        if offset + 2 > len(tiff):
            return found
        (count,) = struct.unpack_from(order + "H", tiff, offset)
        for index in range(count):
            at = offset + 2 + 12 * index
            if at + 12 > len(tiff):
                break
            tag, kind_, n = struct.unpack_from(order + "HHI", tiff, at)
            size = n * _TYPE_SIZES.get(kind_, 1)
            start = at + 8 if size <= 4 else struct.unpack_from(order + "I", tiff, at + 8)[0]
            found[tag] = tiff[start:start + size]
        return found

    top = entries(struct.unpack_from(order + "I", tiff, 4)[0])
    raw = top.get(_USER_COMMENT)
    if raw is None and len(top.get(_EXIF_IFD, b"")) == 4:
        raw = entries(struct.unpack_from(order + "I", top[_EXIF_IFD])[0]).get(_USER_COMMENT)
    if not raw:
        return ""
    header, body = raw[:8], raw[8:]
    if header == b"UNICODE\x00":
        return _utf16(body, little=order == "<")
    if header in (b"ASCII\x00\x00\x00", b"\x00" * 8):
        return body.decode("utf-8", "replace").rstrip("\x00")
    return raw.decode("utf-8", "replace").rstrip("\x00")


def _utf16(body: bytes, little: bool) -> str:
    """UTF-16 text, its byte order taken from a BOM or from where ASCII's zero bytes fall (writers
    disagree on whether it follows the TIFF header's), else from the TIFF header."""
    if body[:2] in (b"\xff\xfe", b"\xfe\xff"):
        little, body = body[:2] == b"\xff\xfe", body[2:]
    elif len(body) >= 2 and (body[0] == 0) != (body[1] == 0):
        little = body[1] == 0
    return body.decode("utf-16-le" if little else "utf-16-be", "replace").rstrip("\x00")
