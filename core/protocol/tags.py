"""Reading an actor's answer as tags, the fail-closed way: which text is the one public speech.

`TagReader` reads a response left to right, whole or in streamed fragments, and keeps the
top-level elements it found. It decides nothing about headers or words: `promptdesk.core.protocol.reply` turns
what it found into a `ParsedTurn`, and its `TagSplitter` streams with the same reader, so the
live panes and the record follow one rule.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

Channel = Literal["think", "speech"]
SPEECH_OPEN, SPEECH_CLOSE, THINKING_OPEN = "<speech>", "</speech>", "<thinking>"

_ATTRS = r"""(?:[^<>"']++|"[^"]*+"|'[^']*+')*+"""
_TAG_RE = re.compile(r"<\s*+(/?)\s*+([A-Za-z][\w:.-]*+)(" + _ATTRS + ")>")
"""A tag: `<name attrs>`, `</name>`, `<name/>`; quoted attribute values may hold `<` and `>`."""
_PARTIAL_TAG_RE = re.compile(r"<\s*+(?:/\s*+)?(?:[A-Za-z][\w:.-]*+" + _ATTRS + r"""(?:"[^"]*+|'[^']*+)?)?""")
"""What a tag may look like before its end has arrived."""
_TAG_MAX = 600
"""Tags are read within this many characters: matching stays linear on any text."""
_SPECIAL_RE = re.compile(r"<(?=\s{0,%d}(?:[A-Za-z/!]|\Z))|```|~~~|`{1,2}\Z|~{1,2}\Z" % _TAG_MAX)
"""Where something other than text may start: a `<` a tag, comment or CDATA could open at (a letter,
`/` or `!` after it, or the end of what has arrived), a fence, or the start of one at the end of what
has arrived. Everything else, a lone `<`, `` ` `` or `~` among them, is read as text in one piece
(a reply of a million `<` was read a character at a time: 2-3 s)."""
_OPAQUE = {"```": "```", "~~~": "~~~", "<!--": "-->", "<![CDATA[": "]]>"}
"""Openers of regions whose inside is never read for tags, and their closers."""
_OPENER_MAX = max(map(len, _OPAQUE))
_OPENERS = tuple(_OPAQUE)
REASONING = frozenset({"think", "reasoning", "thought"})
"""The tags a reasoning model served without a reasoning parser opens its reply with, around its
chain of thought (or only closes, when the chat template opened it): as the reply's preamble, before
anything else, it is a private element like any other, and not a problem of the answer's form."""


def _plain_to(text: str, start: int, final: bool) -> int:
    """Where, from `start`, something other than plain text may start: the next fence, opener or tag,
    or, before the end of the response, a `<` that may still become one as more arrives (as
    `TagReader._at_special` reads them). A `<` that opens nothing (`<!<!<!…`, `<s<s<s…`) is passed
    over here, in one loop, not read as a piece of its own."""
    at = start
    while special := _SPECIAL_RE.search(text, at):
        k = special.start()
        if text[k] != "<" or text.startswith(_OPENERS, k) or _TAG_RE.match(text, k, k + _TAG_MAX):
            return k
        left = len(text) - k
        if not final and ((left < _OPENER_MAX and any(o.startswith(text[k:k + _OPENER_MAX]) for o in _OPAQUE))
                          or (left < _TAG_MAX and _PARTIAL_TAG_RE.fullmatch(text, k))):
            return k
        at = k + 1
    return len(text)


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


class TagReader:
    """Reads a response left to right, in one piece or in streamed fragments.

    At the top level only `<speech>` and `<thinking>` open protocol elements; any other opening
    tag opens a private element that lasts until its own closing tag (or the end; a reasoning
    preamble, `REASONING`, is one that is not counted against the answer's form), and a code
    fence (```` ``` ```` or `~~~`), an HTML comment or a CDATA section is private text up to its
    closer (or the end). Inside a private element, fence or comment nothing is a protocol tag.
    Inside a speech every tag but `</speech>` taints the speech. `feed` returns the (channel, text) pieces each fragment completes: "speech" for
    the first top-level speech while untainted, "think" for the inside of private elements.
    """

    def __init__(self) -> None:
        self.elements: list[_Element] = []
        self.outside = False
        self.stray = 0
        self.unexpected = 0
        self.tags_seen = False
        self.preamble = False
        """A reasoning preamble was read (`REASONING`): `<think>…</think>`, or `…</think>` alone."""
        self._preamble_text: str | None = None
        self.loose: list[tuple[int, str]] = []
        """Top-level text outside every element, fence and comment and after the last stray closing
        tag, each piece with the number of elements read before it (for a journal entry,
        `promptdesk.core.engine.journals.entry_of`)."""
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

    @property
    def reasoning(self) -> str | None:
        """The text of the reasoning preamble, if one was read (private)."""
        if self._preamble_text is not None:
            return self._preamble_text.strip()
        first = next((e for e in self.elements if e.kind == "reasoning"), None)
        return first.text.strip() if first else None

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
        if text.startswith(_OPENERS, i):
            return self._open_opaque(out, next(o for o in _OPAQUE if text.startswith(o, i)), i)
        if not final and len(text) - i < _OPENER_MAX and any(o.startswith(text[i:i + _OPENER_MAX]) for o in _OPAQUE):
            return None
        if text[i] == "<":
            tag = _TAG_RE.match(text, i, i + _TAG_MAX)
            if tag:
                self._tag(out, tag)
                return tag.end()
            if not final and len(text) - i < _TAG_MAX and _PARTIAL_TAG_RE.fullmatch(text, i):
                return None
        stop = _plain_to(text, i + 1, final)
        self._text(out, text[i:stop])  # a plain character, and the text up to the next place something may start
        return stop

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
            self._text(out, text[i:end + len(closer)])
            self._fence = None
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
        first = not self.elements and not self.preamble and name in REASONING
        if token in (SPEECH_OPEN, THINKING_OPEN):
            self._start(token[1:-1], name)
        elif closing:
            if first:  # the text before it was the preamble: not text outside the tags
                self.preamble, self.outside = True, False
                self._preamble_text = "".join(text for _, text in self.loose)
            else:
                self.stray += 1
                if name in REASONING or name == "thinking":
                    self._drafted()
            self.loose.clear()  # text before a stray closing tag is private (a template-opened `<think>`)
        elif opening and first and not self.outside:
            self.preamble = True
            self._start("reasoning", name)
        else:
            self.unexpected += 1
            if opening:
                self._start("other", name)

    def _drafted(self) -> None:
        """A stray `</think>` (`REASONING`) or `</thinking>`: the chat template, or a model that never
        wrote the opening tag, opened it, so every speech before it was drafted inside it. Private: it
        is never the speech, not even when corrections fail (it stays counted, so a speech after it
        is not taken alone either)."""
        for element in self._speeches():
            element.tainted = True

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
            if self._fence is None:
                self.loose.append((len(self.elements), text))
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
