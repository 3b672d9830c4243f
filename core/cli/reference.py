"""The docs' reference pages, generated from the code so they cannot drift: the scene file (from the
pydantic models and their JSON Schema), the command line (from the argparse parsers), the run folder
(from the event models and `RUN_FILES`), the character and strategy files, and the exit and error codes.

`python -m promptdesk.core.cli.reference docs/reference` (run by `make docs`) writes them; a test
generates them again and compares them with the committed pages.
"""

from __future__ import annotations

import argparse
import html
import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from promptdesk.core.cli.schema import schema_of

GENERATED = ("<!-- Generated from the code by `make docs` (python -m promptdesk.core.cli.reference docs/reference): "
             "do not edit by hand; tests/test_docs.py checks it is current. -->")


def cell(text: Any) -> str:
    """`text` fit for one cell of a Markdown table, read alike by MkDocs and a code host: a `|` outside code
    is escaped (`\\|`), and so is a `<` (a help's `<slug>` or `<speech>` would be read as an HTML tag and
    vanish); a code span holding a bar is written as HTML with the bar as `&#124;`, since GitHub splits the
    row at a bar even inside code and Python-Markdown shows the escape's backslash there."""
    parts = re.split(r"(`[^`]*`)", " ".join(str(text).split()))
    return "".join(_code_cell(part[1:-1]) if part.startswith("`") and part.endswith("`") and len(part) > 1
                   else part.replace("|", "\\|").replace("<", "&lt;") for part in parts)


def _code_cell(code: str) -> str:
    """One code span of a table cell; with a bar in it, as `<code>` HTML."""
    if "|" not in code:
        return f"`{code}`"
    return "<code>" + html.escape(code, quote=False).replace("|", "&#124;") + "</code>"


