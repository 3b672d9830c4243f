"""`promptdesk rebuild RUN_DIR`: rewrite every derived file of a run from its `events.jsonl` alone.
Exit 0 when rebuilt; 2, with every file left as it was, when the folder is not a run, its log could
only make the files worse (empty, unreadable, no `start` event) or another process is writing it."""

from __future__ import annotations

import sys
from pathlib import Path

from promptdesk.core.cli.common import refuse
from promptdesk.core.errors import EXIT_CLOSED, PromptdeskError
from promptdesk.core.formats.registry import of_run
from promptdesk.core.record.rebuild import rebuild


def main(args: list[str]) -> int:
    """The command: exit 0 when rebuilt, 2 when refused."""
    if len(args) != 1:
        return refuse("INVALID_CONFIG: usage: promptdesk rebuild RUN_DIR")
    try:
        count = rebuild(Path(args[0]), lambda events: of_run(events).lines)
    except (PromptdeskError, OSError) as exc:
        return refuse(exc if isinstance(exc, PromptdeskError) else f"NOT_A_RUN: cannot rebuild {args[0]}: {exc}")
    print(f"Rebuilt the derived files of {args[0]} from {count} events.", file=sys.stderr)
    return EXIT_CLOSED
