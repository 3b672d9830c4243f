"""Rewrite every derived file of a run from its `events.jsonl` alone, never making things worse.

`events.json`, both transcripts, `metadata.json` and `journals/` are rebuilt (`promptdesk.core.record.recorder.write_derived`)
from the events of the log. The transcripts are dated by the log's last write.

A rebuild only replaces files with something at least as complete: it refuses (`NotARun`, exit 2,
nothing changed) when the log cannot be read, is empty, has no `start` event, or holds a line that is
not a readable event anywhere but at its very end (a torn last line is a kill mid-write and is
skipped), or when `superseded.jsonl` lacks lines the resumes' seams say they moved there (the costs would
leave out the calls of the beats played again). It takes the folder's writer lock (`promptdesk.core.record.folder_lock`), so it never rewrites a run
that is still being played or resumed, and each file is replaced in one step, so a crash mid-write
leaves the old one. The command is `promptdesk.core.cli.rebuild`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from promptdesk.core.errors import NotARun
from promptdesk.core.record.events import BaseEvent, parse_event_json
from promptdesk.core.record.folder_lock import FolderLock
from promptdesk.core.record.lines import PLAIN, FormatLines
from promptdesk.core.record.recorder import write_derived
from promptdesk.core.record.seams import SUPERSEDED, superseded_shortfall

KEPT = "nothing was changed"


def rebuild(run_dir: Path, own_lines: Callable[[list[BaseEvent]], FormatLines] = lambda events: PLAIN) -> int:
    """Rewrite the derived files (the run's format's own events read by `own_lines(events)`);
    returns how many events they were built from. Raises `NotARun` (nothing written) when the log
    could only make them worse, `FolderBusy` while another process writes the folder."""
    run_dir = Path(run_dir)
    log = run_dir / "events.jsonl"
    if not log.is_file():
        raise NotARun(f"{run_dir} is not a run folder (no events.jsonl to rebuild from)")
    with FolderLock.take(run_dir, "rebuild"):
        events = readable_log(log)
        if short := superseded_shortfall(run_dir, events):
            raise NotARun(f"cannot rebuild {run_dir}: {short}, and the costs rebuilt without them would leave out the "
                          f"calls of the beats played again (paid for); {KEPT}. Put {SUPERSEDED} back whole, then "
                          "rebuild again")
        write_derived(run_dir, events, datetime.fromtimestamp(log.stat().st_mtime), own_lines(events))
    return len(events)


def readable_log(log: Path) -> list[BaseEvent]:
    """Every event of the log, or `NotARun` saying why the log cannot be rebuilt from."""
    try:
        raw = log.read_bytes()
    except OSError as exc:
        raise NotARun(f"cannot rebuild {log.parent}: {log.name} cannot be read ({exc.strerror or exc}); {KEPT}") from None
    lines = raw.split(b"\n")
    events: list[BaseEvent] = []
    unreadable: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append(parse_event_json(line.decode("utf-8")))
        except ValueError:
            torn = number == len(lines)  # the last line, without its newline: a kill mid-write
            if not torn:
                unreadable.append(number)
    where = f"cannot rebuild {log.parent}: {log.name}"
    if not raw.strip():
        raise NotARun(f"{where} is empty; {KEPT} (the derived files are all that is left of the run)")
    if unreadable:
        shown = ", ".join(map(str, unreadable[:5])) + (" ..." if len(unreadable) > 5 else "")
        raise NotARun(f"{where} has {len(unreadable)} line(s) that are not readable events (line {shown}): the files "
                      f"rebuilt from it would lose them; {KEPT}. Repair or remove those lines, then rebuild again")
    if not any(e.type == "start" for e in events):
        raise NotARun(f"{where} has no `start` event (it is not the whole log of a run); {KEPT}")
    return events
