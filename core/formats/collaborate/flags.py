"""`promptdesk --batch --collaborate "GOAL" --participants gpt,claude --max-rounds 4 --first claude`:
the Scene those flags describe, built in code (no scene file), validated like a file.

`--max-rounds` and `--first` also override a scene file whose `format` is `collaborate`.
`--cast SLUG=PROVIDER[:MODEL]` gives one participant its own provider (e.g. `gpt=openai:gpt-4o`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.protocol.sanitize import mend

if TYPE_CHECKING:  # only annotations: the flags are added to the parser without loading the engine
    from promptdesk.core.engine.format import SceneReader
    from promptdesk.core.engine.scene import Scene

DEFAULT_PAIR = "gpt,claude"


def add_flags(p: argparse.ArgumentParser) -> None:
    """The collaborate flags, added to the one `promptdesk` parser."""
    g = p.add_argument_group("collaborate (spec 001)")
    g.add_argument("--collaborate", metavar="GOAL", help="run a two-assistant collaboration on GOAL (no scene file)")
    g.add_argument("--participants", metavar="A,B", help=f"participants, first to last (default {DEFAULT_PAIR})")
    g.add_argument("--max-rounds", dest="max_rounds", type=int, metavar="N", help="round cap (default 6)")
    g.add_argument("--first", metavar="SLUG", help="who speaks first (default: the first participant)")
    g.add_argument("--cast", dest="cast", action="append", default=[], metavar="SLUG=PROVIDER[:MODEL]",
                   help="a participant's own provider and model; repeatable")


def scene_for(ns: argparse.Namespace, reader: SceneReader) -> Scene | Path:
    """The scene `--batch` runs: built from the collaborate flags, or the file (with overrides)."""
    path = ns.batch if isinstance(ns.batch, Path) else None
    goal = getattr(ns, "collaborate", None)
    if goal is not None and path is not None:
        raise InvalidConfig("give a scene (a file or a name) or --collaborate GOAL, not both")
    if goal is None and path is None:
        raise InvalidConfig("--batch needs a scene file or a scene's name (promptdesk --batch SCENE ...; "
                            "`promptdesk paths` lists the scenes) or --collaborate GOAL")
    if goal is not None:  # bytes that are not UTF-8 reach Python as lone surrogates, which no file can hold
        return reader.from_dict(_scene_data(ns, mend(goal)), "--collaborate")
    if not (ns.max_rounds or ns.first or ns.cast or ns.participants):
        return path
    scene = reader.load(path)
    if scene.format != "collaborate":
        caps = {"roundtable": "its rounds with `roundtable: {max_rounds: N}`",
                "scene": "its beats with `limits: {max_beats: N}`"}
        cap = f"; cap {caps[scene.format]} in the scene file" if ns.max_rounds and scene.format in caps else ""
        raise InvalidConfig(f"{path}: --max-rounds, --first, --participants and --cast apply to `format: collaborate` "
                            f"scenes, and this one is `{scene.format}`{cap}")
    data = scene.model_dump(exclude_none=True)
    data.update(_collab_data(ns, data.get("collaborate", {})))
    if ns.participants:
        data["characters"] = _participants(ns)
    data["cast"] = {**data.get("cast", {}), **_cast(ns)}
    return reader.from_dict(data, str(path))


def _scene_data(ns: argparse.Namespace, goal: str) -> dict[str, Any]:
    return {"name": "collaboration", "title": "Collaboration", "format": "collaborate", "goal": goal,
            "characters": _participants(ns), "cast": _cast(ns), **_collab_data(ns, {})}


def _collab_data(ns: argparse.Namespace, current: dict[str, Any]) -> dict[str, Any]:
    settings = dict(current)
    if ns.max_rounds is not None:
        if ns.max_rounds <= 0:
            raise InvalidConfig(f"--max-rounds must be a positive whole number, not {ns.max_rounds}")
        settings["max_rounds"] = ns.max_rounds
    if ns.first:
        settings["first"] = ns.first
    return {"collaborate": settings}


def _participants(ns: argparse.Namespace) -> list[str]:
    return [s.strip() for s in (ns.participants or DEFAULT_PAIR).split(",") if s.strip()]


def _cast(ns: argparse.Namespace) -> dict[str, dict[str, str]]:
    """`--cast gpt=openai:gpt-4o` -> `{"gpt": {"name": "openai", "model": "gpt-4o"}}`."""
    cast: dict[str, dict[str, str]] = {}
    for item in ns.cast:
        slug, sep, spec = item.partition("=")
        if not sep or not slug.strip() or not spec.strip():
            raise InvalidConfig(f"--cast takes SLUG=PROVIDER[:MODEL], e.g. gpt=openai:gpt-4o, not {item!r}")
        name, _, model = spec.strip().partition(":")
        cast[slug.strip()] = {"name": name, **({"model": model} if model else {})}
    return cast
