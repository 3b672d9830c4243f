"""Reading the factual lines an actor is routed: speech in spec 004's form, world events, notes.

A speech line looks like `Alice [TO: Bob, TONE: angry, *folds arms*] "words"`; a world event like
`[EVENT: Phone rings]`; a director's note like `DIRECTOR NOTE: ...`. Anything else is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_EVENT = re.compile(r"^\[EVENT:\s*(.*?)\]\s*$")
_NOTE = re.compile(r"^DIRECTOR NOTE:\s*(.*)$")
_HEADER = r'(?P<header>\[(?:[^\]"]|"[^"]*")*\])'
_SPEECH = re.compile(
    r'^(?P<own>\(you\)\s*)?(?P<speaker>[^\W\d_][^\[\]"<>:]{0,99}?)\s*' + _HEADER + r'?\s*(?:"(?P<words>.*)")?\s*$',
    re.DOTALL)
MAX_NAME_WORDS = 8
"""A speaker's name is a letter of any script, then at most 100 characters in this many words (longer
text before a header is prose, not a name)."""
_BLOCK = re.compile(r"^\s*" + _HEADER + r'?\s*(?:"(?P<words>.*)")?\s*$', re.DOTALL)


@dataclass(frozen=True)
class Line:
    """One routed item. `kind` is speech | event | note; `text` the words, event or note."""

    kind: str
    text: str
    speaker: str = ""
    target: str = ""
    tone: str = ""
    nonverbal: str = ""
    action: str = "speak"
    interrupt_after: str = ""
    own: bool = False


def logical_lines(text: str) -> list[str]:
    """Physical lines joined while a quotation is still open (speech may span lines)."""
    merged: list[str] = []
    buffer = ""
    for raw in text.splitlines():
        buffer = f"{buffer}\n{raw}" if buffer else raw
        if buffer.count('"') % 2 == 0:
            merged.append(buffer.strip())
            buffer = ""
    if buffer:
        merged.append(buffer.strip())
    return [line for line in merged if line]


@lru_cache(maxsize=16384)
def parse_line(line: str) -> Line | None:
    """One logical line as a routed item, or None when it is not one. Read once per text (a routed
    line reaches every other actor of a crowd; a `Line` is frozen, so it is shared)."""
    if match := _EVENT.match(line):
        return Line("event", match.group(1).strip())
    if match := _NOTE.match(line):
        return Line("note", match.group(1).strip())
    match = _SPEECH.match(line)
    if not match or not (match.group("header") or match.group("words") is not None):
        return None
    speaker = match.group("speaker").strip()
    if len(speaker.split()) > MAX_NAME_WORDS:
        return None
    fields = header_fields(match.group("header") or "")
    return Line("speech", (match.group("words") or "").strip(), speaker=speaker,
                own=bool(match.group("own")), **fields)


def parse_speech_block(block: str, speaker: str = "") -> Line | None:
    """The content of a `<speech>` block (header and quoted words) as a speech line."""
    match = _BLOCK.match(block.strip())
    if not match or not (match.group("header") or match.group("words") is not None):
        return None
    fields = header_fields(match.group("header") or "")
    return Line("speech", (match.group("words") or "").strip(), speaker=speaker, own=True, **fields)


def header_fields(header: str) -> dict[str, str]:
    """TO, TONE, the gesture and the action of a bracket header."""
    body = header.strip("[]")
    action = "speak"
    head = body.lstrip().upper()
    for word in ("INTERRUPT", "SILENT", "REACT"):
        if head.startswith(word):
            action = word.lower()
    after = re.search(r'INTERRUPT after "([^"]*)"', body)
    to = re.search(r"\bTO:\s*([^,\]*]+)", body)
    tone = re.search(r"\bTONE:\s*([^,\]*]+)", body)
    gesture = re.search(r"\*([^*]+)\*", body)
    return {"action": action, "interrupt_after": after.group(1) if after else "",
            "target": to.group(1).strip() if to else "", "tone": tone.group(1).strip() if tone else "",
            "nonverbal": gesture.group(1).strip() if gesture else ""}


def parse_lines(text: str) -> list[Line]:
    """Every routed item in a block of text, in order."""
    return [item for line in logical_lines(text) if (item := parse_line(line))]
