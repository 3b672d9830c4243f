"""`promptdesk init [DIR]`: a folder to edit, made from what Promptdesk ships: the example scenes, their
characters, the roundtable strategies, and a README saying what is where.

Nothing is ever overwritten: when any file it would write exists already, it lists them all and writes
nothing (exit 2). The shipped examples' marker (which keeps runs from writing journals into the
shipped folder) is left out: the copied characters are the operator's own, their journals kept beside
their profiles.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from promptdesk import resources, version
from promptdesk.core.characters.journal_store import EXAMPLES_MARKER
from promptdesk.core.cli.common import command_parser, exit_codes, refuse
from promptdesk.core.errors import EXIT_CLOSED

README = """\
# A Promptdesk stage

Made by `promptdesk init` (Promptdesk {version}) from the examples Promptdesk ships. Edit anything.

| folder | what is there |
| --- | --- |
| `scenes/` | one YAML file per scene: who is in it, where, what they want, how it may end |
| `characters/` | one folder per character (`<name>/profile.md`, its journal beside it), or `<name>.md` |
| `strategies/` | roundtable strategies: phases, roles, who speaks when |
| `runs/`, `sweeps/` | appear as you play: one folder per run, one per sweep |

Play a scene in the console: `promptdesk scenes/the-apology.yaml` (from this folder), or headless:
`promptdesk --batch scenes/the-apology.yaml --isolation b --coordinator C`.
Every field of a scene file: `promptdesk schema scene` prints its JSON Schema. Where Promptdesk
reads and writes from here: `promptdesk paths`.
"""


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk init", "Write a folder to edit: the example scenes, characters and roundtable "
                       "strategies Promptdesk ships, and a README of what is where. Nothing is ever overwritten.",
                       exit_codes("written", None, "a file it would write exists already (all are listed; nothing "
                                  "is written), or the folder cannot be written"))
    p.add_argument("folder", nargs="?", type=Path, default=Path("."), metavar="DIR",
                   help="where to write (default: the working folder; created if missing)")
    return p


def planned(folder: Path) -> dict[Path, bytes]:
    """Every file `init` writes into `folder`, with its content."""
    files: dict[Path, bytes] = {folder / "README.md": README.format(version=version()).encode()}
    for kind, source in (("scenes", resources.scenes_dir()), ("characters", resources.characters_dir()),
                         ("strategies", resources.strategies_dir())):
        for path in sorted(source.rglob("*")):
            if path.is_file() and path.name != EXAMPLES_MARKER and "__pycache__" not in path.parts:
                files[folder / kind / path.relative_to(source)] = path.read_bytes()
    return files


def main(argv: list[str]) -> int:
    """The command: exit 0 written, 2 refused (nothing written)."""
    ns = parser().parse_args(argv)
    folder: Path = ns.folder
    if folder.exists() and not folder.is_dir():
        return refuse(f"INVALID_CONFIG: {folder} is a file; give a folder to write into")
    files = planned(folder)
    taken = [str(path) for path in files if path.exists() or path.is_symlink()]
    taken += sorted({f"{part} (a file, where init writes a folder)" for path in files for part in path.parents
                     if folder in part.parents and (part.is_file() or part.is_symlink() and not part.is_dir())})
    if taken:
        listed = "\n".join(f"  {path}" for path in taken)
        return refuse(f"INVALID_CONFIG: promptdesk init writes nothing over what exists; these are there already:\n"
                      f"{listed}\nChoose an empty or new folder (promptdesk init DIR), or move them away.")
    written: list[Path] = []
    try:
        for path, content in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "xb") as handle:
                written.append(path)
                handle.write(content)
    except OSError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        return refuse(f"INVALID_CONFIG: cannot write into {folder} ({exc.strerror or exc}); nothing was kept")
    named = str(folder) if not str(folder).startswith("-") else f"./{folder}"  # `cd -dash` reads an option
    into = "" if folder == Path(".") else f"cd {shlex.quote(named)} && "
    print(f"Wrote {len(files)} files into {folder}: scenes/, characters/, strategies/ and README.md.\n"
          f"Next: {into}promptdesk", file=sys.stderr)
    return EXIT_CLOSED
