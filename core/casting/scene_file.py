"""Scene files (DESIGN §4): YAML validated by pydantic, every error naming file, field and line.

`load_scene(path)` is the entry point. The model is the engine's `Scene` plus one field per format
section (`collaborate:`, `roundtable:`), each the model its format declares, and the registry's
rules (`Format.check_scene`). Unknown keys are errors, so that a typo is never a silently ignored
setting; the line of each problem is found by walking the composed YAML node tree.
"""

from __future__ import annotations

import difflib
import re
from datetime import date
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, BaseModel, ValidationError, create_model

from promptdesk.core.casting.yaml_types import as_written
from promptdesk.core.engine.scene_parts import BenchmarkSource, CastOverride, Limits, ScheduledEvent
from promptdesk.core.engine.scene import Scene as PlayedScene
from promptdesk.core.protocol.yaml_lines import YamlLines
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.formats.registry import FORMATS
from promptdesk.core.protocol.bounded import LOADER, Unbounded, check_yaml, construct, read_capped
from promptdesk.core.providers.spec import ProviderSpec

SCENE_MAX_BYTES = 1_048_576
"""A scene file (or a sweep plan) larger than 1 MB is refused before it is parsed."""
TEXT_MAX = 20_000
"""The longest text a scene field may hold, in characters (a long setting is a page or two)."""
LIST_MAX = 1_000
"""The most entries a list or mapping in a scene may hold."""
PROBLEMS_SHOWN = 20
"""At most this many validation problems are listed; the rest are counted."""


def _scene_model() -> type[PlayedScene]:
    """The scene-file model: the engine's scene, its `format` one of the registry's, and each format's section."""
    sections: dict[str, Any] = {name: (fmt.section | None, Field(None, description=f"Settings of the `{name}` format."))
                                for name, fmt in FORMATS.items() if fmt.section}
    model = create_model("Scene", __base__=PlayedScene, __module__=__name__,
                         format=(Literal[tuple(FORMATS)],
                                 Field("scene", description=PlayedScene.model_fields["format"].description)),
                         **sections)  # type: ignore[call-overload]
    model.formats = FORMATS
    return model


Scene = _scene_model()
"""A validated scene file (a `promptdesk.core.engine.scene.Scene` with its format's section)."""
_NESTED: dict[str, type[BaseModel]] = {"limits": Limits, "provider": ProviderSpec, "judge": ProviderSpec,
                                       "evaluator": ProviderSpec, "benchmark": BenchmarkSource,
                                       "events": ScheduledEvent, "cast": CastOverride,
                                       **{name: fmt.section for name, fmt in FORMATS.items() if fmt.section}}
_WITHOUT_GOT = {"slug", "latency", "caps", "alias", "not_in_cast", "duplicate", "too_short",
                "missing", "extra_forbidden", "format"}


def _dotted(loc: tuple[Any, ...]) -> str:
    """`("events", 1, "text")` -> `events[1].text`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the node at `loc` (see `YamlLines.of`)."""
    return YamlLines(root).of(loc)


def _capped(problems: list[str]) -> list[str]:
    """The first `PROBLEMS_SHOWN` problems, and how many more there are."""
    if len(problems) <= PROBLEMS_SHOWN:
        return problems
    return problems[:PROBLEMS_SHOWN] + [f"... and {len(problems) - PROBLEMS_SHOWN:,} more problems"]


def _message(error: Any, loc: tuple[Any, ...]) -> str:
    """Pydantic's message, plus the offending value and, for a typo'd key, the nearest known key."""
    kind, msg = error["type"], error["msg"].removeprefix("Value error, ")
    if kind == "extra_forbidden" and loc:
        model = Scene if len(loc) == 1 else _NESTED.get(str(loc[0]))
        if model is not None:
            known = list(model.model_fields) + (["provider"] if model is CastOverride else [])
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            msg = f"unknown key '{loc[-1]}'" + (f" (did you mean '{close[0]}'?)" if close else
                                                 f" (allowed: {', '.join(known)})")
    elif kind not in _WITHOUT_GOT and isinstance(error.get("input"), (str, int, float, bool)):
        msg += f" (got {error['input']!r})"
    if kind == "string_type" and isinstance(error.get("input"), (bool, date)):
        read_as = "a boolean" if isinstance(error["input"], bool) else "a date"
        msg += f"; YAML reads it as {read_as}: put the text in quotes"
    return msg


