"""Where a record stops short: a run cut off in a beat, or in its journal step, is not a whole record.

A run's record is whole when `events.jsonl` holds its `close` and, when the journal step was due (a
scene, journals kept, a close that takes the step), an entry or a failure line for every actor after
it. A kill, a power loss or a machine stopped mid-run leaves it shorter: the readers that judge a run
(the audit, the report) say so, where the record ends and what plays it on, and never call it clean
or closed. A run still being written (its folder's lock is held) is told apart from one cut off.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from promptdesk.core.errors import PromptdeskError
from promptdesk.core.record.events import BaseEvent, CloseEvent, JournalEvent
from promptdesk.core.record.folder_lock import holder
from promptdesk.core.record.private import read_private
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.takes import unbegun_take

JOURNALS_SKIPPED_AFTER = ("stop", "provider-error")
"""Close reasons after which no journal step is taken."""


def pending_journals(events: Sequence[BaseEvent], slugs: Iterable[str]) -> list[str]:
    """The actors (in `slugs` order) whose journal step the log shows begun but never finished: the
    scene closed for a reason that takes the step, and after the close there is neither an entry nor
    a failure line for them, nor a stop or a budget skip that ended the step."""
    closes = [i for i, e in enumerate(events) if isinstance(e, CloseEvent)]
    if not closes or events[closes[-1]].reason in JOURNALS_SKIPPED_AFTER:
        return []
    after = events[closes[-1] + 1:]
    if any(e.type == "stop" or (e.type == "system" and getattr(e, "reason", None) == "budget") for e in after):
        return []
    done = {e.from_ for e in after if isinstance(e, JournalEvent)}
    done |= {(e.model_extra or {}).get("about") for e in after if e.type == "system"}
    return [slug for slug in slugs if slug not in done]


def cut_of(run_dir: Path, events: Sequence[BaseEvent], record: dict[str, Any]) -> str | None:
    """None when the record is whole; else one sentence for a person: where the record ends, whether
    its run is still being written, and what plays it on. `record` is the run's `private.json`."""
    run_dir = Path(run_dir)
    scene = record.get("scene") if isinstance(record.get("scene"), dict) else {}
    is_scene = scene.get("format", "scene") == "scene"
    live = holder(run_dir)
    if live:
        pid, _, what = live.partition(" ")
        who = f"process {pid}, a {what}" if pid.isdigit() and what else f"process {live}"
        then = f"it is still being written (by {who}): judge it once it has closed"
    elif is_scene:
        then = f"`promptdesk resume {run_dir}` plays it on"
    else:
        then = "a collaboration or a roundtable cannot be resumed: play it again"
    if not any(isinstance(e, CloseEvent) for e in events):
        if unbegun := unbegun_take(run_dir, record, list(events)):
            return unbegun
        beats = [e.beat for e in events if isinstance(e.beat, int)]
        last = max(beats) if beats else None
        ended = any(e.type == "beat_end" and e.beat == last for e in events)
        where = "before its first beat" if last is None else f"after beat {last} had finished" if ended else f"in beat {last}"
        return f"events.jsonl ends {where} without a close: the run was cut off there and never closed; {then}"
    cast = record.get("cast") if isinstance(record.get("cast"), dict) else {}
    due = is_scene and bool(record.get("journal_step", True))
    missing = pending_journals(list(events), cast) if due else []
    if not missing:
        return None
    names = ", ".join(str((cast.get(slug) or {}).get("name") or slug) if isinstance(cast.get(slug), dict) else slug
                      for slug in missing)
    return (f"events.jsonl ends in the journal step after the close without an entry or a failure line for {names}: "
            f"the run was cut off there; {then.replace('plays it on', 'finishes it')}")


def cut_of_folder(run_dir: Path, events: list[BaseEvent] | None = None) -> str | None:
    """`cut_of` for a run folder read as it stands (`events`: its log, when already read; a
    `private.json` that cannot be read counts as none: the close alone then tells a cut run); None when
    its log cannot be read at all."""
    try:
        events = read_events(Path(run_dir), warn=lambda _: None) if events is None else events
    except OSError:
        return None
    try:
        record = read_private(Path(run_dir))
    except (PromptdeskError, OSError, ValueError):
        record = {}
    return cut_of(run_dir, events, record)