def type_of(prop: dict[str, Any]) -> str:
    """A JSON Schema property's type, as a reader writes it (`text`, `whole number ≥ 1`, `a | b`, …)."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in prop:
        kinds = [type_of(p) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(kinds) + (" or null" if any(p.get("type") == "null" for p in prop["anyOf"]) else "")
    if "enum" in prop:
        return " | ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    kind = prop.get("type")
    if kind == "array":
        if "prefixItems" in prop:
            return "[" + ", ".join(type_of(p) for p in prop["prefixItems"]) + "]"
        return f"list of {type_of(prop.get('items', {}))}" + bounds(prop, "minItems", "maxItems", "items")
    if kind == "object":
        extra = prop.get("additionalProperties")
        return f"mapping of name → {type_of(extra)}" if isinstance(extra, dict) else "mapping"
    names = {"string": "text", "integer": "whole number", "number": "number", "boolean": "true/false"}
    return names.get(kind, str(kind or "any")) + bounds(prop, "minimum", "maximum", "", "exclusiveMinimum",
                                                          "exclusiveMaximum")


def bounds(prop: dict[str, Any], low: str, high: str, unit: str = "", xlow: str = "", xhigh: str = "") -> str:
    """The limits a property states, lower first: ` ≥ 1`, ` 0–1`, ` > 0 and ≤ 1`, ` (at most 2 items)`."""
    if low in prop and high in prop:
        said = f"{prop[low]}–{prop[high]}"
    else:
        lower = f"≥ {prop[low]}" if low in prop else f"> {prop[xlow]}" if xlow and xlow in prop else ""
        upper = f"≤ {prop[high]}" if high in prop else f"< {prop[xhigh]}" if xhigh and xhigh in prop else ""
        said = " and ".join(part for part in (lower, upper) if part)
    if not said:
        return ""
    return f" ({said} {unit})" if unit else f" {said}"


def default_of(name: str, prop: dict[str, Any], required: list[str]) -> str:
    if name in required:
        return "required"
    if "default" not in prop:
        return "—"
    return f"`{json.dumps(prop['default'], ensure_ascii=False)}`"


def field_table(schema: dict[str, Any], skip: tuple[str, ...] = ()) -> list[str]:
    """One row per property of an object schema: key, type, default, description."""
    rows = ["| key | type | default | what it is |", "| --- | --- | --- | --- |"]
    required = schema.get("required", [])
    for name, prop in schema.get("properties", {}).items():
        if name not in skip:
            rows.append(f"| `{name}` | {cell(type_of(prop))} | {cell(default_of(name, prop, required))} | "
                        f"{cell(prop.get('description', ''))} |")
    return rows


def needs_sentence(fmt: Any) -> str:
    """What a file of the format `fmt` needs beyond `name` and `characters`, as the page says it."""
    cast = f" and at least {fmt.min_cast()} characters" if fmt.min_cast() > 1 else ""
    return f"a `{fmt.name}` needs {fmt.needs_said}{cast}"


def scene_file_page() -> str:
    """The scene file: every field of every model, with its type, default, limits and description."""
    from promptdesk.core.casting import scene_file
    from promptdesk.core.protocol.bounded import MAX_DEPTH

    schema = schema_of("scene")
    needs = "; ".join(needs_sentence(fmt) for fmt in scene_file.FORMATS.values())
    lines = ["# Scene file", "", GENERATED, "",
             f"A scene is a YAML file. Every file needs `name` and `characters`, and each format more: {needs}. "
             "Unknown keys are refused (a typo "
             "is never a setting silently ignored), and every problem names the file, the field and the line "
             f"(`INVALID_CONFIG`). Bounds: a file of at most {scene_file.SCENE_MAX_BYTES // 1_048_576} MB, texts of at "
             f"most {scene_file.TEXT_MAX:,} characters, lists and mappings of at most {scene_file.LIST_MAX:,} "
             f"entries, nested at most {MAX_DEPTH} deep, no alias bombs.", "",
             "Editors that speak the YAML language server validate and complete a scene that opens with "
             "`# yaml-language-server: $schema=scene.schema.json` with [scene.schema.json](scene.schema.json) beside it "
             "(the examples do, and ship it; `promptdesk init` copies it); "
             "`promptdesk schema scene` prints the same schema.", "", "## Top level", ""]
    lines += field_table(schema)
    for name, section in schema["$defs"].items():
        lines += ["", f"## {name}", "", cell(section.get("description", "")), ""]
        lines += field_table(section)
    return "\n".join(lines) + "\n"


def option_rows(parser: argparse.ArgumentParser) -> list[str]:
    """One row per argument of `parser`: flags, what it takes, default, help."""
    rows = ["| argument | takes | default | what it does |", "| --- | --- | --- | --- |"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}`"
        if action.choices:
            takes = " | ".join(f"`{c}`" for c in action.choices)
        elif action.nargs == 0 or not action.option_strings:
            takes = "—"
        else:
            takes = f"`{action.metavar or action.dest.upper()}`"
        # A switch (no value) has no default of its own: a `--no-x` beside `--x` holds True only as what it stores.
        default = ("—" if action.nargs == 0 or action.default in (None, False, [], argparse.SUPPRESS)
                   else f"`{action.default}`")
        rows.append(f"| {cell(names)} | {cell(takes)} | {cell(default)} | {cell(action.help or '')} |")
    return rows


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the command line: `promptdesk` itself, then each command's, in the help's order."""
    from promptdesk.core.cli import import_sotopia, take_sweep
    from promptdesk.core.cli.main import COMMANDS, parser

    found = [("promptdesk", parser())]
    for name, (module, _) in COMMANDS.items():
        if module:
            found.append((f"promptdesk {name}", importlib.import_module(f"promptdesk.core.cli.{module}").parser()))
            if name == "sweep":
                found.append(("promptdesk sweep --branch-from", take_sweep.parser()))
            if name == "import":
                found.append(("promptdesk import sotopia", import_sotopia.parser()))
    return found


def cli_page() -> str:
    """The command line: every command, every flag."""
    lines = ["# Command line", "", GENERATED, "",
             "`promptdesk` opens the console; `promptdesk --batch SCENE` plays a scene headless; the commands "
             "beside them each take `--help`. A scene is a file, or a name found in `./scenes/` and then among the "
             "examples Promptdesk ships. Every help text ends with its exit codes ([exit codes](exit-codes.md)).", ""]
    for name, parser in parsers():
        usage = parser.format_usage().strip().removeprefix("usage: ").splitlines()
        lines += [f"## `{name}`", "", cell(parser.description or ""), "", "```text", usage[0],
                  *("    " + line.strip() for line in usage[1:]), "```", ""]
        lines += option_rows(parser)
        lines += ["", cell(parser.epilog.split("\n\n")[-1]) if parser.epilog else "", ""]
    return "\n".join(lines).rstrip() + "\n"


