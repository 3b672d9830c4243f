"""The actor protocol: `<thinking>`/`<speech>` tags (spec 000) around a bracket header (spec 004).

An actor answers::

    <thinking>Private reasoning, never routed.</thinking>
    <speech>[TO: Bob, TONE: frustrated, *folds arms*] "You missed the deadline."</speech>

Everything here is a pure function of its input string: no I/O, and nothing raises on any text.
`parse_turn` reads a whole response, `parse_speech` reads the header inside a speech, `salvage`
makes the best of a response that stayed malformed after corrections, and `TagSplitter` routes
streamed fragments to the `think` or `speech` channel as they arrive.

Tags are matched case-insensitively and tolerate up to three spaces at each gap inside the
angle brackets (`< /Speech >`); bounding them keeps every match linear on hostile input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

CORRECTION_PROMPT = (
    "Your last response did not use `<thinking>` and `<speech>` tags. "
    "Please reformat without changing the content."
)
EXPLICIT_CLOSE = "*[the scene ends here]*"

Action = Literal["speak", "interrupt", "silent", "react"]
Channel = Literal["think", "speech"]

_TAG_RE = re.compile(r"<\s{0,3}(?:(/)\s{0,3})?(thinking|speech)\s{0,3}>", re.IGNORECASE)
_TAG_SPLIT_RE = re.compile(r"<\s{0,3}(?:/\s{0,3})?(?:thinking|speech)\s{0,3}>", re.IGNORECASE)
_PARTIAL_TAG_RE = re.compile(r"<\s{0,3}(?:/\s{0,3})?([a-z]{0,8})(\s{0,3})", re.IGNORECASE)
_CLOSE_NOISE_RE = re.compile(r"[*\[\].!]")
_HEADER_RE = re.compile(r"\A\[([^\]]*)\]")
_KEY_VALUE_RE = re.compile(r"\A([A-Za-z][A-Za-z _-]{0,30}?)\s*:\s*(.*)\Z", re.DOTALL)
_INTERRUPT_RE = re.compile(
    r"\Ainterrupt\b(?:\s*:)?\s*(?:after\b(?:\s*:)?\s*(.*))?\Z", re.IGNORECASE | re.DOTALL
)
_NONVERBAL_RE = re.compile(r"\*([^*]*)\*?")
_QUOTES = "\"“”"
_FLAGS: dict[str, Action] = {"silent": "silent", "react": "react", "speak": "speak"}


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

    `well_formed` is True only for exactly one `<thinking>` block and one `<speech>` block
    (either order) with nothing but whitespace outside them; otherwise `problems` says why.
    """

    thinking: str | None
    speech: Speech
    well_formed: bool
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Block:
    """A tagged span: `start:end` covers the tags, `body_start:body_end` the text inside."""

    name: str
    start: int
    body_start: int
    body_end: int
    end: int
    closed: bool


@dataclass
class _Header:
    """What the items of a bracket header said, gathered one item at a time."""

    action: Action = "speak"
    target: str | None = None
    tone: str | None = None
    interrupt_after: str | None = None
    nonverbal: tuple[str, ...] = ()
    recognised: bool = False


def parse_speech(text: str) -> Speech:
    """Read a speech: an optional `[...]` header of spec 004 Appendix B, then the words.

    A leading bracket counts as a header only if one of its items is understood (TO:, TONE:,
    any `KEY: value`, INTERRUPT, SILENT, REACT or `*gesture*`), so `[laughs] Hi` and
    `*[opens the door]* Hi` stay plain speech. Unknown keys are ignored.
    """
    raw = text.strip()
    closes = any(_is_close_line(line) for line in raw.splitlines())
    header, rest = _split_header(raw)
    if header is None:
        return Speech("speak", _unquote(raw), raw, closes_scene=closes)
    content = "" if header.action in ("silent", "react") else _unquote(rest)
    return Speech(
        action=header.action,
        content=content,
        raw=raw,
        target=header.target,
        tone=header.tone,
        nonverbal="; ".join(header.nonverbal) or None,
        interrupt_after=header.interrupt_after,
        closes_scene=closes,
    )


