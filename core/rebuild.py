"""`promptdesk rebuild RUN_DIR`: rewrite every derived file of a run from its `events.jsonl` alone.

`events.json`, both transcripts, `metadata.json` and `journals/` are rebuilt (`core.recorder.write_derived`)
from the events of the log. The transcripts are dated by the log's last write.
Exit 0 when rebuilt, 2 when the folder is not a run.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from core.errors import EXIT_CLOSED, EXIT_INVALID, NotARun
from core.recorder import read_events, write_derived


def rebuild(run_dir: Path) -> int:
    """Rewrite the derived files; returns how many events they were built from."""
    run_dir = Path(run_dir)
    log = run_dir / "events.jsonl"
    if not log.is_file():
        raise NotARun(f"{run_dir} is not a run folder (no events.jsonl to rebuild from)")
    events = read_events(run_dir)
    write_derived(run_dir, events, datetime.fromtimestamp(log.stat().st_mtime))
    return len(events)


def main(args: list[str]) -> int:
    """The command: exit 0 when rebuilt, 2 when not a run."""
    if len(args) != 1:
        print("INVALID_CONFIG: usage: promptdesk rebuild RUN_DIR", file=sys.stderr)
        return EXIT_INVALID
    try:
        count = rebuild(Path(args[0]))
    except (NotARun, OSError) as exc:
        print(str(exc) if isinstance(exc, NotARun) else f"NOT_A_RUN: cannot rebuild {args[0]}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    print(f"Rebuilt the derived files of {args[0]} from {count} events.", file=sys.stderr)
    return EXIT_CLOSED
