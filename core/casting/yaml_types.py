"""What YAML reads as another type than the scene file meant, set right after validation.

YAML 1.1 reads an unquoted `007` as the number 7, `1_000` as 1000, `.nan` as a float, and `yes`, `no`,
`on`, `off` as booleans. A scene file's text field given such a value (`title: 007`, a character slug
`007`) keeps the text as written, not the number's digits; a number field given a boolean
(`max_beats: yes`, which a lax reading takes as 1) is refused, naming its line. `as_written` does both
on the validated scene and the composed YAML, so the reading stays the one validation made.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from pydantic import BaseModel

_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
_BOOL_TAG = "tag:yaml.org,2002:bool"


def _resolved(node: yaml.Node, loc: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], yaml.ScalarNode]]:
    """Every plain scalar YAML resolved to a number or a boolean, with its location (each node once:
    an alias is not walked again)."""
    stack: list[tuple[yaml.Node, tuple[Any, ...]]] = [(node, loc)]
    seen: set[int] = set()
    while stack:
        node, loc = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend((value, loc + (key.value,)) for key, value in node.value if isinstance(key, yaml.ScalarNode))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((value, loc + (index,)) for index, value in enumerate(node.value))
        elif isinstance(node, yaml.ScalarNode) and (node.tag in _NUMBER_TAGS or node.tag == _BOOL_TAG):
            yield loc, node


def _parent(model: Any, loc: tuple[Any, ...]) -> tuple[Any, Any] | None:
    """The container of the value at `loc` in the validated model, and the value's key in it."""
    here: Any = model
    for part in loc[:-1]:
        here = _child(here, part)
        if here is None:
            return None
    return (here, loc[-1]) if _child(here, loc[-1]) is not None else None


def _child(here: Any, part: Any) -> Any:
    if isinstance(here, BaseModel):
        return getattr(here, part, None) if isinstance(part, str) and part in type(here).model_fields else None
    if isinstance(here, dict):
        return here.get(part)
    if isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here):
        return here[part]
    return None


def as_written(model: BaseModel, root: yaml.Node | None) -> list[tuple[int, tuple[Any, ...], str]]:
    """Put back, as written, every text field YAML read as a number; return the number fields given
    a boolean, as (line, location, problem)."""
    problems: list[tuple[int, tuple[Any, ...], str]] = []
    for loc, node in _resolved(root) if root is not None else ():
        found = _parent(model, loc)
        if found is None:
            continue
        container, key = found
        value = _child(container, key)
        if node.tag == _BOOL_TAG and isinstance(value, (int, float)) and not isinstance(value, bool):
            problems.append((node.start_mark.line + 1, loc, f"a number is needed, not {node.value!r} (YAML reads an "
                                                           "unquoted yes, no, on, off, true or false as a boolean)"))
        elif node.tag in _NUMBER_TAGS and isinstance(value, str) and value != node.value:
            if isinstance(container, BaseModel):
                setattr(container, key, node.value)
            else:
                container[key] = node.value
    return sorted(problems, key=lambda problem: problem[0])
