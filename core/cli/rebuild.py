"""`promptdesk rebuild RUN_DIR`: rewrite every derived file of a run from its `events.jsonl` alone.
Exit 0 when rebuilt; 2, with every file left as it was, when the folder is not a run, its log could
only make the files worse (empty, unreadable, no `start` event) or another process is writing it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from promptdesk.core.cli.common import command_parser, exit_codes, folder_trouble, refuse
from promptdesk.core.errors import EXIT_CLOSED, PromptdeskError
from promptdesk.core.formats.registry import of_run
from promptdesk.core.record.rebuild import rebuild


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk rebuild", "Rewrite the derived files of a run (transcripts, events.json, "
                       "metadata.json, journals/, evaluation.json) from its events.jsonl alone.",
                       exit_codes("rebuilt", None, "not a run, a log that would only make the files worse, or a "
                                  "folder another process is writing (every file left as it was)"))
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the run folder")
    return p


def main(args: list[str]) -> int:
    """The command: exit 0 when rebuilt, 2 when refused."""
    ns = parser().parse_args(args)
    try:
        count = rebuild(ns.run_dir, lambda events: of_run(events).lines)
    except (PromptdeskError, OSError) as exc:
        return refuse(exc if isinstance(exc, PromptdeskError) else folder_trouble("rebuild", ns.run_dir, exc))
    print(f"Rebuilt the derived files of {ns.run_dir} from {count} events.", file=sys.stderr)
    return EXIT_CLOSED
