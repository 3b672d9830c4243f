"""Character Card V1, V2 and V3 (the character community's format), from JSON, PNG or WebP.

V1 is a flat object (`name`, `description`, `personality`, `scenario`, `first_mes`, `mes_example`);
V2 (`spec: chara_card_v2`) and V3 (`spec: chara_card_v3`) put those and more under `data`. A PNG card
carries the JSON base64-encoded in a `chara` (V1/V2) or `ccv3` (V3) text chunk; `ccv3` wins when both
are present. A WebP card carries it in its XMP (`chara`/`ccv3`) or its EXIF UserComment. The image's
metadata is read without decoding a pixel (`promptdesk.core.characters.importers.images`).

Mapping (README "Bring your characters"): `name` -> name and slug; `description` and `personality`
-> profile sections; `mes_example` -> a "Voice" section (`<START>` markers removed); `scenario` and
`first_mes` -> scene suggestions; `creator_notes`, `tags`, `creator`, `character_version` -> front
matter; `system_prompt`, `post_history_instructions`, the lorebook and alternate greetings are
dropped and reported, as is every other field the import has no place for. Macros are resolved by
`promptdesk.core.characters.importers.macros`: `{{char}}` becomes the character's nickname (V3) or name,
`{{user}}` the visitor's name, and a maker's `{{// notes}}` are never written.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any

from promptdesk.core.characters.importers.images import KEYS_SHOWN, kind, png_texts, webp_texts
from promptdesk.core.characters.importers.macros import CardText
from promptdesk.core.characters.name_gate import normalised
from promptdesk.core.characters.importers.model import MAX_SOURCE_BYTES, Imported, ImportProblem, bullets, text_field
from promptdesk.core.protocol.bounded import Unbounded, load_json
from promptdesk.core.protocol.lookalikes import without_bidi
from promptdesk.core.protocol.sanitize import strip_controls

DEFAULT_USER = "the visitor"
DROPPED_FIELDS = ("system_prompt", "post_history_instructions", "character_book", "alternate_greetings",
                  "group_only_greetings", "assets", "extensions")
_START = re.compile(r"^\s*<START>\s*$", re.IGNORECASE | re.MULTILINE)
READ_FIELDS = frozenset({"name", "char_name", "description", "char_persona", "personality", "mes_example",
                         "example_dialogue", "scenario", "world_scenario", "first_mes", "char_greeting", "nickname",
                         "creator", "character_version", "creator_notes", "creatorcomment", "tags", "spec",
                         "spec_version"})
"""The fields a card's text or provenance is read from; any other field with content is reported dropped."""
CARD_KEYS = ("ccv3", "chara")
"""The text chunks a card image carries its JSON in, the first found winning."""
_BYTE_LIST = re.compile(r"\d{1,3}(?:\s*,\s*\d{1,3})*")


def is_card(data: Any) -> bool:
    """Whether parsed JSON looks like a character card of any version."""
    if not isinstance(data, dict):
        return False
    if str(data.get("spec", "")).startswith("chara_card_") or _specless_v2(data):
        return True
    return "name" in data and any(k in data for k in ("first_mes", "mes_example", "personality", "char_persona"))