def parse_turn(raw: str) -> ParsedTurn:
    """Split a response into thinking and speech, and say whether it followed the protocol.

    The first `<speech>` block is the speech; with none, the text outside any `<thinking>`
    block (tags removed) is. An unclosed block runs to the next opening tag or the end.
    """
    blocks, stray = _scan(raw)
    thinking = [b for b in blocks if b.name == "thinking"]
    speeches = [b for b in blocks if b.name == "speech"]
    speech_text = _body(raw, speeches[0]) if speeches else _outside(raw, thinking)
    problems = _problems(raw, blocks, stray)
    return ParsedTurn(
        thinking=_body(raw, thinking[0]) if thinking else None,
        speech=parse_speech(speech_text),
        well_formed=not problems,
        problems=problems,
    )


def salvage(raw: str) -> ParsedTurn:
    """Best effort once corrections failed: every word outside `<thinking>` blocks is speech.

    Tags are removed and thinking is None. Text inside a `<thinking>` block is never put into
    the speech, so private reasoning cannot leak into the transcript or to the other actor.
    """
    blocks, _ = _scan(raw)
    thinking = [b for b in blocks if b.name == "thinking"]
    turn = parse_turn(raw)
    problems = turn.problems or ("salvaged",)
    return replace(turn, thinking=None, speech=parse_speech(_outside(raw, thinking)),
                   well_formed=False, problems=problems)


class TagSplitter:
    """Route streamed fragments: inside `<thinking>` to "think", inside `<speech>` to "speech".

    Tags are never emitted and text outside tags is dropped. Blocks pair up as in `parse_turn`:
    an opening tag switches channel, and only the matching closing tag ends it. A tag split
    across fragments is held back until complete; `flush()` releases what is held at the end.
    """

    def __init__(self) -> None:
        self._channel: Channel | None = None
        self._pending = ""

    def feed(self, fragment: str) -> list[tuple[Channel, str]]:
        """Take the next fragment; return the (channel, text) pieces it completes, in order."""
        self._pending += fragment
        out: list[tuple[Channel, str]] = []
        while self._pending:
            lt = self._pending.find("<")
            if lt < 0:
                self._emit(out, self._pending)
                self._pending = ""
            elif lt > 0:
                self._emit(out, self._pending[:lt])
                self._pending = self._pending[lt:]
            elif not self._take_tag(out):
                break
        return out

    def flush(self) -> list[tuple[Channel, str]]:
        """End of stream: release text held back as a possible partial tag."""
        out: list[tuple[Channel, str]] = []
        self._emit(out, self._pending)
        self._pending = ""
        return out

    def _take_tag(self, out: list[tuple[Channel, str]]) -> bool:
        """At a "<": consume a tag, a plain "<", or return False to wait for more text."""
        match = _TAG_RE.match(self._pending)
        if match:
            channel = _channel(match.group(2))
            if not match.group(1):
                self._channel = channel
            elif channel == self._channel:
                self._channel = None
            self._pending = self._pending[match.end():]
            return True
        if _could_become_tag(self._pending):
            return False
        self._emit(out, "<")
        self._pending = self._pending[1:]
        return True

    def _emit(self, out: list[tuple[Channel, str]], text: str) -> None:
        """Append text to the current channel, merging with the previous piece of that channel."""
        if not text or self._channel is None:
            return
        if out and out[-1][0] == self._channel:
            out[-1] = (self._channel, out[-1][1] + text)
        else:
            out.append((self._channel, text))


def _channel(tag_name: str) -> Channel:
    """The stream channel of a tag name."""
    return "think" if tag_name.lower() == "thinking" else "speech"


def _could_become_tag(text: str) -> bool:
    """Whether text (starting with "<") is an incomplete prefix of some protocol tag."""
    match = _PARTIAL_TAG_RE.fullmatch(text)
    if not match:
        return False
    name, trailing = match.group(1).lower(), match.group(2)
    if trailing:
        return name in ("thinking", "speech")
    return "thinking".startswith(name) or "speech".startswith(name)