def model_rows(model: type[BaseModel], skip: tuple[str, ...] = ("type",)) -> list[str]:
    rows = ["| field | type | what it is |", "| --- | --- | --- |"]
    for name, info in model.model_fields.items():
        if name not in skip:
            key = info.alias or name
            kind = getattr(info.annotation, "__name__", None) or str(info.annotation).replace("typing.", "")
            rows.append(f"| `{key}` | {cell(kind)} | {cell(info.description or '')} |")
    return rows


def run_folder_page() -> str:
    """The run folder: every file, every event type."""
    from promptdesk.core.formats.registry import FORMATS
    from promptdesk.core.record import events
    from promptdesk.core.record.run_folder import RUN_FILES

    lines = ["# Run folder", "", GENERATED, "",
             "Each run writes `runs/<scene>-<YYYYmmdd-HHMMSS>/` (or `--out DIR`): made in one step, never reused, "
             "private to you (folder 0700, files 0600).", "", "| file | what it holds |", "| --- | --- |"]
    lines += [f"| `{name}` | {cell(text)} |" for name, text in RUN_FILES.items()]
    lines += [f"| `{name}` | A `{fmt.name}` run's own: {cell(text)} |" for fmt in FORMATS.values()
              for name, text in fmt.run_files.items()]
    lines += ["", "## Events", "", "`events.jsonl` holds one JSON object per line. Every event has these fields:", ""]
    lines += model_rows(events.BaseEvent)
    typed = [events.ThinkEvent, events.SpeakEvent, events.JournalEvent, events.CloseEvent, events.CallEvent]
    for model in typed:
        kind = model.model_fields["type"].default
        lines += ["", f"### `{kind}`", "", cell(model.__doc__ or "")]
        own = model_rows(model, skip=("type", *events.BaseEvent.model_fields))
        lines += ["", *own] if len(own) > 2 else []
    lines += ["", "### Other types", "", "These carry the common fields, and `reason` where they have one.", "",
              "| type | what it records |", "| --- | --- |"]
    lines += [f"| `{name}` | {cell(text)} |" for name, text in events.GENERIC_TYPES.items()]
    return "\n".join(lines) + "\n"


def character_page() -> str:
    from promptdesk.core.characters import loading

    schema = schema_of("character")
    lines = ["# Character file", "", GENERATED, "", cell(re.sub(r" \(DESIGN §\d+\)", "", loading.__doc__.split("\n\n", 1)[0])), "",
             "Accepted layouts, in each folder:", "",
             "- `<name>/profile.md`, with the journal at `<name>/journal.md` (in a folder you may write; the examples",
             "  Promptdesk ships and a read-only folder keep theirs in the journal store, as below);",
             "- `<name>.md` (the `.claude/agents` form), also in the folder's subfolders, two deep",
             "  (`.claude/agents/engineering/frontend-developer.md`); a `<name>.journal.md` beside it is where its journal",
             "  starts, and runs append to its copy in Promptdesk's journal store (`.promptdesk/journals/<name>.md` beside",
             "  the scene file), never beside the file: see [bringing characters](../guide/characters.md).", "",
             "## Front matter", "", cell(schema["description"]) + " Any other key is kept but never reaches an actor.", ""]
    lines += field_table(schema)
    return "\n".join(lines) + "\n"


def strategy_page() -> str:
    from promptdesk import resources

    schema = schema_of("strategy")
    shipped = ", ".join(f"`{p.stem}`" for p in sorted(resources.strategies_dir().glob("*.yaml")))
    lines = ["# Strategy file", "", GENERATED, "",
             "A roundtable's strategy is a YAML file, `strategies/<name>.yaml`, searched in a scene's "
             "`roundtable.strategies_dirs`, `./strategies/`, beside the scene's folder, then among those Promptdesk "
             f"ships ({shipped}).", "", "## Strategy", ""]
    lines += field_table(schema)
    lines += ["", "## Phase", ""] + field_table(schema["$defs"]["Phase"])
    return "\n".join(lines) + "\n"


