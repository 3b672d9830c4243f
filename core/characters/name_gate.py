"""The display-name gate: one check for every name that enters a scene, lookalikes included.

A display name reaches every other actor's briefing (`Also present: …`), starts lines of the
transcripts and is listed in `notes.md`, so it must never read as one of the engine's own lines. A
name is refused when it:

- is empty, or longer than `NAME_MAX` characters;
- holds a line break or a control character;
- holds an invisible or direction-changing character (`INVISIBLE`: zero-width spaces and joiners,
  bidi embeddings, overrides and isolates): what a reader sees would not be what the text says;
- once normalised (`normalised`: Unicode NFKC, Cyrillic and Greek letters that look Latin read as
  the Latin ones, case folded, each run of punctuation and spaces collapsed to one separator) holds an engine marker (`MARKERS`): `DIRECTOR NOTE`, `SCENE END` or
  `SCENE START` in any spelling, or `EVENT` or `SYSTEM` set off by punctuation (`[SYSTEM] …`,
  `EVENT: …`, `SYSTEM - …`, the fullwidth `：` and the engine's own defused form `DIRECTOR NOTE - …`
  alike), while `System Admin` or `Event Horizon` stay names; or opens on `(you)` set off by brackets
  (`(you) Bob`, `[You] Bob`), the mark isolation (a) puts before an actor's own lines in what it
  witnessed, or as another line of the engine's framing of a turn (`YOUR LAST PRIVATE THOUGHT`,
  `WHAT YOU HAVE WITNESSED`, `BEAT 3`, `Respond in character`): a line of speech starts with its
  speaker's name, so another actor so named would have their lines read as the recipient's own
  lines, thoughts or instructions.

The checks are linear in the name (which is at most `NAME_MAX` characters anyway).
"""

from __future__ import annotations

import re
import unicodedata

from promptdesk.core.protocol.lookalikes import INVISIBLE as INVISIBLE
from promptdesk.core.protocol.lookalikes import LATIN_LOOKALIKES
from promptdesk.core.protocol.sanitize import LONE_SURROGATE

NAME_MAX = 100
"""The longest display name, in characters (every other actor's briefing lists it)."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SEPARATORS = re.compile(r"[\W_]+")
_JOINED = re.compile(r"(?<=[^\W_])[-'\u2019](?=[^\W_])")
"""A hyphen or apostrophe inside a word joins it (`System-Admin`, `O'Brien` are one word each)."""
_WORDS = r"(?:event|system)"
_MARKERS = re.compile(r"(?:^|[ |])(?:director[ |]?note|scene[ |]?end|scene[ |]?start)(?=[ |]|$)"
                      rf"|\|{_WORDS}(?=[ |]|$)|(?:^|[ |]){_WORDS}\|")
MARKERS = ("DIRECTOR NOTE", "EVENT", "SYSTEM", "SCENE END", "SCENE START")
_FRAMING = re.compile(r"^(?:\|you\||your last private thought|what you have witnessed|respond in character|beat \d)")
FRAMING = ("(you)", "YOUR LAST PRIVATE THOUGHT", "WHAT YOU HAVE WITNESSED", "Respond in character", "BEAT 3")
"""How the engine frames what an actor receives, at the start of a line where a speaker's name stands."""


def normalised(name: str) -> str:
    """The name as the marker check reads it: NFKC, lookalike letters as Latin, case folded, a hyphen or apostrophe inside a word
    dropped, each other run of spaces and punctuation one separator (` ` for spaces alone, `|` when it
    holds punctuation), trimmed."""
    text = _JOINED.sub("", unicodedata.normalize("NFKC", name).translate(LATIN_LOOKALIKES).casefold())
    return _SEPARATORS.sub(lambda run: " " if run.group().isspace() else "|", text).strip()


def name_problem(name: str) -> str | None:
    """What keeps `name` from being a display name, or None (see the module's docstring)."""
    if not name.strip():
        return "is empty"
    if len(name) > NAME_MAX:
        return f"is {len(name):,} characters long, over the limit of {NAME_MAX}"
    if _CONTROL.search(name):
        return "holds a newline or control character"
    if half := LONE_SURROGATE.search(name):
        return (f"holds U+{ord(half.group()):04X}, half of a character (a `\\u{ord(half.group()):04x}` escape, or a byte that is "
                "not UTF-8), which no file can hold")
    hidden = sorted({f"U+{ord(ch):04X}" for ch in name if ord(ch) in INVISIBLE})
    if hidden:
        return (f"holds an invisible or direction-changing character ({', '.join(hidden)}): what is shown would "
                "not be what it says")
    if _MARKERS.search(normalised(name)):
        return f"reads as one of the engine's own lines (it holds a marker: {', '.join(MARKERS)})"
    if _FRAMING.search(normalised(name)):
        return (f"reads as one of the engine's own lines (it opens as the engine frames a turn: "
                f"{', '.join(FRAMING)})")
    return None