def card_json_from_image(path: Path, data: bytes) -> tuple[dict[str, Any], list[str]]:
    """The card JSON inside a PNG's `ccv3` or `chara` text chunk, or a WebP's XMP or EXIF UserComment,
    and what the person importing should know about where it came from (a second chunk not read); any
    other image type is refused as what it is. No pixel is decoded (`importers.images`)."""
    where, image = str(path), kind(data[:16])
    if image == "PNG":
        texts, found = png_texts(data, where, CARD_KEYS)
        key = next((k for k in CARD_KEYS if k in texts), None)
        if key is not None:
            count = sum(1 for k in found if k.lower() == key)
            more = [f"this PNG holds {count} `{key}` chunks; the first was read (as SillyTavern reads it), the "
                    f"others were not"] if count > 1 else []
            return decode_card_text(path, key, texts[key]), more
        keys = sorted({_keyword_shown(k) for k in found})
        shown = ", ".join(keys[:KEYS_SHOWN]) + (f" and {len(keys) - KEYS_SHOWN:,} more" if len(keys) > KEYS_SHOWN else "")
        raise ImportProblem(f"{path}: this PNG holds no character card (no `chara` or `ccv3` text chunk; "
                            f"text chunks found: {shown or 'none'})")
    if image == "WebP":
        texts, xmp_problem = webp_texts(data, where)
        key = next((k for k in (*CARD_KEYS, "UserComment") if k in texts), None)
        if key is not None:
            return decode_card_text(path, key, texts[key]), []
        xmp = f"{xmp_problem}, so" if xmp_problem else "no `chara` or `ccv3` in its XMP metadata,"
        raise ImportProblem(f"{path}: this WebP holds no character card ({xmp} no card in its EXIF UserComment)")
    raise ImportProblem(f"{path}: a {image} image; a character card is a PNG or WebP image or a JSON file "
                        "(export the card as PNG, WebP or JSON from the app that made it)")


KEYWORD_MAX = 79
"""The longest keyword a PNG text chunk may have (the PNG specification): a longer one (a chunk with no
keyword separator is all keyword) is cut where a refusal names it."""


def _keyword_shown(keyword: str) -> str:
    keyword = without_bidi(strip_controls(keyword))
    return keyword if len(keyword) <= KEYWORD_MAX else f"{keyword[:KEYWORD_MAX]}… ({len(keyword):,} characters)"


