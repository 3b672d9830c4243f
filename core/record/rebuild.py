"""Rewrite every derived file of a run from its `events.jsonl` alone.

`events.json`, both transcripts, `metadata.json` and `journals/` are rebuilt (`core.record.recorder.write_derived`)
from the events of the log. The transcripts are dated by the log's last write.
The command is `core.cli.rebuild`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from core.errors import NotARun
from core.record.events import BaseEvent
from core.record.lines import PLAIN, FormatLines
from core.record.recorder import read_events, write_derived


def rebuild(run_dir: Path, own_lines: Callable[[list[BaseEvent]], FormatLines] = lambda events: PLAIN) -> int:
    """Rewrite the derived files (the run's format's own events read by `own_lines(events)`);
    returns how many events they were built from."""
    run_dir = Path(run_dir)
    log = run_dir / "events.jsonl"
    if not log.is_file():
        raise NotARun(f"{run_dir} is not a run folder (no events.jsonl to rebuild from)")
    events = read_events(run_dir)
    write_derived(run_dir, events, datetime.fromtimestamp(log.stat().st_mtime), own_lines(events))
    return len(events)
