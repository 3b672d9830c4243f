"""Untrusted files parsed within bounds: YAML and JSON checked before anything walks the data.

A file a person brings (a scene, front matter, a card, a sweep plan, a run's records) may be hostile
or broken: a 500-byte YAML "billion laughs" whose aliases expand a billion-fold, an alias to the list
that holds it (a loop), or lists nested 100,000 deep that blow Python's stack. Here:

- `check_yaml(text)` first measures the flow nesting from the text alone (`flow_depth`: the bound holds
  before any YAML library is asked, whatever its own limits), then reads the YAML's event stream once
  (no data is built) and refuses nesting deeper than `MAX_DEPTH`, an alias inside the node it names, and aliases that would add more than
  `ALIAS_NODES_MAX` nodes or `ALIAS_CHARS_MAX` characters of text; `load_yaml(text)` checks, then loads.
- `load_json(text)` parses JSON, refusing nesting deeper than `MAX_DEPTH` (and never letting a
  `RecursionError` out).

Each refusal is an `Unbounded` (a `ValueError`) carrying the 1-based line when it is known; the
caller names the file and turns it into its own refusal. Pure functions over text, but for
`read_capped`, which reads an open file no further than a limit.
"""

from __future__ import annotations

import json
from collections import Counter
import os
import re
import stat
from collections.abc import Iterator
from typing import Any, BinaryIO

import yaml

from promptdesk.core.protocol.flow_depth import deepest_flow

MAX_DEPTH = 64
"""Deepest nesting of lists and mappings accepted in any file (real ones stay under 10)."""
ALIAS_NODES_MAX = 10_000
"""Most nodes YAML aliases may add to a document once expanded (a real scene's anchors add dozens)."""
ALIAS_CHARS_MAX = 1_000_000
"""Most characters of text YAML aliases may add to a document once expanded."""
NODES_MAX = 50_000
"""Most values (keys, items, texts, lists and mappings) one YAML document may hold: a scene, strategy,
plan or front matter holds hundreds, and building a million of them takes seconds."""
DIRECTION_MAX_CHARS = 20_000
"""The longest world event or director's note the operator may give (typed in the console, or
`--event`/`--note`), as long as a scene file's longest text: every actor receives it in each request
that follows, so a page pasted by mistake would be paid for again and again."""
REPLY_MAX_CHARS = 1_000_000
"""The most characters of one model reply that are read (far past any `max_tokens`; a server that
sends more is cut there, and `debug.log` says so): every reader of model output is timed at it."""
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when installed (several times faster on big files), else PyYAML's own."""


DEEP = f"lists and mappings are nested more than {MAX_DEPTH} levels deep; flatten the structure"


class Unbounded(ValueError):
    """A file goes beyond a parsing bound; `line` is 1-based, or None when unknown."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def read_capped(handle: BinaryIO, limit: int) -> bytes | None:
    """The rest of an open binary file, or None when it holds more than `limit` bytes; never reads, nor
    sets memory aside for, more than `limit` + 64 KB whatever the file's size (or growth)."""
    parts: list[bytes] = []
    total = 0
    while part := handle.read(65_536):
        total += len(part)
        if total > limit:
            return None
        parts.append(part)
    return b"".join(parts)


def _line(event: Any) -> int | None:
    mark = getattr(event, "start_mark", None)
    return mark.line + 1 if mark is not None else None


def check_yaml(text: str, *, unique_keys: bool = False) -> None:
    """Refuse YAML too deep, looping or alias-expanding past the budgets, before any data is built;
    with `unique_keys` (a file a person writes), a key given twice in one mapping too: YAML would
    keep the last silently, and which one the author meant is anyone's guess.

    Raises `Unbounded`, or `yaml.YAMLError` for a syntax error met on the way."""
    deep = deepest_flow(text, MAX_DEPTH)
    if deep is not None:
        raise Unbounded(DEEP, deep)
    loader = LOADER(text)
    sizes: dict[str, tuple[int, int]] = {}
    """anchor -> (nodes, characters) of the node it names, aliases inside it expanded."""
    opened: list[tuple[str | None, int, int]] = []
    keys = _Keys() if unique_keys else None
    nodes = chars = added_nodes = added_chars = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            kind = type(event)
            if nodes > NODES_MAX:
                raise Unbounded(f"the file holds more than {NODES_MAX:,} values (keys, list items and texts); one "
                                "a person writes holds far fewer: is it the right file?", _line(event))
            if keys is not None:
                keys.see(event, kind)
            if kind is yaml.ScalarEvent:
                nodes, chars = nodes + 1, chars + len(event.value)
                if event.anchor:
                    sizes[event.anchor] = (1, len(event.value))
            elif kind is yaml.AliasEvent:
                if event.anchor not in sizes:
                    if any(anchor == event.anchor for anchor, _, _ in opened):
                        raise Unbounded(f"the alias *{event.anchor} is inside the node &{event.anchor} names "
                                        "(a loop); write the value out instead", _line(event))
                    continue  # an undefined alias: the composer says so, with its line
                more_nodes, more_chars = sizes[event.anchor]
                nodes, chars = nodes + more_nodes, chars + more_chars
                added_nodes, added_chars = added_nodes + more_nodes, added_chars + more_chars
                if added_nodes > ALIAS_NODES_MAX or added_chars > ALIAS_CHARS_MAX:
                    raise Unbounded(f"aliases (*name) expand past the limit of {ALIAS_NODES_MAX:,} nodes or "
                                    f"{ALIAS_CHARS_MAX:,} characters (an alias bomb?); write the values out "
                                    "instead of repeating anchors", _line(event))
            elif kind is yaml.SequenceStartEvent or kind is yaml.MappingStartEvent:
                opened.append((event.anchor, nodes, chars))
                nodes += 1
                if len(opened) > MAX_DEPTH:
                    raise Unbounded(DEEP, _line(event))
            elif kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
                anchor, nodes_before, chars_before = opened.pop()
                if anchor:
                    sizes[anchor] = (nodes - nodes_before, chars - chars_before)
    finally:
        loader.dispose()


