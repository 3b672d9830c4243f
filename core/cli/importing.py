"""`promptdesk import FILE... [--to DIR] [--user NAME] [--force]`: bring characters in.

Reads Character Card V1/V2/V3 (JSON, PNG, WebP or CharX) and TinyTroupe TinyPerson JSON, and writes each as a
Promptdesk character (`DIR/<slug>/profile.md` and `DIR/<slug>/scene-snippet.yaml`). Every file is
checked before anything is written: one bad file means nothing is written, exit 2.

`promptdesk import sotopia EXPORT.json ...` imports Sotopia's scenarios and characters instead
(`promptdesk.core.cli.import_sotopia`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from promptdesk.core.cli.common import command_parser, exit_codes
from promptdesk.core.errors import EXIT_CLOSED, EXIT_INVALID
from promptdesk.core.characters.importers.cards import DEFAULT_USER
from promptdesk.core.characters.importers.model import ImportProblem
from promptdesk.core.characters.importers.read import read_source
from promptdesk.core.characters.name_gate import name_problem
from promptdesk.core.characters.importers.write import check_free, snippet_text, write
from promptdesk.core.protocol.sanitize import strip_controls


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk import", "Import character cards (V1/V2/V3, JSON, PNG, WebP or CharX) and TinyTroupe "
                       "TinyPerson JSON as Promptdesk characters.",
                       exit_codes("every file was imported", None,
                                  "a file that cannot be imported (named, with why), a name two files share or one "
                                  "already there (without --force), or a --to that is not a folder: nothing is imported; "
                                  "a write that fails stops the import there (those written before are listed)"))
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="character cards (.json, .png, .webp, .charx) or TinyPerson JSON files")
    p.add_argument("--to", type=Path, default=Path("characters"), metavar="DIR",
                   help="the characters folder to write into (default: characters/)")
    p.add_argument("--user", default=DEFAULT_USER, metavar="NAME",
                   help=f"who {{{{user}}}} is in a card's story (default: {DEFAULT_USER!r})")
    p.add_argument("--force", action="store_true", help="replace a character that already exists")
    return p


def main(argv: list[str], out: TextIO | None = None) -> int:
    """Run the import; returns the exit code (0 imported, 2 nothing written). `import sotopia EXPORT`
    is the sub-form for Sotopia's scenarios (`promptdesk.core.cli.import_sotopia`)."""
    if argv[:1] == ["sotopia"]:
        from promptdesk.core.cli.import_sotopia import main as sotopia
        return sotopia(argv[1:], out)
    out = out or sys.stderr
    ns = parser().parse_args(argv)
    try:
        check_folder(ns.to)
        if problem := name_problem(ns.user):
            raise ImportProblem(f"--user {ns.user[:200]!r} {problem}; {{{{user}}}} is written into the profile as a name, "
                                "so give one line of printable text")
        imported = [read_source(path, ns.user) for path in ns.files]
        slugs = [item.slug for item in imported]
        twice = sorted({s for s in slugs if slugs.count(s) > 1})
        if twice:
            raise ImportProblem(f"two files would both become {', '.join(twice)}; import them separately")
        replacing = {item.slug: check_free(item, ns.to, ns.force) for item in imported}
    except ImportProblem as exc:
        print(strip_controls(f"INVALID_CONFIG: {exc} — nothing was imported."), file=out)
        return EXIT_INVALID
    for item in imported:
        try:
            folder = write(item, ns.to)
        except OSError as exc:
            print(strip_controls(f"INVALID_CONFIG: {ns.to}: cannot write {item.slug} there ({exc.strerror or exc})"),
                  file=out)
            return EXIT_INVALID
        _report(item, folder, ns.user, out, replacing[item.slug])
    return EXIT_CLOSED


def check_folder(to: Path) -> None:
    """`--to` must be a folder, or a path whose nearest existing part is one (it is then created);
    ImportProblem names what is in the way."""
    for part in (to, *to.parents):
        if part.exists() or part.is_symlink():
            if not part.is_dir():
                what = "is a file" if part == to else f"cannot be made: {part} is a file"
                raise ImportProblem(f"--to {to} {what}, not a folder; give the characters folder to write into "
                                    "(it is created when missing)")
            return


def _report(item, folder: Path, user: str, out: TextIO, replaced: bool = False) -> None:
    """What was written (and replaced), what was left out, and the scene snippet."""
    lines = [f"Imported {item.name} ({item.source}) as `{item.slug}`: {folder / 'profile.md'}"]
    if replaced:
        kept = " (its journal.md was kept: delete it for a character without that memory)" if (
            folder / "journal.md").exists() else ""
        lines.append(f"  note: replaced the profile.md and scene snippet that were there (--force){kept}")
    if item.file_slug and item.file_named:
        lines.append(f"  note: the name {item.name} makes no slug: it is filed as `{item.file_slug}`, the card's file "
                     "name (its display name stays as it is)")
    elif item.file_slug:
        lines.append(f"  note: neither the name {item.name} nor the card's file name makes a slug: it is filed as "
                     f"`{item.file_slug}` (its display name stays as it is); give the file an ASCII name to file it "
                     "under that")
    if item.user_filled:
        lines.append(f"  note: {{{{user}}}} in the card was written as {user!r} (choose with --user NAME)")
    lines += [f"  note: {notice}" for notice in item.notices]
    if item.dropped:
        lines.append(f"  dropped (no place in Promptdesk): {', '.join(item.dropped)}")
    lines.append(f"  scene snippet ({folder / 'scene-snippet.yaml'}):")
    lines += [f"    {line}" for line in snippet_text(item).splitlines()]
    print(strip_controls("\n".join(lines)), file=out)