def _is_close_line(line: str) -> bool:
    """Whether a line is the explicit close, ignoring case, spacing, `*`, `[`, `]`, `.` and `!`."""
    words = _CLOSE_NOISE_RE.sub(" ", line).lower().split()
    return words == ["the", "scene", "ends", "here"]


def _scan(raw: str) -> tuple[list[_Block], list[re.Match[str]]]:
    """Pair tags left to right into blocks; return the blocks and the unpaired closing tags."""
    blocks: list[_Block] = []
    stray: list[re.Match[str]] = []
    open_tag: re.Match[str] | None = None
    for tag in _TAG_RE.finditer(raw):
        closing, name = bool(tag.group(1)), tag.group(2).lower()
        if open_tag is None:
            if closing:
                stray.append(tag)
            else:
                open_tag = tag
        elif closing and name == open_tag.group(2).lower():
            span = (open_tag.start(), open_tag.end(), tag.start(), tag.end())
            blocks.append(_Block(name, *span, closed=True))
            open_tag = None
        elif closing:
            stray.append(tag)
        else:
            blocks.append(_unclosed(open_tag, tag.start()))
            open_tag = tag
    if open_tag is not None:
        blocks.append(_unclosed(open_tag, len(raw)))
    return blocks, stray


def _unclosed(tag: re.Match[str], stop: int) -> _Block:
    """A block whose opening tag was never closed: it runs up to `stop`."""
    return _Block(tag.group(2).lower(), tag.start(), tag.end(), stop, stop, False)


def _body(raw: str, block: _Block) -> str:
    """The stripped text inside a block, with any stray tags removed."""
    return _TAG_RE.sub("", raw[block.body_start:block.body_end]).strip()


def _outside(raw: str, blocks: list[_Block]) -> str:
    """The text not covered by the given blocks, tags removed: stripped pieces joined by a space."""
    kept, cursor = [], 0
    for block in sorted(blocks, key=lambda b: b.start):
        kept.append(raw[cursor:block.start])
        cursor = max(cursor, block.end)
    kept.append(raw[cursor:])
    pieces = (piece.strip() for piece in _TAG_SPLIT_RE.split("".join(kept)))
    return " ".join(piece for piece in pieces if piece)


def _problems(raw: str, blocks: list[_Block], stray: list[re.Match[str]]) -> tuple[str, ...]:
    """Human-readable reasons a response does not follow the tag protocol exactly."""
    if not blocks and not stray:
        return ("no <thinking>/<speech> tags",)
    problems: list[str] = []
    for name in ("thinking", "speech"):
        named = [b for b in blocks if b.name == name]
        if not named:
            problems.append(f"no <{name}> tag")
        if len(named) > 1:
            problems.append(f"more than one <{name}> tag")
        if any(not b.closed for b in named):
            problems.append(f"unclosed <{name}> tag")
    for tag in stray:
        problems.append(f"stray </{tag.group(2).lower()}> tag")
    if _outside(raw, blocks):
        problems.append("text outside the tags")
    return tuple(problems)


def _split_header(text: str) -> tuple[_Header | None, str]:
    """Split a leading bracket header from the rest; (None, text) when there is none."""
    match = _HEADER_RE.match(text)
    if not match:
        return None, text
    header = _Header()
    for item in _header_items(match.group(1)):
        _read_item(header, item)
    if not header.recognised:
        return None, text
    return header, text[match.end():]


def _header_items(inner: str) -> list[str]:
    """Split a header on commas outside quotes and asterisks (plain split if quotes unbalanced)."""
    items, current, in_quote, in_stars = [], [], False, False
    for ch in inner:
        if ch in _QUOTES:
            in_quote = not in_quote
        elif ch == "*" and not in_quote:
            in_stars = not in_stars
        if ch == "," and not in_quote and not in_stars:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    if in_quote:
        items = inner.split(",")
    return [item.strip() for item in items if item.strip()]


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