class RepeatedKey(Unbounded):
    """A key given twice in one mapping: `key`, the line it is first given on, and `line`, the second."""

    def __init__(self, key: str, first: int | None, line: int | None) -> None:
        self.key, self.first = key, first
        where = f"lines {first} and {line}" if first != line else f"both on line {line}"
        super().__init__(f"the key {key[:80]!r} is given twice in one mapping ({where}); keep one", line)


class _Keys:
    """The scalar keys of every mapping open in an event stream, to refuse one given twice."""

    def __init__(self) -> None:
        self._open: list[tuple[dict[str, int], list[int]] | None] = []
        """Per open collection: for a mapping, its keys (with their lines) and how many nodes it has
        held so far (even: the next is a key); None for a sequence."""

    def see(self, event: Any, kind: type) -> None:
        if kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
            self._open.pop()
            return
        if kind not in (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent):
            return
        parent = self._open[-1] if self._open else None
        if parent is not None:
            seen, held = parent
            if held[0] % 2 == 0 and kind is yaml.ScalarEvent and event.value != "<<":
                line = _line(event)
                if event.value in seen:
                    raise RepeatedKey(event.value, seen[event.value], line)
                seen[event.value] = line or 0
            held[0] += 1
        if kind is yaml.MappingStartEvent:
            self._open.append(({}, [0]))
        elif kind is yaml.SequenceStartEvent:
            self._open.append(None)


def construct(loader: Any, root: yaml.Node) -> Any:
    """The data of a composed document; a value that cannot be built (`2020-02-30`, `!!float x`),
    which PyYAML raises as a bare `ValueError`, is a `ConstructorError` marked with its node's line."""
    try:
        return loader.construct_document(root)
    except (ValueError, TypeError, OverflowError) as exc:
        node = _unbuildable(root)
        raise yaml.constructor.ConstructorError(None, None, f"a value cannot be read ({exc})",
                                                node.start_mark if node is not None else None) from None


def _unbuildable(root: yaml.Node) -> yaml.Node | None:
    """The first scalar, in file order, whose value cannot be built."""
    constructor = yaml.constructor.SafeConstructor()
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            try:
                constructor.construct_object(node, deep=True)
            except (ValueError, TypeError, OverflowError, yaml.YAMLError):
                return node
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for key, value in reversed(node.value) for item in (value, key))
    return None


class TextLoader(LOADER):  # type: ignore[misc,valid-type]
    """`LOADER` reading every plain scalar as the text it is written as (`yes`, `No`, `007`, `2020-01-01`
    stay text: YAML would read True, False, 7, a date), but `null`/`~` and merge keys (`<<`)."""


TextLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:merge")]
    for first, resolvers in LOADER.yaml_implicit_resolvers.items()}


def load_yaml(text: str, *, unique_keys: bool = False, as_written: bool = False) -> Any:
    """The data of a single YAML document, after `check_yaml` (raises `Unbounded` or `yaml.YAMLError`);
    with `as_written`, every plain scalar but null is the text it is written as (`TextLoader`)."""
    check_yaml(text, unique_keys=unique_keys)
    loader = (TextLoader if as_written else LOADER)(text)
    try:
        root = loader.get_single_node()
        return construct(loader, root) if root is not None else None
    finally:
        loader.dispose()


