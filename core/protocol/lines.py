"""How speech and world events are written as lines: for actors, transcripts and the console.

A speech is always written as exactly one line that starts with its speaker's name, and nothing a
model put in it can read as one of the engine's own lines (another actor's line, `DIRECTOR NOTE:`,
`[EVENT: …]`, `[SYSTEM: …]`): `one_line` folds and neutralises every model-written field.
"""

from __future__ import annotations

import re

from typing import Any

from promptdesk.core.protocol.lookalikes import COLON, GAP, letters, plain, without_bidi
from promptdesk.core.protocol.bounded import DIRECTION_MAX_CHARS
from promptdesk.core.protocol.sanitize import mend, strip_controls

_WHITESPACE_RE = re.compile(r"\s+")
_RESERVED_RE = re.compile(rf"\b({letters('director note')}|{letters('event')}|{letters('system')}){GAP}*{COLON}",
                          re.IGNORECASE)
"""A reserved word and its colon, in any spelling that reads as one (`promptdesk.core.protocol.lookalikes`)."""


def speech_line(speaker: str, speech: Any) -> str:
    """A factual line for one speech (a `speak` event), in spec 004's transcript form:
    `Alice [TO: Bob, TONE: x] "…"`. Anything else (a thinking event above all) raises TypeError."""
    if getattr(speech, "type", None) != "speak":
        raise TypeError(f"only speech is ever routed, not {type(speech).__name__}")
    words = one_line(speech.text)
    parts = [one_line(speaker), speech_header(speech), f'"{words}"' if words else ""]
    return " ".join(part for part in parts if part)


def speech_header(speech: Any) -> str:
    """The bracket header of a speech, rebuilt from its parsed fields, each folded to a plain value."""
    parts: list[str] = []
    if speech.action == "interrupt":  # a cut-in whose phrase was not given, or said nothing, is said as such
        phrase = _field(speech.interrupt_after)
        parts.append(f'INTERRUPT after "{phrase}"' if phrase.strip() else "INTERRUPT")
    elif speech.action in ("silent", "react"):
        parts.append(speech.action.upper())
    if speech.target and speech.action != "silent":
        parts.append(f"TO: {_field(speech.target)}")
    if speech.tone:
        parts.append(f"TONE: {_field(speech.tone)}")
    if speech.nonverbal:
        parts.append(f"*{_field(speech.nonverbal)}*")
    return f"[{', '.join(parts)}]" if parts else ""


def one_line(text: str) -> str:
    """Model text made safe to stand inside an engine line.

    Terminal escape sequences, control characters and direction controls go first (whole: an
    escape's `[` never becomes a bracket), every run of whitespace (line breaks of any kind
    included) becomes one space, double quotes become single quotes, the colon after a reserved
    word (`DIRECTOR NOTE`, `EVENT`, `SYSTEM`, in any lookalike spelling: fullwidth, zero-width
    split) becomes ` -` and the word is written plainly, and brackets that do not balance become
    parentheses. Balanced brackets stay, so names such as `[Evil]` or `Dr. [Redacted]` read as written.
    """
    text = folded(without_bidi(strip_controls(folded(text)))).replace('"', "'")
    text = _RESERVED_RE.sub(lambda m: f"{_WHITESPACE_RE.sub(' ', plain(m.group(1)))} -", text)
    return text if _balanced(text) else text.replace("[", "(").replace("]", ")")


_BEAT_LINE_RE = re.compile(rf"^([^\S\n]*){letters('beat')}(?=[^\S\n]*\d)", re.IGNORECASE | re.MULTILINE)
"""A line opening as the engine's beat heading (`BEAT 7`), in any spelling that reads as one."""


def inert(text: str) -> str:
    """Text someone else wrote that keeps its lines and reaches actors' briefings (a card's sections and
    scenario, a Sotopia export's scenario, goals and profiles), unable to pass for an engine line: a
    reserved word's colon (`DIRECTOR NOTE:`, `[EVENT:`, `SYSTEM:`, in any lookalike spelling) is written
    ` -`, as `one_line` writes it, and a line opening as a beat heading (`BEAT 7`) is written `Beat 7`.
    Idempotent, linear in the text."""
    text = _RESERVED_RE.sub(lambda m: f"{_WHITESPACE_RE.sub(' ', plain(m.group(1)))} -", text)
    return _BEAT_LINE_RE.sub(lambda m: f"{m.group(1)}Beat", text)


def indented(text: str, indent: str = "    ") -> str:
    """Multi-line model text for an item that keeps its lines (code, lists): the first line as
    written, every further line (any kind of line break) indented, so that no line the text holds
    starts where an engine line starts."""
    lines = text.strip().splitlines()
    return ("\n" + indent).join(lines)


def scene_lines(title: str, setting: str, prompt: str, goal: str, goal_label: str) -> list[str]:
    """A scene's public framing, a line each for what it has: its title, `Setting: …`, its prompt, and
    its goal after `goal_label` (the actors' briefing and the evaluator's request word it each their way)."""
    lines = [f"Title: {title}"]
    if setting:
        lines.append(f"Setting: {setting}")
    if prompt:
        lines.append(prompt.strip())
    if goal:
        lines.append(f"{goal_label}: {goal}")
    return lines


def world_event_line(text: str) -> str:
    """A world event as every actor sees it (and the transcripts show it): an engine line whoever wrote
    its text (the operator, a judge's suggestion), so the text is made safe as model text is (`one_line`):
    one line, no escape, no reserved word's colon, no bracket that closes the event to start a line of its own."""
    return f"[EVENT: {one_line(text)}]"


def direction(text: str, what: str) -> str:
    """An operator's world event or director's note as it is queued: stripped and mended (empty when
    it says nothing); past `DIRECTION_MAX_CHARS` refused (`ValueError`, naming `what`, its length and
    the limit)."""
    text = text.strip()
    if len(text) > DIRECTION_MAX_CHARS:
        raise ValueError(f"the {what} is {len(text):,} characters; at most {DIRECTION_MAX_CHARS:,} (every actor "
                         "receives it in each request after it): shorten it")
    return mend(text)


def folded(text: str) -> str:
    """Text on one line: every run of whitespace, line breaks of any kind included, is one space."""
    return _WHITESPACE_RE.sub(" ", text).strip()


def _field(text: str | None) -> str:
    """A header value: one line, with no item separator (`,`) and no gesture marker (`*`)."""
    return one_line(text or "").replace(",", ";").replace("*", "")


def _balanced(text: str) -> bool:
    """Whether every `]` closes an earlier `[` and every `[` is closed."""
    depth = 0
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if depth < 0:
            return False
    return depth == 0
