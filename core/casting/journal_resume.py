"""Resuming a run killed during its journal step: the scene had closed, some entries were not written.

`promptdesk resume RUN_DIR` on such a folder (`promptdesk.core.casting.resume.prepare` hands it here) keeps the
whole log, closed as it was: the session's state is restored from it (each actor's thread and what it
heard, the tokens and cost the budget counts), a torn last line moves to `superseded.jsonl`, one
`resume` event (`reason: "journals"`) marks the seam, and the journal step is finished: the recorded
entries the characters' own journals miss are appended, and the actors with neither an entry nor a
failure on the log are asked for theirs (`promptdesk.core.engine.journals.pending`). Then every derived file is
written. A run whose step finished (or was never due: a stop, a provider error, `--journals none`)
is finished: there is nothing to resume (exit 2).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from promptdesk.core.engine import journals
from promptdesk.core.engine.evaluation import SKIPPED_AFTER
from promptdesk.core.engine.session import Session
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.record.events import BaseEvent, parse_event_json
from promptdesk.core.record.seams import JOURNALS, Cut, log_lines, supersede



def journal_step(run_dir: Path, session: Session) -> Session:
    """`session` (rebuilt from the folder, nothing replayed yet) set to finish the killed journal
    step; raises InvalidConfig (closed cleanly) when nothing of it is missing."""
    lines, torn = _log(run_dir)
    events = _events(lines)
    due = session.format.keeps_journals and session.journal_step  # `--journals none`: no step, nothing pending
    slugs = journals.pending(events, list(session.actors)) if due else []
    recorded = journals.unappended(session, events)
    if not slugs and not recorded:
        owed = scores_owed(session, events)
        if owed:
            raise InvalidConfig(f"{run_dir}: the scene closed, but its evaluation step was cut ({owed} score"
                                f"{'' if owed == 1 else 's'} never recorded; the requests already sent are in "
                                f"prompts.jsonl): `promptdesk evaluate {run_dir}` finishes it, asking only the actors "
                                "not yet scored")
        raise InvalidConfig(finished(run_dir, events))
    session.format.restore(session, events, None)
    session.first_beat = session.state.beat
    session.t_offset = max([0.0, *(e.t for e in events)])
    names = ", ".join(session.actors[s].name for s in slugs) or "none (their entries were recorded)"
    session.seam = {"text": f"Run resumed in its journal step after an interruption; entries still to write: {names}",
                    "reason": JOURNALS, "beat": session.state.beat, "superseded": len(torn)}
    supersede(run_dir, Cut(events, None, lines, torn, closed=True))
    session.recorder.reopen(events)
    session.journal_resume = (slugs, recorded)
    return session


def _stopped(run_dir: Path, events: list[BaseEvent]) -> str:
    """For a scene the operator stopped (the console's `s` or `q`, a signal): how to play on from where it
    stopped, since a stopped run is finished: a take from the beat it stopped in, into a new folder."""
    close = next((e for e in reversed(events) if e.type == "close"), None)
    begun = [e.beat for e in events if e.type == "beat" and isinstance(e.beat, int)]
    if close is None or getattr(close, "reason", None) != "stop" or not begun:
        return ""
    return (f"; it was stopped in beat {max(begun)}: to play on from there, take it again from that beat into a new "
            f"run folder (this one stays as it is): `promptdesk branch {shlex.quote(str(run_dir))} --at-beat {max(begun)}`")


def finished(run_dir: Path, events: list[BaseEvent] | None = None) -> str:
    """What `resume` says of a run closed cleanly, with nothing of its journal step missing. A sweep's
    run stopped with its sweep (a signal, the budget) is continued by the sweep, not by `resume`: said."""
    run_dir = Path(run_dir)
    plans = ("sweep.yaml", "takes.yaml")  # a sweep's plan, a sweep of takes' (`promptdesk.core.experiments`)
    home = Path(os.path.abspath(run_dir)).parent  # `resume .` inside the run: `Path('.').parent` is the run itself
    if any((home / plan).is_file() for plan in plans) and _closed_by_stop(run_dir):
        sweep = home if run_dir.is_absolute() else Path(os.path.relpath(home))
        return (f"{run_dir} was stopped with its sweep (a signal or its budget): `resume` does not reopen a stopped "
                f"run; run the sweep's command again (its --out {sweep}) and it continues where it stopped")
    if events is None:
        events = _run_events(run_dir)
    return (f"{run_dir} is finished (it was closed cleanly): there is nothing to resume (rebuild its files with "
            f"`promptdesk rebuild {run_dir}`){_stopped(run_dir, events)}")


def _run_events(run_dir: Path) -> list[BaseEvent]:
    """The run's events, or none when they cannot be read (a message then says less, never fails)."""
    from promptdesk.core.record.recorder import read_events

    try:
        return read_events(run_dir, warn=lambda _: None)
    except (OSError, ValueError):
        return []


def _closed_by_stop(run_dir: Path) -> bool:
    closes = [e for e in _run_events(run_dir) if e.type == "close"]
    return bool(closes) and getattr(closes[-1], "reason", None) == "stop"


def scores_owed(session: Any, events: list[BaseEvent]) -> int:
    """How many of the evaluation step's scores (each evaluator, each actor) a run killed in that step never
    recorded: neither an `evaluation` event nor a `system` line saying why (a failed call, a spent budget)."""
    close = next((e for e in reversed(events) if e.type == "close"), None)
    evaluators = getattr(session, "evaluators", [])
    if not evaluators or close is None or getattr(close, "reason", None) in SKIPPED_AFTER:
        return 0
    said = [getattr(e, "reason", None) for e in events if e.type == "system" and getattr(e, "beat", None) is None]
    if "budget" in said:
        return 0
    done = sum(1 for e in events if e.type == "evaluation") + said.count("evaluation")
    return max(0, len(evaluators) * len(session.actors) - done)


def _log(run_dir: Path) -> tuple[list[str], list[str]]:
    """The log's lines, and its torn last line (a kill mid-write) apart."""
    raw = log_lines(run_dir)
    if raw and not raw[-1].endswith("\n"):
        return raw[:-1], raw[-1:]
    return raw, []


def _events(lines: list[str]) -> list[BaseEvent]:
    events = []
    for line in lines:
        try:
            events.append(parse_event_json(line))
        except ValueError:
            continue
    return events