def _where(source: str, line: int | None) -> str:
    """`file:line` or just `file` when the line is unknown."""
    return source if line is None else f"{source}:{line}"


def _problems(exc: ValidationError, root: yaml.Node | None, source: str) -> list[str]:
    """One `file:line: field: message` line per validation error, in file order.

    Our own errors may carry a `key` in their context: the entry inside the field that is wrong
    (a perspectives key, a duplicate's index); it is appended to the location to find its line.
    """
    rows, lines = [], YamlLines(root)
    for error in exc.errors():
        loc = tuple(error["loc"])
        key = (error.get("ctx") or {}).get("key")
        if key is not None:
            loc += (key,)
        rows.append((lines.of(loc), f"{_dotted(loc)}: {_message(error, loc)}"))
    rows.sort(key=lambda row: row[0] or 0)
    return [f"{_where(source, line)}: {text}" for line, text in rows]


def _oversized(data: Any, loc: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(location, what) of every text over `TEXT_MAX` and every list or mapping over `LIST_MAX`."""
    if isinstance(data, str):
        if len(data) > TEXT_MAX:
            yield loc, f"text of {len(data):,} characters is over the limit of {TEXT_MAX:,}"
    elif isinstance(data, (list, dict)):
        if len(data) > LIST_MAX:
            yield loc, f"{len(data):,} entries is over the limit of {LIST_MAX:,}"
            return
        items = data.items() if isinstance(data, dict) else enumerate(data)
        for key, value in items:
            if isinstance(key, str) and len(key) > TEXT_MAX:
                yield loc, f"a key of {len(key):,} characters is over the limit of {TEXT_MAX:,}"
            yield from _oversized(value, loc + (key,))


def _validate(data: Any, root: yaml.Node | None, source: str) -> Scene:
    """Validate raw data into a Scene, or raise InvalidConfig listing every problem with its line."""
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise InvalidConfig(f"{_where(source, _line_of(root, ()))}: (top level): a scene must be a mapping of keys "
                            f"(name, characters, ...), but this file is {kind}.", file=source)
    lines = YamlLines(root)
    too_big = [f"{_where(source, lines.of(loc))}: {_dotted(loc)}: {what}" for loc, what in _oversized(data)]
    if too_big:
        raise InvalidConfig("\n".join(_capped(too_big)), file=source, problems=too_big)
    try:
        scene = Scene.model_validate(data)
    except ValidationError as exc:
        problems = _problems(exc, root, source)
        raise InvalidConfig("\n".join(_capped(problems)), file=source, problems=problems) from None
    problems = [f"{_where(source, line)}: {_dotted(loc)}: {what}" for line, loc, what in as_written(scene, root)]
    if problems:
        raise InvalidConfig("\n".join(_capped(problems)), file=source, problems=problems)
    return scene


def scene_from_dict(data: dict, source: str = "<scene>") -> Scene:
    """Validate an already-parsed scene; problems name `source` and the field (there are no lines)."""
    return _validate(data, None, source)


def _near_key(text: str, line: int) -> str:
    """The top-level key at or above a (1-based) line, to say where a syntax error is."""
    for raw in reversed(text.splitlines()[:line]):
        match = re.match(r"([A-Za-z_][\w-]*)\s*:", raw)
        if match:  # a key of a megabyte (YAML refuses a key over 1,024 characters) is named by its start
            key = match.group(1)
            return key if len(key) <= 80 else f"{key[:80]}…"
    return "(top level)"


def _compose(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """Parse YAML once, keeping both the node tree (for lines) and the data; aliases, loops and
    nesting are checked first (`promptdesk.core.protocol.bounded`), before any node is built."""
    try:
        check_yaml(text, unique_keys=True)
    except Unbounded as exc:
        line = exc.line or 1
        raise InvalidConfig(f"{source}:{line}: {_near_key(text, line)}: {exc}", file=source, line=line) from None
    except yaml.YAMLError:
        pass  # the same syntax error is reported below, with its context
    loader = LOADER(text)
    try:
        root = loader.get_single_node()
        return (construct(loader, root) if root is not None else None), root
    except yaml.MarkedYAMLError as exc:
        mark, began = exc.problem_mark or exc.context_mark, exc.context_mark or exc.problem_mark
        line = mark.line + 1 if mark else 1
        where = f":{mark.column + 1}" if mark else ""
        opened = f" (line {began.line + 1})" if began and mark and began.line != mark.line else ""
        problem = ", ".join(p for p in (f"{exc.context}{opened}" if exc.context else "", exc.problem) if p)
        near = _near_key(text, began.line + 1 if began else line)
        raise InvalidConfig(f"{source}:{line}{where}: {near}: invalid YAML: {problem}",
                            file=source, line=line) from None
    except yaml.reader.ReaderError as exc:  # a character YAML refuses anywhere (NUL, ESC, ...): said with its line
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise InvalidConfig(f"{source}:{line}:{column}: {_near_key(text, line)}: invalid YAML: the control character "
                            f"U+{exc.character:04X} is not allowed in YAML; remove it", file=source, line=line) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise InvalidConfig(f"{source}:1: (top level): invalid YAML: {exc}", file=source) from None
    finally:
        loader.dispose()


def _read_text(path: Path, what: str, max_bytes: int) -> str:
    """A UTF-8 file's text (a pipe too), refused (InvalidConfig naming it) when missing, unreadable,
    not UTF-8 or over `max_bytes`; never more than that is read."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            raw = read_capped(handle, max_bytes)
        if raw is None:
            size = f"{Path(path).stat().st_size:,} bytes" if Path(path).is_file() else "more"
            raise InvalidConfig(f"{what} {source} is {size}, over the limit of {max_bytes / 1_048_576:g} MB "
                                f"({max_bytes:,} bytes).", file=source)
        return raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise InvalidConfig(f"{what} {source} not found.", file=source) from None
    except UnicodeDecodeError as exc:
        raise InvalidConfig(f"{what} {source} is not valid UTF-8 (byte {exc.start}).", file=source) from None
    except OSError as exc:
        raise InvalidConfig(f"Cannot read {what.lower()} {source}: {exc.strerror or exc}.", file=source) from None


def read_yaml(path: Path, what: str = "YAML file", max_bytes: int = SCENE_MAX_BYTES) -> Any:
    """The data of a YAML file a person brings (a sweep plan, ...), read within the scene file's
    bounds: size, aliases, nesting. Every problem is an InvalidConfig naming the file and its line."""
    return _compose(_read_text(Path(path), what, max_bytes), str(path))[0]


def load_scene(path: Path) -> Scene:
    """Read and validate a scene file; every InvalidConfig names the file, the field and the line."""
    source = str(path)
    data, root = _compose(_read_text(Path(path), "Scene file", SCENE_MAX_BYTES), source)
    scene = _validate(data, root, source)
    scene._folder = Path(path).resolve().parent
    scene._file = Path(path).name
    if scene.system_prompt:
        _system_prompt_inside(scene.system_prompt, scene._folder, _where(source, _line_of(root, ("system_prompt",))))
    return scene


def _system_prompt_inside(named: str, folder: Path, where: str) -> None:
    """Refuse a `system_prompt:` outside the scene file's folder (absolute, `~`, `..`, or a symlink
    leading out): every actor's briefing opens with that file's text and is sent to a model, so a
    scene someone hands you must not be able to name another file of yours (a key, a `.env`)."""
    target = (folder / Path(named).expanduser()).resolve()
    if not target.is_relative_to(folder):
        raise InvalidConfig(f"{where}: system_prompt: {named!r} is outside the scene file's folder ({folder}); the "
                            "actor system prompt is sent to the models, so a scene may only name a file beside it or "
                            "below it: copy the file into that folder and name it relative to the scene file.",
                            file=where.rsplit(":", 1)[0] if ":" in where else where)
