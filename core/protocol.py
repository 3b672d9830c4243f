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
`TagSplitter` share one reader (`_Reader`), so the live panes and the record follow one rule.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Literal

CORRECTION_PROMPT = (
    "Your last response did not use `<thinking>` and `<speech>` tags. "
    "Please reformat without changing the content."
)
EXPLICIT_CLOSE = "*[the scene ends here]*"
SPEECH_OPEN, SPEECH_CLOSE, THINKING_OPEN = "<speech>", "</speech>", "<thinking>"

Action = Literal["speak", "interrupt", "silent", "react"]
Channel = Literal["think", "speech"]

_TAG_RE = re.compile(r"<\s{0,8}(/?)\s{0,8}([A-Za-z][\w:.-]{0,64})([^<>]{0,512})>")
_PARTIAL_TAG_RE = re.compile(r"<\s{0,8}(?:/\s{0,8})?(?:[A-Za-z][\w:.-]{0,64}[^<>]{0,512})?")
_TAG_MAX = 600
_SPECIAL_RE = re.compile(r"[<`~]")
_OPAQUE = {"```": "```", "~~~": "~~~", "<!--": "-->", "<![CDATA[": "]]>"}
"""Openers of regions whose inside is never read for tags, and their closers."""
_OPENER_MAX = max(map(len, _OPAQUE))
_CLOSE_NOISE_RE = re.compile(r"[*\[\].!]")
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

    `speech` is the one public part: the body of the response's only `<speech>` element when that
    element is well-formed (top level, exact tags, closed, no tag inside); otherwise None, and the
    actor is silent. `thinking` is the body of the first top-level `<thinking>` element (private).
    `well_formed` is True only for exactly one `<thinking>` and one `<speech>` element (either
    order) with nothing but whitespace outside them; otherwise `problems` says why, in words that
    never quote the response.
    """

    thinking: str | None
    speech: Speech | None
    well_formed: bool
    problems: tuple[str, ...] = ()


@dataclass
class _Header:
    """What the items of a bracket header said, gathered one item at a time."""

    action: Action = "speak"
    target: str | None = None
    tone: str | None = None
    interrupt_after: str | None = None
    nonverbal: tuple[str, ...] = ()
    recognised: bool = False


@dataclass
class _Element:
    """A top-level element as read: `kind` is speech, thinking (the exact tag) or other."""

    kind: str
    body: list[str] = field(default_factory=list)
    closed: bool = False
    tainted: bool = False

    @property
    def text(self) -> str:
        """The raw body read so far."""
        return "".join(self.body)


class _Reader:
    """Reads a response left to right, in one piece or in streamed fragments.

    At the top level only `<speech>` and `<thinking>` open protocol elements; any other opening
    tag opens a private element that lasts until its own closing tag (or the end), and a code
    fence (```` ``` ```` or `~~~`), an HTML comment or a CDATA section is private text up to its
    closer (or the end). Inside a private element, fence or comment nothing is a protocol tag. Inside a speech every tag but `</speech>` taints
    the speech. `feed` returns the (channel, text) pieces each fragment completes: "speech" for
    the first top-level speech while untainted, "think" for the inside of private elements.
    """

    def __init__(self) -> None:
        self.elements: list[_Element] = []
        self.outside = False
        self.stray = 0
        self.unexpected = 0
        self.tags_seen = False
        self._open: _Element | None = None
        self._stack: list[str] = []
        self._open_names: Counter[str] = Counter()
        self._fence: str | None = None
        self._pending = ""

    def feed(self, fragment: str, *, final: bool = False) -> list[tuple[Channel, str]]:
        """Read the next fragment (`final` at the end of the response); return completed pieces."""
        text, i, out = self._pending + fragment, 0, []
        while i < len(text):
            if self._fence is not None:
                step = self._in_opaque(out, text, i, final)
            else:
                special = _SPECIAL_RE.search(text, i)
                stop = special.start() if special else len(text)
                if stop > i:
                    self._text(out, text[i:stop])
                    i = stop
                    continue
                step = self._at_special(out, text, i, final)
            if step is None:
                break
            i = step
        self._pending = text[i:]
        if final:
            self._open = None
        return _merged(out)

    def public_speech(self) -> str | None:
        """The body of the only speech, when it is well-formed; None otherwise."""
        speeches = self._speeches()
        if len(speeches) == 1 and speeches[0].closed and not speeches[0].tainted:
            return speeches[0].text.strip()
        return None

    def thinking(self) -> str | None:
        """The body of the first top-level `<thinking>` element, if any."""
        first = next((e for e in self.elements if e.kind == "thinking"), None)
        return first.text.strip() if first else None

    def problems(self) -> tuple[str, ...]:
        """Why the response is not exactly one thinking and one speech element."""
        if not self.tags_seen:
            return ("no <thinking>/<speech> tags",)
        problems: list[str] = []
        for kind in ("thinking", "speech"):
            named = [e for e in self.elements if e.kind == kind]
            if not named:
                problems.append(f"no <{kind}> tag")
            if len(named) > 1:
                problems.append(f"more than one <{kind}> tag")
            if any(not e.closed for e in named):
                problems.append(f"unclosed <{kind}> tag")
        checks = [(any(e.tainted for e in self._speeches()), "a tag inside <speech>"),
                  (self.unexpected, "a tag other than <thinking> and <speech>"),
                  (self.stray, "a stray closing tag"), (self.outside, "text outside the tags")]
        return tuple(problems + [problem for failed, problem in checks if failed])

    def _speeches(self) -> list[_Element]:
        return [e for e in self.elements if e.kind == "speech"]

    def _at_special(self, out: list[tuple[Channel, str]], text: str, i: int, final: bool) -> int | None:
        """At "<", "`" or "~": an opaque region's opener, a tag, a wait for more text, or a plain
        character."""
        opener = next((o for o in _OPAQUE if text.startswith(o, i)), None)
        if opener:
            return self._open_opaque(out, opener, i)
        rest = text[i:i + _OPENER_MAX]
        if not final and len(text) - i < _OPENER_MAX and any(o.startswith(rest) for o in _OPAQUE):
            return None
        if text[i] == "<":
            tag = _TAG_RE.match(text, i)
            if tag:
                self._tag(out, tag)
                return tag.end()
            if not final and len(text) - i < _TAG_MAX and _PARTIAL_TAG_RE.fullmatch(text, i):
                return None
        self._text(out, text[i])
        return i + 1

    def _open_opaque(self, out: list[tuple[Channel, str]], opener: str, i: int) -> int:
        """A fence, comment or CDATA hides everything up to its closer. Inside a speech a fence is
        plain text and a comment or CDATA taints the speech."""
        if self._open is not None and self._open.kind == "speech":
            self._open.tainted = self._open.tainted or opener.startswith("<")
        else:
            self._fence = _OPAQUE[opener]
        self._text(out, opener)
        return i + len(opener)

    def _in_opaque(self, out: list[tuple[Channel, str]], text: str, i: int, final: bool) -> int | None:
        """Inside a fence, comment or CDATA: take text up to and including its closer."""
        closer = self._fence or ""
        end = text.find(closer, i)
        if end >= 0:
            self._fence = None
            self._text(out, text[i:end + len(closer)])
            return end + len(closer)
        cut = len(text) if final else max(i, len(text) - len(closer) + 1)
        if cut == i:
            return None
        self._text(out, text[i:cut])
        return cut

    def _tag(self, out: list[tuple[Channel, str]], tag: re.Match[str]) -> None:
        """Apply one tag: open or close an element, taint a speech, or note a stray tag."""
        self.tags_seen = True
        token, closing, name = tag.group(0), bool(tag.group(1)), tag.group(2).lower()
        opening = not closing and not tag.group(3).rstrip().endswith("/")
        element = self._open
        if element is None:
            self._top_tag(token, closing, name, opening)
        elif element.kind == "speech":
            if token == SPEECH_CLOSE:
                element.closed, self._open = True, None
            else:
                element.tainted = True
                element.body.append(token)
        else:
            self._private_tag(out, token, closing, name, opening)

    def _top_tag(self, token: str, closing: bool, name: str, opening: bool) -> None:
        """A tag at the top level: only the exact protocol tags open protocol elements."""
        if token in (SPEECH_OPEN, THINKING_OPEN):
            self._start(token[1:-1], name)
        elif closing:
            self.stray += 1
        else:
            self.unexpected += 1
            if opening:
                self._start("other", name)

    def _private_tag(self, out: list[tuple[Channel, str]], token: str, closing: bool, name: str,
                     opening: bool) -> None:
        """A tag inside a private element: nest, unnest, or close the element itself."""
        if closing and self._open_names[name]:
            while self._pop() != name:
                pass
            if not self._stack and self._open is not None:
                self._open.closed, self._open = True, None
                return
        elif opening:
            self._push(name)
        self._text(out, token)

    def _push(self, name: str) -> None:
        self._stack.append(name)
        self._open_names[name] += 1

    def _pop(self) -> str:
        name = self._stack.pop()
        self._open_names[name] -= 1
        return name

    def _start(self, kind: str, name: str) -> None:
        element = _Element(kind)
        self.elements.append(element)
        self._open, self._stack, self._open_names = element, [], Counter()
        self._push(name)

    def _text(self, out: list[tuple[Channel, str]], text: str) -> None:
        """Text in the current place: top-level text is private and only noted."""
        element = self._open
        if element is None:
            self.outside = self.outside or bool(text.strip())
            return
        element.body.append(text)
        if element.kind != "speech":
            _emit(out, "think", text)
        elif not element.tainted and len(self._speeches()) == 1:
            _emit(out, "speech", text)


def _emit(out: list[tuple[Channel, str]], channel: Channel, text: str) -> None:
    """Append a piece (merged per channel run by `_merged` when the fragment is done)."""
    if text:
        out.append((channel, text))


def _merged(pieces: list[tuple[Channel, str]]) -> list[tuple[Channel, str]]:
    """Consecutive pieces of one channel joined into one."""
    runs: list[tuple[Channel, list[str]]] = []
    for channel, text in pieces:
        if runs and runs[-1][0] == channel:
            runs[-1][1].append(text)
        else:
            runs.append((channel, [text]))
    return [(channel, "".join(texts)) for channel, texts in runs]


def parse_speech(text: str) -> Speech:
    """Read a speech: an optional `[...]` header of spec 004 Appendix B, then the words.

    A leading bracket counts as a header only if one of its items is understood (TO:, TONE:,
    any `KEY: value`, INTERRUPT, SILENT, REACT or `*gesture*`), so `[laughs] Hi` and
    `*[opens the door]* Hi` stay plain speech. Unknown keys are ignored. Brackets nest, so a
    name such as `[Evil]` or `Dr. [Redacted]` may stand in a header.
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
    """Split a response into its private thinking and its one public speech (see `ParsedTurn`)."""
    reader = _Reader()
    reader.feed(raw, final=True)
    body = reader.public_speech()
    problems = reader.problems()
    return ParsedTurn(thinking=reader.thinking(), speech=None if body is None else parse_speech(body),
                      well_formed=not problems, problems=problems)


def salvage(raw: str) -> ParsedTurn:
    """What may be kept once corrections failed: never more than the well-formed speech.

    Private text is never promoted to speech: with no well-formed `<speech>` element the speech is
    None and the actor is silent for the turn. The result is never well-formed.
    """
    turn = parse_turn(raw)
    return replace(turn, well_formed=False, problems=turn.problems or ("salvaged",))


class TagSplitter:
    """Route streamed fragments: private elements to "think", the public speech to "speech".

    Follows exactly the rule of `parse_turn` (one shared reader): text outside a top-level
    `<speech>` element never reaches "speech", tags are never emitted, and top-level text outside
    elements is dropped. A tag or fence split across fragments is held back until it is complete;
    `flush()` releases what is held at the end.
    """

    def __init__(self) -> None:
        self._reader = _Reader()

    def feed(self, fragment: str) -> list[tuple[Channel, str]]:
        """Take the next fragment; return the (channel, text) pieces it completes, in order."""
        return self._reader.feed(fragment)

    def flush(self) -> list[tuple[Channel, str]]:
        """End of stream: release text held back as a possible partial tag or fence."""
        return self._reader.feed("", final=True)


def _is_close_line(line: str) -> bool:
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


def _split_header(text: str) -> tuple[_Header | None, str]:
    """Split a leading bracket header from the rest; (None, text) when there is none."""
    end = _header_end(text) if text.startswith("[") else None
    if end is None:
        return None, text
    header = _Header()
    for item in _header_items(text[1:end - 1]):
        _read_item(header, item)
    if not header.recognised:
        return None, text
    return header, text[end:]


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
