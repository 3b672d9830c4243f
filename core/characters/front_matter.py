"""Front matter as people really write it: Claude Code agent files read as they are.

A file may open with `---` (blank lines before it allowed), a block of `key: value` lines, and `---`
(or YAML's document end, `...`). Strict YAML is tried first, `name` and `description` kept as the
text the file holds (`name: No` is "No", not false);
when it refuses the block (unquoted descriptions with colons and quotes, agent-wizard
`Examples: <example>…` text, a value opening with `**`), the block is read line by line: a line
`key: value` at the left margin starts a key (lower-case keys only, so `Examples:` or `Context:`
inside a long description continue it), indented or other lines continue the previous value, and
`key: >` / `key: |` take the indented block below. Inside an `<example>` that is not yet closed, and
for the wizard's dialogue labels (`user:`, `assistant:`, `context:`, `commentary:`), a line always
continues the value, so a wizard description is kept whole. Only `name` and `description` are kept as text;
`tools`, `model`, `color` and anything else are kept in `meta` but never reach an actor.

Line numbers in messages are the file's own, counted from 1 at the opening `---`. Front matter whose
YAML goes beyond the parsing bounds (an alias bomb, nesting too deep: `promptdesk.core.protocol.bounded`) is
refused with `Unbounded`, never read line by line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from promptdesk.core.protocol.bounded import LOADER, RepeatedKey, Unbounded, load_yaml

_OPEN = re.compile(r"---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_KEY = re.compile(r"([a-z][a-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?$")
_BLOCK = re.compile(r"[>|][+-]?\d*$")
TEXT_KEYS = ("name", "description")
"""The keys read as text, whatever type strict YAML would give what the file holds."""
_DIALOGUE = frozenset({"user", "assistant", "human", "context", "commentary", "example", "examples"})
_EXAMPLES = re.compile(r"(?:\bExamples?\s*:\s*)?<example>.*?(?:</example>|\Z)", re.IGNORECASE | re.DOTALL)


def _breaks(text: str) -> str:
    """`text` with each `\\n` read as the line break it stands for, when it writes paragraphs so (holds
    `\\n\\n`): agent collections write a wizard-style description on one line,
    `Examples:\\n\\n<example>\\nContext: …`, and YAML leaves the backslashes in a plain value. A single
    `\\n` (a Windows path, `C:\\new`) is left as written."""
    return text.replace("\\n", "\n") if "\\n\\n" in text else text


def without_examples(text: str) -> str:
    """A description without its `<example>…</example>` blocks (and the `Examples:` that opens them)."""
    return " ".join(_EXAMPLES.sub(" ", _breaks(text)).split())


def examples(text: str) -> str:
    """Only the `<example>…</example>` blocks of a description ("" when it has none)."""
    return " ".join(" ".join(m.group(0).split()) for m in _EXAMPLES.finditer(_breaks(text)))


@dataclass
class FrontMatter:
    """The parsed front matter, the body below it, and the file line the body starts on."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1
    strict: bool = True
    """False when strict YAML refused the block and it was read line by line."""

    def text(self, key: str, fold: bool = True) -> str:
        """A field as text ("" when absent or not a scalar), its whitespace folded to single
        spaces unless `fold` is False (a name keeps a newline, so that it can be refused)."""
        value = self.meta.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return " ".join(str(value).split()) if fold else str(value).strip()
        return ""


class Unclosed(ValueError):
    """The file opens front matter with `---` and never closes it."""