def decode_card_text(path: Path, key: str, value: str) -> dict[str, Any]:
    """The card JSON object a text chunk holds: base64 of UTF-8 JSON (or, as some WebP writers
    leave it, the JSON itself or its UTF-8 bytes as comma-separated numbers), each failure named."""
    value = value.strip()
    if value.startswith("{"):
        raw = value.encode("utf-8", "surrogatepass")
    elif _BYTE_LIST.fullmatch(value):
        numbers = [int(n) for n in value.split(",")]
        if any(n > 255 for n in numbers):
            raise ImportProblem(f"{path}: the `{key}` text is a list of numbers that are not bytes")
        raw = bytes(numbers)
    else:
        raw = _base64(path, key, value)
    if len(raw) > MAX_SOURCE_BYTES:
        raise ImportProblem(f"{path}: the `{key}` chunk holds {len(raw):,} bytes; the limit is {MAX_SOURCE_BYTES:,}")
    try:
        data = load_json(raw.decode("utf-8"))
    except Unbounded as exc:
        raise ImportProblem(f"{path}: the `{key}` chunk's JSON: {exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ImportProblem(f"{path}: the `{key}` chunk is not UTF-8 JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ImportProblem(f"{path}: the `{key}` chunk must hold a JSON object")
    return data


_URL_SAFE = str.maketrans("-_", "+/")


def _base64(path: Path, key: str, value: str) -> bytes:
    """Base64 read as SillyTavern (Node) reads it: line breaks and spaces ignored, the URL-safe
    alphabet and missing padding accepted; anything else is refused, naming the chunk."""
    compact = "".join(value.split()).translate(_URL_SAFE)
    compact += "=" * (-len(compact) % 4)
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise ImportProblem(f"{path}: the `{key}` chunk is not valid base64") from None


def card_fields(path: Path, card: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(version label, the object holding the fields) for a card of any version."""
    spec = str(card.get("spec", ""))
    if spec in ("chara_card_v2", "chara_card_v3"):
        data = card.get("data")
        if not isinstance(data, dict):
            raise ImportProblem(f"{path}: a {spec} card needs a `data` object")
        return ("card-v3" if spec.endswith("v3") else "card-v2"), data
    if spec:
        raise ImportProblem(f"{path}: unknown card spec {spec!r} (expected chara_card_v2 or chara_card_v3)")
    return ("card-v2", card["data"]) if _specless_v2(card) else ("card-v1", card)


def _specless_v2(card: dict[str, Any]) -> bool:
    """A card without `spec` whose fields sit under `data` (as some exporters write it), not at the top."""
    data = card.get("data")
    return not card.get("spec") and not card.get("name") and isinstance(data, dict) and bool(data.get("name"))


def from_card(path: Path, card: dict[str, Any], user: str = DEFAULT_USER) -> Imported:
    """An `Imported` character from a card's JSON, its macros resolved (`importers.macros`)."""
    version, data = card_fields(path, card)
    where = str(path)
    name = text_field(data, "name", where) or text_field(data, "char_name", where)
    if not name:
        raise ImportProblem(f"{path}: the card has no `name`")
    nickname = text_field(data, "nickname", where)
    if user != DEFAULT_USER and normalised(user) in {normalised(name), normalised(nickname or name)}:
        raise ImportProblem(f"{path}: --user {user!r} is the card's own character, {name}; {{{{user}}}} is the other "
                            f"role in its story: give --user another name")
    text = CardText(char=nickname or name, user=user)

    def read(key: str, *older: str) -> str:
        found = next((k for k in (key, *older) if text_field(data, k, where)), key)
        return text.fill(key, text_field(data, found, where))

    description = read("description", "char_persona")
    personality = read("personality")
    voice = _voice(read("mes_example", "example_dialogue"))
    sections = [(title, body) for title, body in (
        ("Description", description), ("Personality", bullets(personality)), ("Voice", voice)) if body]
    if not sections:
        raise ImportProblem(f"{path}: the card has no description, personality or example messages to play from"
                            + _only_lore(data))
    imported = Imported(name=name, source=version, description=_first_sentence(description or personality),
                        sections=sections, front=_provenance(data, where, version, path))
    imported.snippet = {k: v for k, v in (("scenario", read("scenario", "world_scenario")),
                                          ("opener", read("first_mes", "char_greeting"))) if v}
    imported.dropped = [key for key in DROPPED_FIELDS if _present(data.get(key))] + [
        key for key, value in data.items() if key not in READ_FIELDS and key not in DROPPED_FIELDS and _present(value)]
    if nickname and nickname != name:
        imported.notices.append(f"{{{{char}}}} in the card was written as its nickname {nickname!r}; its name stays "
                                f"{name!r}")
    imported.user_filled = text.user_seen
    imported.notices += text.notices()
    return imported


def _only_lore(data: dict[str, Any]) -> str:
    """What a card with nothing to play from does hold, when it is a lorebook (a world or scenario card
    keeps everything there), so the refusal does not read as an empty or broken file."""
    book = data.get("character_book")
    entries = book.get("entries") if isinstance(book, dict) else None
    if not isinstance(entries, (list, dict)) or not entries:
        return ""
    return (f": what it holds is in its lorebook (`character_book`, {len(entries)} "
            f"entr{'y' if len(entries) == 1 else 'ies'}), which Promptdesk does not read (a world or scenario card, "
            f"not a character)")


def _voice(examples: str) -> str:
    """Example dialogue as a block of lines, `<START>` separators removed."""
    lines = [line.rstrip() for line in _START.sub("", examples).splitlines()]
    kept = [line for line in lines if line.strip()]
    return "Example lines, as this character speaks:\n\n" + "\n".join(f"> {line}" for line in kept) if kept else ""


def _first_sentence(text: str, limit: int = 200) -> str:
    """A one-line summary for front matter `description` and the console's cast check."""
    first = re.split(r"(?<=[.!?])\s+", " ".join(text.split()), maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _provenance(data: dict[str, Any], where: str, version: str, path: Path) -> dict[str, Any]:
    """Front matter kept so the character's origin stays known."""
    front: dict[str, Any] = {"source": f"{version} from {path.name}"}
    for key in ("nickname", "creator", "character_version", "creator_notes"):
        if value := text_field(data, key, where) or (key == "creator_notes" and text_field(data, "creatorcomment", where)):
            front[key] = value
    tags = data.get("tags")
    if isinstance(tags, list) and tags:
        front["tags"] = [str(t) for t in tags if isinstance(t, (str, int, float))]
    return front


def _present(value: Any) -> bool:
    """Whether a dropped field actually carried something."""
    return bool(value) if not isinstance(value, dict) else any(_present(v) for v in value.values())
