"""Markdown code fences (```json ... ```) in model output, found in linear time.

A model's answer is untrusted text of up to `REPLY_MAX_CHARS`: the regular expressions these readers
replace (an opening fence, a lazy body, a closing fence at the end or on a line of its own) tried every
opening and scanned to the end from each, quadratic in a run of blanks after one opening or in many
openings that never close (an evaluator's answer of "```" and 20,000 newlines took 7 s, a roundtable
answer of 100 KB of "```yaml" lines 8 s). Each function here reads the text once, by lines, and keeps
exactly what its expression matched.
"""

from __future__ import annotations

import bisect
from collections import defaultdict

FENCE = "```"
_BLANKS = " \t"


def _tag_end(line: str, at: int, tags: tuple[str, ...], fold: bool) -> int:
    """Where an opening fence's info word ends: after the first of `tags` that `line` has at `at`
    (case-folded with `fold`), else `at` (no word: the tags are optional)."""
    for tag in tags:
        word = line[at:at + len(tag)]
        if (word.lower() if fold else word) == tag:
            return at + len(tag)
    return at


def whole_fence(text: str, *, tags: tuple[str, ...] = ("json",), fold: bool = False,
                newline: bool = False) -> str | None:
    """The inside of `text` when the whole of it is one fence: an opening ``` (with one of `tags`,
    optionally), the body, a closing ``` as its last characters; None otherwise. With `newline`, the
    opening is followed by blanks holding a line break, and the body starts after that break. The
    body is returned unstripped (blanks after the opening and a line break before the closing included)."""
    if len(text) < 2 * len(FENCE) or not text.startswith(FENCE) or not text.endswith(FENCE):
        return None
    start, end = _tag_end(text, len(FENCE), tags, fold), len(text) - len(FENCE)
    if newline:
        while start < end and text[start] != "\n" and text[start].isspace():
            start += 1
        if start >= len(text) or text[start] != "\n":
            return None
        start += 1
    return text[start:end] if start <= end else None


def _opening(line: str, tags: tuple[str, ...], indent: str = "") -> bool:
    """Whether `line` (without its line break) opens a fence: `indent`, ```, an optional tag, blanks."""
    if not line.startswith(indent + FENCE):
        return False
    rest = line[_tag_end(line, len(indent) + len(FENCE), tags, True):]
    return not rest.strip(_BLANKS)


def fenced_blocks(text: str, *, tags: tuple[str, ...] = ("json",)) -> list[str]:
    """Every block of `text` fenced on lines of its own, in order: an opening line (```, an optional tag
    in any case, blanks), then at least one line of body, then a closing line (```, blanks). The
    closing line is never the one right after the opening (that line is body). A block that never
    closes ends the search."""
    lines = text.split("\n")
    blocks: list[str] = []
    opened: int | None = None
    for i, line in enumerate(lines):
        if opened is None:
            if i < len(lines) - 1 and _opening(line, tags):
                opened = i
        elif i >= opened + 2 and line.startswith(FENCE) and not line[len(FENCE):].strip(_BLANKS):
            blocks.append("\n".join(lines[opened + 1:i]))
            opened = None
    return blocks


def first_indented_block(text: str, *, tags: tuple[str, ...]) -> str | None:
    """The body of the first block fenced on lines of its own whose closing fence is indented as its
    opening one (a fence indented deeper is body): an opening line (indent, ```, an optional tag in any
    case, blanks, an optional carriage return), the body (every line with its line break), a closing line
    (the same indent, ```, blanks, an optional carriage return). None when no opening line has such a
    closing one after it."""
    lines = text.split("\n")
    closings: dict[str, list[int]] = defaultdict(list)
    for i, line in enumerate(lines):
        bare = line[:-1] if line.endswith("\r") else line
        indent = bare[:len(bare) - len(bare.lstrip(_BLANKS))]
        if bare.startswith(FENCE, len(indent)) and not bare[len(indent) + len(FENCE):].strip(_BLANKS):
            closings[indent].append(i)
    for i, line in enumerate(lines[:-1]):
        bare = line[:-1] if line.endswith("\r") else line
        indent = bare[:len(bare) - len(bare.lstrip(_BLANKS))]
        if not _opening(bare, tags, indent):
            continue
        found = closings.get(indent, [])
        at = bisect.bisect_right(found, i)
        if at < len(found):
            return "".join(f"{body}\n" for body in lines[i + 1:found[at]])
    return None