def depth_over(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether lists and mappings in already-parsed data nest deeper than `limit`, walked level by level
    without recursion. Only lists and mappings are gathered, in one comprehension per container: an export of
    a million small records holds five million strings and numbers, which stacking one by one made most of its
    reading time. A level that holds one container twice (a structure sharing itself) keeps it once, so no
    sharing multiplies the walk (a level never holds more containers than the data has)."""
    level = [data] if isinstance(data, (list, dict)) else []
    depth = 0
    while level:
        if depth >= limit:
            return True
        below: list[Any] = []
        for value in level:
            below += [item for item in (value.values() if isinstance(value, dict) else value)
                      if isinstance(item, (list, dict))]
        if len(set(map(id, below))) < len(below):
            below = list({id(item): item for item in below}.values())
        level, depth = below, depth + 1
    return False


def load_json(text: str | bytes, *, object_pairs_hook: Any = None, strict: bool = True) -> Any:
    """JSON data nested at most `MAX_DEPTH` deep; `Unbounded` when deeper, `ValueError` when not JSON.
    `object_pairs_hook` builds each object from its pairs, as `json.loads`'s does. A byte order mark
    that opens the text (an editor on Windows saves one) is not part of it: `json.loads` refused it.
    `strict=False` reads a string holding a raw line break or tab (a model's multi-paragraph text) as
    that text, as `json.loads`'s `strict` does."""
    if isinstance(text, str):
        text = text.removeprefix("\ufeff")
    try:
        data = json.loads(text, object_pairs_hook=object_pairs_hook, strict=strict)
    except RecursionError:
        data = None
        deep = True
    else:
        deep = depth_over(data)
    if deep:
        raise Unbounded(f"lists and objects are nested more than {MAX_DEPTH} levels deep")
    return data


def json_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of a JSON-lines text, split at `\n` alone: a writer that does not escape them (ours with
    `ensure_ascii=False`, the Claude Code CLI's) leaves U+2028, U+0085 and the other characters
    `str.splitlines` also breaks at inside a line's JSON. With `keepends`, each line keeps its newline
    (a last line without one stays without)."""
    lines = text.split("\n")
    last = lines.pop()
    if keepends:
        lines = [line + "\n" for line in lines]
    return [*lines, last] if last else lines


def text_lines(handle: BinaryIO, limit: int, errors: str = "replace") -> Iterator[str | None]:
    """Each line of a binary file, its line break kept (a last line without one was torn), decoded as UTF-8
    (what is not, replaced; `errors="surrogateescape"`: kept as escapes, for `whole_line` to refuse); None
    for a line over `limit` bytes, passed over a megabyte at a time and never held in memory. OSError for
    what is no regular file (a device, a pipe: `/dev/zero` has no end to skip)."""
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        raise OSError(f"{getattr(handle, 'name', 'the file')} is not a regular file (a device or a pipe)")
    while line := handle.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield line.decode("utf-8", errors=errors)


_ESCAPED = re.compile("[\udc80-\udcff]")


def whole_line(line: str | None, limit: int) -> str:
    """A line `text_lines` read with `errors="surrogateescape"`, when it was UTF-8 text and within `limit`
    bytes; else ValueError saying why. A record a program wrote as UTF-8 that holds bytes of no character
    was damaged (a flipped bit, a file saved again in another encoding): read with those bytes replaced,
    its words would be other words, so it is not read at all."""
    if line is None:
        raise ValueError(f"the line is over the limit of {limit:,} bytes; it was not read")
    if (bad := _ESCAPED.search(line)) is not None:
        raise ValueError(f"the line is not UTF-8 text (a byte of no character at character {bad.start() + 1:,}); "
                         "it was not read")
    return line


def as_text(line: str | None) -> str:
    """A line `text_lines` read with `errors="surrogateescape"` as text: bytes of no character replaced."""
    return (line or "").encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def count_lines(handle: BinaryIO) -> int:
    """How many lines a binary file holds (a last one without a line break counts), read a megabyte at a
    time: never a whole line in memory, however long."""
    count, last = 0, b"\n"
    while chunk := handle.read(1 << 20):
        count, last = count + chunk.count(b"\n"), chunk[-1:]
    return count + (last != b"\n")


class NotedObject(dict):
    """A JSON object as read, with the keys it gives more than once (`repeated`, key -> times): JSON
    readers keep the last silently, and which one was meant cannot be told."""

    repeated: dict[str, int] = {}


def noting_repeats(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """`load_json`'s `object_pairs_hook` for a reader that refuses a key given twice: the object, with
    its `repeated` keys noted."""
    read = dict(items)
    if len(read) == len(items):
        return read  # no key given twice: a plain dict (readers ask `getattr(obj, "repeated", {})`), built fastest
    noted = NotedObject(items)
    noted.repeated = {key: n for key, n in Counter(key for key, _ in items).items() if n > 1}
    return noted
