"""`promptdesk import sotopia EXPORT.json [--to DIR] [--env CODENAME|PK ...] [--per combo|environment]
[--sample N --seed S] [--turns sequential|parallel] [--background-story] [--force]`: Sotopia's
scenarios and characters as Promptdesk scenes and characters (`promptdesk.core.experiments.sotopia`).

Exit codes: 0 every record imported (or already there, unchanged); 1 imported, but some records were
refused or skipped (each named, with why) or some files were kept because they differ; 2 not a Sotopia
export, or a flag to fix (nothing written), or a place under `--to` that cannot be written (named; what
was written before it is kept).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO
from pathlib import Path

from promptdesk.core.cli.common import command_parser, exit_codes, refuse
from promptdesk.core.cli.numbers import positive_int
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, PromptdeskError
from promptdesk.core.characters.importers.model import ImportProblem
from promptdesk.core.experiments.sotopia.importer import OUTCOMES, Options, Summary, run_import
from promptdesk.core.protocol.sanitize import strip_controls
from promptdesk.core.record.audit import counted

REFUSALS_SHOWN = 50
"""At most this many refused records are listed one by one; the rest are counted."""


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk import sotopia", "Import Sotopia's scenarios and characters (its JSON export, "
                       "e.g. data_gen/redis_json_data.json) as Promptdesk scenes and characters, each scene scored on "
                       "SOTOPIA-EVAL's seven dimensions after its close.",
                       exit_codes("every record imported (or already there, unchanged)",
                                  "imported, but records were refused or skipped (each named), or files were kept "
                                  "because they differ (--force replaces them)",
                                  "not a Sotopia export, or a flag to fix (nothing written); or a place under --to "
                                  "that cannot be written (named; what was written before it is kept)"))
    p.add_argument("export", type=Path, metavar="EXPORT.json", help="a Sotopia export (one JSON object of records)")
    p.add_argument("--to", type=Path, default=Path("sotopia"), metavar="DIR",
                   help="where to write DIR/scenes/<scene>.yaml and DIR/characters/<slug>/profile.md (default: sotopia/)")
    p.add_argument("--env", dest="envs", action="append", nargs="+", default=[], metavar="CODENAME|PK",
                   help="only these environments (codename, pk or tag, or the name or pk of an EnvironmentList record, e.g. Sotopia's hard subset hard_env_set; repeatable)")
    p.add_argument("--per", choices=("combo", "environment"), default="combo",
                   help="one scene per environment-agent combo (default), or per environment with its first combo")
    p.add_argument("--sample", type=positive_int, metavar="N", help="only N of the scenes, drawn with --seed")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="the seed of --sample's draw (default 0)")
    p.add_argument("--turns", choices=("sequential", "parallel"), default="sequential",
                   help="sequential: Sotopia's round-robin, the two alternate (default); parallel: Promptdesk's beats")
    p.add_argument("--background-story", dest="background_story", action="store_true", default=False,
                   help="tell both agents their pair's background story from the export; Sotopia wrote the stories "
                        "from both whole profiles and many tell an agent's secret, so by default (as Sotopia's own "
                        "runner) none is told")
    p.add_argument("--no-background-story", dest="background_story", action="store_false",
                   help="tell no background story (the default, as Sotopia's own runner)")
    p.add_argument("--force", action="store_true", help="replace files that differ from what the import writes")
    return p


def main(argv: list[str], out: TextIO | None = None) -> int:
    """Run the import; print the summary; the exit code (see the module docstring)."""
    out = out or sys.stderr
    ns = parser().parse_args(argv)
    options = Options(to=ns.to, envs=[e for group in ns.envs for e in group], per=ns.per, sample=ns.sample,
                      seed=ns.seed, turns=ns.turns, background_story=ns.background_story, force=ns.force)
    try:
        summary = run_import(ns.export, options)
    except ImportProblem as exc:
        return refuse(strip_controls(f"INVALID_CONFIG: {exc} — nothing was imported."))
    except PromptdeskError as exc:
        return refuse(strip_controls(str(exc)))
    except OSError as exc:
        where = exc.filename or ns.to
        kind = " (a file where a folder is needed)" if isinstance(exc, (FileExistsError, NotADirectoryError)) else ""
        return refuse(strip_controls(f"INVALID_CONFIG: cannot write {where}: {exc.strerror or exc}{kind}. Files written "
                                     f"before it are kept; importing again once it is fixed finishes the import."))
    print("\n".join(summary_lines(summary, options)), file=out)
    return EXIT_CLOSED if summary.clean else EXIT_FAILED


def summary_lines(summary: Summary, options: Options) -> list[str]:
    """The import summary: what was read, refused, skipped and written, and where."""
    export = summary.export
    lines = [f"Read {export.path.name}: {counted(len(export.environments), 'environment')}, "
             f"{counted(len(export.agents), 'agent')}, {counted(len(export.relationships), 'relationship')}, "
             f"{counted(len(export.combos), 'combo')}"
             + "".join(f", environment list {listed.name[:60]} ({_held(listed.environments, export.environments)}; "
                       f"--env {listed.name[:60]} selects them)" for listed in list(export.lists.values())[:5])
             + (f"; other records skipped: {_counts(export.other)}" if export.other else "") + "."]
    if export.defaulted:
        lines.append(f"Read with Sotopia's default: {_counts_of(export.defaulted)}.")
    if summary.refused:
        lines.append(f"Refused {counted(len(summary.refused), 'record')} (the rest were imported):")
        lines += [f"  REFUSED {r.line()}" for r in summary.refused[:REFUSALS_SHOWN]]
        if len(summary.refused) > REFUSALS_SHOWN:
            lines.append(f"  ... and {len(summary.refused) - REFUSALS_SHOWN:,} more")
    for why, count in summary.skipped.items():
        lines.append(f"Skipped: {count:,} {why}.")
    if summary.uncast:
        lines.append(f"No scene for --env {', '.join(summary.uncast)}: no usable combo casts that environment "
                     "(no scene without a cast).")
    pool = summary.candidates if summary.matched is None else summary.matched
    named = "" if summary.matched is None else f" that --env names ({summary.candidates:,} in the export)"
    picked = f"; selected {summary.selected:,} of {pool:,}{named}" if summary.selected != summary.candidates else ""
    lines.append(f"Scenes (one per {options.per}, {options.turns} turns{picked}): {_outcomes(summary.scenes)}.")
    lines.append(f"Characters: {_outcomes(summary.characters)}.")
    if summary.stories and options.background_story:
        lines.append(f"Background stories told in {summary.stories:,} scenes (--background-story): Sotopia wrote them "
                     "from both agents' whole profiles, and a story can tell an agent's secret to the other, often in "
                     "other words than the secret's, which the audit does not catch.")
    elif summary.stories:
        lines.append(f"Background stories: {summary.stories:,} not told (Sotopia's runner tells none; "
                     "--background-story tells them).")
    if summary.kept:
        shown = ", ".join(str(p) for p in summary.kept[:5]) + (" ..." if len(summary.kept) > 5 else "")
        lines.append(f"Kept {len(summary.kept)} files that differ from what this import writes (edited, or from another "
                     f"export): {shown}; --force replaces them.")
    lines.append(f"Scenes in {options.to / 'scenes'}, characters in {options.to / 'characters'}: play one with "
                 f"`promptdesk {options.to / 'scenes'}/<scene>.yaml`.")
    return [strip_controls(line) for line in lines]


def _held(listed: tuple[str, ...], environments: dict) -> str:
    """How many environments a list names, and how many of them the export holds when not all."""
    held = sum(1 for pk in set(listed) if pk in environments)
    return counted(len(set(listed)), "environment") + (f", {held:,} of them in this export" if held < len(set(listed)) else "")


def _counts(counter) -> str:
    return ", ".join(f"{kind} {n:,}" for kind, n in sorted(counter.items()))


def _counts_of(counter) -> str:
    return "; ".join(f"{n:,} {what}" for what, n in counter.items())


def _outcomes(counter) -> str:
    return ", ".join(f"{counter.get(o, 0):,} {o}" for o in OUTCOMES if counter.get(o) or o in ("written", "unchanged"))
