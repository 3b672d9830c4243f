"""The actor protocol: `<thinking>`/`<speech>` tags (spec 000) around a bracket header (spec 004).

An actor answers::

    <thinking>Private reasoning, never routed.</thinking>
    <speech>[TO: Bob, TONE: frustrated, *folds arms*] "You missed the deadline."</speech>

Fail closed: only the body of a well-formed `<speech>` element at the top level of the answer is
ever public. Everything else is private: thinking, text before, between or after the tags, the
inside of any other tag (`<think>`, `<reasoning>`, `<Speech>`, `<thinking type="x">`, any name),
code fences, comments, a `<speech>` nested in any of those, a speech holding a tag of its own, an unclosed
speech, and every speech when there are two. `<speech>` and `</speech>` are the only public
tags and are matched exactly (lower case, no spaces, no attributes).

Everything here is a pure function of its input string: no I/O, and nothing raises on any text.
`parse_turn` reads a whole response, `parse_speech` reads the header inside a speech, `salvage`
keeps what may be kept of a response that stayed malformed after corrections, and `TagSplitter`
routes streamed fragments to the `think` or `speech` channel as they arrive. `parse_turn` and
`TagSplitter` share one reader (`promptdesk.core.protocol.tags.TagReader`), so the live panes and the record follow one rule.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Literal, Mapping

from promptdesk.core.protocol.tags import Channel, TagReader

CORRECTION_PROMPT = (
    "Your last response did not use `<thinking>` and `<speech>` tags. "
    "Please reformat without changing the content."
)
EXPLICIT_CLOSE = "*[the scene ends here]*"

Action = Literal["speak", "interrupt", "silent", "react"]

_CLOSE_NOISE_RE = re.compile(r"[*\[\].!]")
_KEY_VALUE_RE = re.compile(r"\A([A-Za-z][A-Za-z _-]{0,30}?)\s*:\s*(.*)\Z", re.DOTALL)
_INTERRUPT_RE = re.compile(
    r"\Ainterrupt\b(?:\s*:)?\s*(?:after\b(?:\s*:)?\s*(.*))?\Z", re.IGNORECASE | re.DOTALL
)
_NONVERBAL_RE = re.compile(r"\*([^*]*)\*?")
_QUOTES = "\"“”"
_TO_RE = re.compile(r"\bTO\s*:\s*", re.IGNORECASE)
_FLAGS: dict[str, Action] = {"silent": "silent", "react": "react", "speak": "speak"}
HEADER_MAX = 2000
"""The most characters a bracket header may span: a `[` not closed within them opens no header (the
speech is plain), so reading a header costs the same whatever the length of the reply."""
_BOLD_HEADER = re.compile(r"\*\*(\[.{0,%d}?\])\*\*" % HEADER_MAX, re.DOTALL)
"""A leading header in Markdown bold (read within `HEADER_MAX` characters)."""


@dataclass(frozen=True)
class Speech:
    """One speech as the director and the transcript see it.

    `content` is the spoken words only, surrounding quotes stripped ("" for silent and react);
    `raw` is the whole speech block as written. `nonverbal` joins several `*gestures*` with "; ".
    `closes_scene` is the explicit close of spec 000: a line that is `*[the scene ends here]*`.
    """

    action: Action
    content: str
    raw: str
    target: str | None = None
    tone: str | None = None
    nonverbal: str | None = None
    interrupt_after: str | None = None
    closes_scene: bool = False


@dataclass(frozen=True)
class ParsedTurn:
    """One actor response split by the tag protocol.

    `speech` is the one public part: the body of the response's only `<speech>` element when that
    element is well-formed (top level, exact tags, closed, no tag inside); otherwise None, and the
    actor is silent. `thinking` is the body of the first top-level `<thinking>` element (private).
    `well_formed` is True only for exactly one `<thinking>` and one `<speech>` element (either
    order) with nothing but whitespace outside them, and a reasoning preamble before them allowed
    (`reasoning`: a reasoning model's chain of thought, private); otherwise `problems` says why, in
    words that never quote the response.
    """

    thinking: str | None
    speech: Speech | None
    well_formed: bool
    problems: tuple[str, ...] = ()
    reasoning: str | None = None


@dataclass
class _Header:
    """What the items of a bracket header said, gathered one item at a time."""

    action: Action = "speak"
    target: str | None = None
    tone: str | None = None
    interrupt_after: str | None = None
    nonverbal: tuple[str, ...] = ()
    recognised: bool = False


def parse_speech(text: str, cast: Mapping[str, str] | None = None) -> Speech:
    """Read a speech: an optional `[...]` header of spec 004 Appendix B, then the words.

    `cast` maps every way a cast member may be named (display name, slug) to the display name the
    record keeps. A `TO:` that starts with one of those (longest first, any case, quoted or not)
    addresses that member whole, so a name holding a comma, a bracket or a quote is never cut at
    its punctuation. Without a match the header is read item by item as before.

    A leading bracket counts as a header only if one of its items is understood (TO:, TONE:,
    any `KEY: value`, INTERRUPT, SILENT, REACT or `*gesture*`), so `[laughs] Hi` and
    `*[opens the door]* Hi` stay plain speech; a header in Markdown bold (`**[TO: Bob]** Hi`) is
    read as the header. Unknown keys are ignored. Brackets nest, so a
    name such as `[Evil]` or `Dr. [Redacted]` may stand in a header.
    """
    raw = text.strip()
    closes = any(is_close_line(line) for line in raw.splitlines())
    header, rest = _split_header(raw, cast or {})
    bold = _BOLD_HEADER.match(raw) if header is None else None
    if bold:  # `**[TO: Bob, TONE: sad]** "…"`: a header set in Markdown bold is still the header
        header, rest = _split_header(bold.group(1) + raw[bold.end():], cast or {})
    if header is None:
        gestures, said = _gestures_around(raw)
        closes = closes or any(is_close_line(g) for g in gestures)
        return Speech("speak", _unquote(said), raw, nonverbal="; ".join(gestures) or None, closes_scene=closes)
    gestures, rest = ((), rest) if header.action in ("silent", "react") else _gestures_around(rest)
    closes = closes or any(is_close_line(g) for g in (*header.nonverbal, *gestures))
    content = "" if header.action in ("silent", "react") else _unquote(rest)
    return Speech(
        action=header.action,
        content=content,
        raw=raw,
        target=header.target,
        tone=header.tone,
        nonverbal="; ".join(header.nonverbal + gestures) or None,
        interrupt_after=header.interrupt_after,
        closes_scene=closes,
    )


def parse_turn(raw: str, cast: Mapping[str, str] | None = None) -> ParsedTurn:
    """Split a response into its private thinking and its one public speech (see `ParsedTurn`);
    `cast` resolves the speech's `TO:` as in `parse_speech`."""
    reader = TagReader()
    reader.feed(raw, final=True)
    body = reader.public_speech()
    problems = reader.problems()
    return ParsedTurn(thinking=reader.thinking(), speech=None if body is None else parse_speech(body, cast),
                      well_formed=not problems, problems=problems, reasoning=reader.reasoning)


def salvage(raw: str, cast: Mapping[str, str] | None = None) -> ParsedTurn:
    """What may be kept once corrections failed: never more than the well-formed speech.

    Private text is never promoted to speech: with no well-formed `<speech>` element the speech is
    None and the actor is silent for the turn. The result is never well-formed.
    """
    turn = parse_turn(raw, cast)
    return replace(turn, well_formed=False, problems=turn.problems or ("salvaged",))


class TagSplitter:
    """Route streamed fragments: private elements to "think", the public speech to "speech".

    Follows exactly the rule of `parse_turn` (one shared reader): text outside a top-level
    `<speech>` element never reaches "speech", tags are never emitted, and top-level text outside
    elements is dropped. A tag or fence split across fragments is held back until it is complete;
    `flush()` releases what is held at the end.
    """

    def __init__(self) -> None:
        self._reader = TagReader()

    def feed(self, fragment: str) -> list[tuple[Channel, str]]:
        """Take the next fragment; return the (channel, text) pieces it completes, in order."""
        return self._reader.feed(fragment)

    def flush(self) -> list[tuple[Channel, str]]:
        """End of stream: release text held back as a possible partial tag or fence."""
        return self._reader.feed("", final=True)


def is_close_line(line: str) -> bool:
    """Whether a line is the explicit close, ignoring case, spacing, `*`, `[`, `]`, `.` and `!`."""
    words = _CLOSE_NOISE_RE.sub(" ", line).lower().split()
    return words == ["the", "scene", "ends", "here"]



def _header_end(text: str) -> int | None:
    """The index just past the bracket that closes the leading `[`, or None without one.

    Brackets nest and brackets inside quotes do not count; when that finds no end, brackets
    count even inside quotes; when nothing balances, the header ends at its first `]`.
    """
    for quotes in (True, False):
        end = _balanced_end(text, quotes=quotes)
        if end is not None:
            return end
    first = text.find("]")
    return first + 1 if first > 0 else None


def _balanced_end(text: str, *, quotes: bool) -> int | None:
    """Where the bracket opened at index 0 closes, counting nested brackets."""
    depth, in_quote = 0, False
    for index, ch in enumerate(text):
        if quotes and ch in _QUOTES:
            in_quote = not in_quote
        elif not in_quote and ch in "[]":
            depth += 1 if ch == "[" else -1
            if depth == 0:
                return index + 1
    return None


def _split_header(text: str, cast: Mapping[str, str]) -> tuple[_Header | None, str]:
    """Split a leading bracket header (within `HEADER_MAX` characters) from the rest; (None, text)
    when there is none."""
    head = text[:HEADER_MAX]
    end = _cast_header_end(head, cast)
    if end is None and head.startswith("["):
        end = _header_end(head)
    if end is None:
        return None, text
    header = _Header()
    inner, target = _take_cast_target(text[1:end - 1], cast)
    for item in _header_items(inner):
        _read_item(header, item)
    if target is not None:
        header.target, header.recognised = target, True
    if not header.recognised:
        return None, text
    return header, text[end:]


def _cast_header_end(text: str, cast: Mapping[str, str]) -> int | None:
    """The end of a leading header whose `TO:` names a cast member holding a bracket or quote."""
    held = {name: shown for name, shown in cast.items() if any(ch in name for ch in '[]"“”')}
    if not text.startswith("[") or not held:
        return None
    for end in (i + 1 for i, ch in enumerate(text) if ch == "]"):
        rest, target = _take_cast_target(text[1:end - 1], held)
        if target is not None and rest.count("[") == rest.count("]"):
            return end
    return None


def _take_cast_target(inner: str, cast: Mapping[str, str]) -> tuple[str, str | None]:
    """Cut a `TO:` item naming a cast member (longest name first) out of a header's inside.

    Returns the inside without that item and the member's display name, or (inner, None). A header
    that names no one as written is read again in its compatibility form (NFKC), names too: a name
    written decomposed (`José` as `e` + U+0301) or in full-width letters, and a header written with a
    full-width colon or comma, as a reply in Chinese or Japanese writes it (`[TO：李明，TONE: warm]`, or
    with the ideographic comma `、`; the Arabic comma `،` too), name the same member."""
    found = _cast_target(inner, cast)
    if found[1] is None and (not inner.isascii() or not all(name.isascii() for name in cast)):
        folded = {_compatible(name): shown for name, shown in cast.items()}
        again = _cast_target(_compatible(inner), folded)
        if again[1] is not None:
            return again
    return found


_COMMAS = str.maketrans({"،": ",", "、": ","})
"""The Arabic comma and the ideographic comma, which NFKC leaves as they are."""


def _compatible(text: str) -> str:
    """A text in its compatibility form (NFKC), its commas of other scripts made plain."""
    return unicodedata.normalize("NFKC", text).translate(_COMMAS)


def _cast_target(inner: str, cast: Mapping[str, str]) -> tuple[str, str | None]:
    """`_take_cast_target` of the text as written."""
    for match in _TO_RE.finditer(inner):
        if inner[:match.start()].strip() and not inner[:match.start()].rstrip().endswith(","):
            continue
        after = inner[match.end():]
        for name in sorted(cast, key=len, reverse=True):
            for opening, closing in (("", ""), ('"', '"'), ("“", "”")):
                said = f"{opening}{name}{closing}"
                if after[:len(said)].lower() == said.lower() and _ends_item(after[len(said):]):
                    return inner[:match.start()] + after[len(said):].lstrip().removeprefix(","), cast[name]
    return inner, None


def _ends_item(rest: str) -> bool:
    """Whether what follows a name ends its header item (nothing more, or a comma)."""
    rest = rest.lstrip()
    return not rest or rest.startswith(",")


def _header_items(inner: str) -> list[str]:
    """Split a header on commas outside quotes, asterisks and balanced brackets (a plain split on
    commas when quotes do not balance, and one that ignores brackets when they do not)."""
    items, depth_left = _split_items(inner, brackets=True)
    if depth_left:
        items, _ = _split_items(inner, brackets=False)
    return items


def _split_items(inner: str, *, brackets: bool) -> tuple[list[str], int]:
    """The items of a header and the bracket depth left open at its end."""
    items, current, in_quote, in_stars, depth = [], [], False, False, 0
    for ch in inner:
        if ch in _QUOTES:
            in_quote = not in_quote
        elif ch == "*" and not in_quote:
            in_stars = not in_stars
        elif brackets and ch in "[]" and not in_quote:
            depth += 1 if ch == "[" else -1
        if ch == "," and not in_quote and not in_stars and depth <= 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    if in_quote:
        items = inner.split(",")
    return [item.strip() for item in items if item.strip()], depth


def _read_item(header: _Header, item: str) -> None:
    """Fold one header item (`TO: x`, `TONE: x`, a flag, `INTERRUPT after "x"`, `*x*`) in."""
    gestures = [g.strip() for g in _NONVERBAL_RE.findall(item) if g.strip()]
    if gestures:
        header.nonverbal += tuple(gestures)
        header.recognised = True
    rest = _NONVERBAL_RE.sub("", item).strip()
    interrupt = _INTERRUPT_RE.match(rest)
    key_value = _KEY_VALUE_RE.match(rest)
    if interrupt:
        header.action = "interrupt"
        header.interrupt_after = _unquote(interrupt.group(1) or "") or None
    elif rest.lower() in _FLAGS:
        if header.action != "interrupt":
            header.action = _FLAGS[rest.lower()]
    elif key_value:
        _read_key(header, key_value.group(1), key_value.group(2))
    else:
        return
    header.recognised = True


def _read_key(header: _Header, key: str, value: str) -> None:
    """Apply a `KEY: value` item; keys other than TO and TONE are ignored."""
    key, value = key.strip().lower(), _unquote(value) or None
    if key == "to":
        header.target = value
    elif key == "tone":
        header.tone = value


_EDGE_GESTURE_RE = re.compile(r"\A\s*\*\[?([^*\]\n]+)\]?\*|\*\[?([^*\]\n]+)\]?\*\s*\Z")
_ONE_QUOTED_RE = re.compile(r'\A(?:"[^"]*"|\u201c[^\u201c\u201d]*\u201d)\Z')


def _gestures_around(text: str) -> tuple[tuple[str, ...], str]:
    """`*gestures*` before or after the one quoted string a speech says (`*waves* "Goodbye."`, a gesture
    written outside the header), and that string; `((), text)` when what is left is not one quoted
    string (`*[opens the door]* Hi` is plain speech, its direction part of it)."""
    gestures: list[str] = []
    rest = text.strip()
    while match := _EDGE_GESTURE_RE.search(rest):
        gestures.append((match.group(1) or match.group(2)).strip())
        rest = (rest[:match.start()] + rest[match.end():]).strip()
    if not gestures or not _ONE_QUOTED_RE.match(rest):
        return (), text
    return tuple(g for g in gestures if g), rest


def _unquote(text: str) -> str:
    """Strip the quotes around text that is one quoted string (or lacks only its closing quote)."""
    text = text.strip()
    if not text or text[0] not in _QUOTES:
        return text
    inner = text[1:]
    if inner and inner[-1] in _QUOTES and not any(q in inner[:-1] for q in _QUOTES):
        return inner[:-1].strip()
    if not any(q in inner for q in _QUOTES):
        return inner.strip()
    return text