def split(text: str) -> FrontMatter:
    """Split optional front matter (opening with `---`, after blank lines if any, and closing with
    `---` or YAML's document end `...`) from the body; raise Unclosed when it is never closed, and
    `Unbounded` (its line the file's) when the block goes beyond the parsing bounds."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if start == len(lines) or not _OPEN.fullmatch(lines[start]):
        return FrontMatter(body=text)
    dots_tried = False
    for index in range(start + 1, len(lines)):
        if _CLOSE.match(lines[index].rstrip("\r\n")):
            if lines[index].startswith("."):
                if dots_tried or not _strict_mapping("".join(lines[start + 1:index])):
                    dots_tried = True  # only the first `...` may close (one parse, linear in the file)
                    continue  # a `...` inside a description strict YAML cannot read is text, not the end
            block = "".join(lines[start + 1:index])
            meta, strict = _parse(block, start + 1)
            return FrontMatter(meta=meta, body="".join(lines[index + 1:]), body_line=index + 2, strict=strict)
    raise Unclosed(f"opens front matter with '---' on line {start + 1} but never closes it with a '---' line")


class WrongType(Unbounded):
    """A text field of the front matter (`name`, `description`) given as a list or a mapping."""


def _strict_mapping(block: str) -> bool:
    """Whether strict YAML reads the block as a mapping (a `...` line then closes it)."""
    try:
        return isinstance(load_yaml(block), dict)
    except (yaml.YAMLError, Unbounded):
        return False


def _parse(block: str, above: int = 1) -> tuple[dict[str, Any], bool]:
    """Strict YAML when it gives a mapping, else the line-by-line reading (`above`: the file's lines
    before the block, for line numbers). A `name` or `description` that strict YAML typed (`No` as
    false, `007` as 7, a date) is kept as the text the file holds."""
    try:
        data = load_yaml(block, unique_keys=True)
    except RepeatedKey as exc:
        raise Unbounded(f"key {exc.key[:80]!r} is given twice (lines {(exc.first or 0) + above} and "
                        f"{(exc.line or 0) + above}); keep one", (exc.line or 0) + above) from None
    except Unbounded as exc:
        raise Unbounded(str(exc), exc.line + above if exc.line else None) from None
    except yaml.YAMLError:
        data = None
    else:
        if data is None and not block.strip():
            return {}, True
    if isinstance(data, dict):
        meta = {str(k): v for k, v in data.items()}
        if any(not isinstance(meta.get(key), (str, type(None))) for key in TEXT_KEYS):
            _as_written(block, meta, above)
        return meta, True
    return _lines(block), False


def _as_written(block: str, meta: dict[str, Any], above: int = 1) -> None:
    """`name` and `description` as text: a scalar YAML read as another type (`name: yes`, `name: 007`,
    `name: 2020-01-01`) is taken as written; a list or a mapping is refused (`WrongType`), naming the
    line, rather than dropped for the slug without a word."""
    root = yaml.compose(block, Loader=LOADER)  # the block is known to be within bounds (`load_yaml` read it)
    for key_node, value_node in root.value if isinstance(root, yaml.MappingNode) else []:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        if key not in TEXT_KEYS or isinstance(meta.get(key), (str, type(None))):
            continue
        if isinstance(value_node, yaml.ScalarNode):
            meta[key] = value_node.value
        else:
            kind = "a list" if isinstance(value_node, yaml.SequenceNode) else "a mapping"
            raise WrongType(f"{key} is {kind}, not text; write it as one line of text (quoted if it holds a colon)",
                            key_node.start_mark.line + above + 1)


def _lines(block: str) -> dict[str, Any]:
    """`key: value` line by line; continuation lines join the previous key's value."""
    meta: dict[str, list[str]] = {}
    folded: dict[str, bool] = {}
    key: str | None = None
    for raw in block.splitlines():
        match = _KEY.match(raw)
        if match and key is not None and (match.group(1) in _DIALOGUE or _open_example(meta[key])):
            match = None
        if match:
            key, value = match.group(1), (match.group(2) or "").strip()
            block_value = bool(_BLOCK.fullmatch(value))
            folded[key] = not value.startswith("|")
            meta[key] = [] if block_value or not value else [_unquote(value)]
        elif key is not None and raw.strip():
            meta[key].append(raw.strip())
    return {k: (" " if folded[k] else "\n").join(v) for k, v in meta.items()}


def _open_example(value: list[str]) -> bool:
    """Whether a value read so far holds an `<example>` not yet closed."""
    text = " ".join(value).lower()
    return text.count("<example>") > text.count("</example>")


def _unquote(value: str) -> str:
    """A value wrapped in one pair of matching quotes loses them."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


class FrontMatterFields:
    """The front matter keys Promptdesk reads (`promptdesk schema character` prints them as a JSON
    Schema). Any other key (`tools`, `model`, `color`, …) is kept with the character but never
    reaches an actor."""

    name = "The character's display name, as actors and transcripts call them; unset: the profile's first heading, else the slug."
    description = ("A summary of the character; it reaches the actor only when the scene lists `description` "
                   "(without its `<example>` blocks) or `examples` (only those blocks) in `character_fields`.")

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """The JSON Schema of a character file's front matter."""
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Character front matter",
                "description": cls.__doc__.split("(")[0].strip() + ".", "type": "object",
                "properties": {key: {"type": "string", "description": getattr(cls, key)} for key in ("name", "description")},
                "additionalProperties": True}
