"""Where a value stands in a YAML file: the 1-based line of a location (`("phases", 1, "name")`) in the
composed document, so a refusal can name the line to fix (scene files, strategy files)."""

from __future__ import annotations

from typing import Any

import yaml


class YamlLines:
    """Finds the 1-based line of a location in the composed YAML, each mapping indexed once (so that
    a file with thousands of keys is validated in linear time)."""

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root
        self._index: dict[int, dict[str, tuple[yaml.Node, yaml.Node]]] = {}

    def _entries(self, node: yaml.MappingNode) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if id(node) not in self._index:
            entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    entries.setdefault(key.value, (key, value))
            self._index[id(node)] = entries
        return self._index[id(node)]

    def of(self, loc: tuple[Any, ...]) -> int | None:
        """The line of the node at `loc`, or of the nearest existing parent (a key's own line for
        mappings); None when there is no YAML behind the data (`scene_from_dict`)."""
        if self.root is None:
            return None
        node, line = self.root, self.root.start_mark.line + 1
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                hit = self._entries(node).get(str(part))
                if hit is None:
                    break
                line, node = hit[0].start_mark.line + 1, hit[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line
