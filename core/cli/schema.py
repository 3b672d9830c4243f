"""`promptdesk schema scene|character|strategy`: the JSON Schema of a scene file, of a character file's
front matter, or of a strategy file, generated from the models Promptdesk validates them with.

Editors that speak the YAML language server validate and complete a file that opens with
`# yaml-language-server: $schema=<where the schema is>`: the example scenes name `scene.schema.json`,
which ships beside them (and `promptdesk init` copies).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from promptdesk.core.cli.common import command_parser, exit_codes
from promptdesk.core.errors import EXIT_CLOSED

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk schema", "Print the JSON Schema of a scene file, of a character file's front "
                       "matter, or of a strategy file, generated from the models Promptdesk checks them with.",
                       exit_codes("printed", None))
    p.add_argument("kind", choices=kinds(), help="which file's schema")
    return p


def format_files() -> dict[str, Any]:
    """The formats' own files by kind (a roundtable's `strategy`), with their models."""
    from promptdesk.core.formats.registry import FORMATS

    return {kind: model for fmt in FORMATS.values() for kind, model in fmt.file_models().items()}


def kinds() -> tuple[str, ...]:
    """Every kind of file whose schema Promptdesk prints."""
    return ("scene", "character", *format_files())


def scene_schema() -> dict[str, Any]:
    """The scene file's JSON Schema (every field with its type, default, limits and description)."""
    from promptdesk.core.casting.scene_file import Scene

    schema = Scene.model_json_schema(mode="validation")
    cast = schema["$defs"]["CastOverride"]["properties"]
    cast["provider"] = {**cast["name"], "description": "The same key as `name`: this character's provider."}
    return {"$schema": SCHEMA_DIALECT, **schema, "title": "Promptdesk scene file"}


def schema_of(kind: str) -> dict[str, Any]:
    """The JSON Schema of `kind` (one of `kinds()`)."""
    if kind == "scene":
        return scene_schema()
    if kind == "character":
        from promptdesk.core.characters.front_matter import FrontMatterFields
        return FrontMatterFields.schema()
    model = format_files()[kind]
    return {"$schema": SCHEMA_DIALECT, **model.model_json_schema(mode="validation"), "title": f"Promptdesk {kind} file"}


def main(argv: list[str]) -> int:
    """The command: print the schema, exit 0 (as UTF-8 text, or ASCII with JSON escapes on a stdout
    that cannot show every character)."""
    ns = parser().parse_args(argv)
    utf = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").startswith("utf")
    print(json.dumps(schema_of(ns.kind), indent=2, ensure_ascii=not utf))  # JSON's own escapes elsewhere
    return EXIT_CLOSED