def codes_page() -> str:
    from promptdesk.core import errors

    lines = ["# Exit and error codes", "", GENERATED, "", "## Exit codes", "", "| command | exit codes |", "| --- | --- |"]
    for name, parser in parsers():
        lines.append(f"| `{name}` | {cell(parser.epilog.split(chr(10) * 2)[-1].removeprefix('Exit codes: '))} |")
    lines += ["", "For every command: output that cannot be written (a full disk, a closed stdout: `>&-`) is said with "
              "`RECORDING_ERROR` on stderr, exit 1; a reader that went away before the output was all written "
              "(`| head -1` of a long listing) ends the printing quietly, exit 1 (`evaluate` scores every run first), "
              "while output the pipe took whole before its reader left was written (the usual exit code). Data goes to stdout (`--json`, `--csv`, tables), every "
              "message to stderr. A run (`--batch`, `resume`, `branch`, `sweep`) and `evaluate` stop gracefully on "
              "Ctrl-C, SIGTERM and SIGHUP, with the exit codes above (a stopped sweep or evaluation: 1); every other "
              "command exits 130 on Ctrl-C, saying so in one line, never a traceback.",
              "", "## Error codes", "", "Every refusal starts with its code and says what to fix.", "",
              "| code | when |", "| --- | --- |"]
    found = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.PromptdeskError)]
    for kind in sorted(found, key=lambda c: c.code):
        if kind is not errors.PromptdeskError:
            lines.append(f"| `{kind.code}` | {cell((kind.__doc__ or '').split(chr(10) * 2)[0])} |")
    return "\n".join(lines) + "\n"


PAGES = {"scene-file.md": scene_file_page, "cli.md": cli_page, "run-folder.md": run_folder_page,
         "character-file.md": character_page, "strategy-file.md": strategy_page, "exit-codes.md": codes_page,
         "scene.schema.json": lambda: json.dumps(schema_of("scene"), indent=2, ensure_ascii=False) + "\n"}
"""Every generated file of `docs/reference/`, by name."""


def generate() -> dict[str, str]:
    """Every reference page, by file name (usage lines wrapped at 100 columns, whatever the terminal)."""
    import os

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        return {name: make() for name, make in PAGES.items()}
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


SHIPPED_SCHEMA = "scene.schema.json"
"""The scene schema also ships beside the example scenes, which name it on their first line
(`# yaml-language-server: $schema=scene.schema.json`), so editors validate them wherever they are."""


def main(argv: list[str]) -> int:
    """Write the pages into the folder given (default `docs/reference`), and the scene schema beside
    the example scenes. `--help` prints how and writes nothing; an option it does not take exits 2."""
    from promptdesk import resources

    ask = argparse.ArgumentParser(prog="python -m promptdesk.core.cli.reference",
                                  description="Write the docs' reference pages, generated from the code, into FOLDER, "
                                              f"and {SHIPPED_SCHEMA} beside the example scenes (run in a checkout).",
                                  epilog="Exit codes: 0 written; 2 an argument it does not take, or a FOLDER that "
                                         "cannot be written.")
    ask.add_argument("folder", nargs="?", default="docs/reference", metavar="FOLDER",
                     help="where the pages go (default docs/reference)")
    folder = Path(ask.parse_args(argv).folder)
    pages = generate()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in pages.items():
            (folder / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"INVALID_CONFIG: cannot write the reference pages into {folder}: {exc.strerror or exc}; "
              "give a folder you can write", file=sys.stderr)
        return 2
    shipped = resources.scenes_dir()
    if (shipped.resolve().parent / "pyproject.toml").is_file():  # a checkout's scenes/: never an installed package's
        (shipped / SHIPPED_SCHEMA).write_text(pages[SHIPPED_SCHEMA], encoding="utf-8")
        beside = f", and {SHIPPED_SCHEMA} beside the example scenes"
    else:
        beside = (f"; the installed package's {SHIPPED_SCHEMA} is left as it is (it is regenerated in a checkout, "
                  "before the package is built)")
    print(f"Wrote {len(PAGES)} reference files into {folder}{beside}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
