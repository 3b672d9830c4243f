"""`promptdesk resume RUN_DIR [--base-url URL] [--quiet]`: continue a scene run that was killed.

How the session is rebuilt and its cut beat replayed: `promptdesk.core.casting.resume`.
Exit codes: 0 when the scene closed, 1 when it ended on an error, 2 when the folder is not a run,
was closed cleanly (nothing to resume), is of a format that cannot be resumed, or is being written
by another process (its pid named: a live run, another resume).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from promptdesk.core.casting.resume import prepare
from promptdesk.core.cli.common import command_parser, exit_codes, folder_trouble, refuse, shown, spent
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, EXIT_INVALID, PromptdeskError


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk resume", "Continue a scene run that was killed, from its events.jsonl (a cut beat "
                       "is played again from its start; a `resume` event marks the seam).",
                       exit_codes("the scene closed", "it ended on an error",
                                  "not a run, closed cleanly (nothing to resume), a format that cannot be resumed, "
                                  "or a folder another process is writing"))
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the killed run's folder")
    p.add_argument("--base-url", dest="base_url", metavar="URL", help="a new address for the run's remote providers")
    p.add_argument("--quiet", action="store_true", help="no line per turn, only the notices about the run and the summary")
    return p


def is_take(run_dir: Path) -> bool:
    """Whether the run is a take of another (its record holds a `branch` event)."""
    from promptdesk.core.record.recorder import read_events

    try:
        return any(event.type == "branch" for event in read_events(run_dir))
    except (PromptdeskError, OSError, ValueError):
        return False


def main(args: list[str]) -> int:
    """The command; exit 0 closed, 1 ended on an error, 2 not resumable."""
    from promptdesk.core.cli.batch import TurnPrinter, _run_with_signals, warn_unpriced

    try:
        ns = parser().parse_args(args)
    except SystemExit as exc:
        return EXIT_INVALID if exc.code else EXIT_CLOSED
    try:
        session = prepare(ns.run_dir, ns.base_url)
    except (PromptdeskError, OSError, ValueError) as exc:
        return refuse(exc if isinstance(exc, PromptdeskError) else folder_trouble("resume", ns.run_dir, exc)
                      if isinstance(exc, OSError) else f"NOT_A_RUN: cannot resume {ns.run_dir}: {exc}")
    for notice in session.notices:
        print(notice, file=sys.stderr)
    where = "in its journal step" if session.journal_resume is not None else f"at beat {session.first_beat}"
    print(f"Resuming {ns.run_dir} {where}.", file=sys.stderr)
    warn_unpriced(session, sys.stderr)
    session.subscribe(TurnPrinter(session.state.cast, sys.stderr, quiet=ns.quiet))
    result = asyncio.run(_run_with_signals(session))
    cost = spent(result.run_dir, session.state.tokens, session.state.cost_usd)
    what = "Take" if is_take(result.run_dir) else "Scene"
    goal = {True: "goal achieved", False: "goal not achieved"}.get(result.goal_achieved, "goal unknown")
    print(f"{what} closed: {result.close_reason} ({goal}) after {result.beats} beat{'' if result.beats == 1 else 's'}, {cost}, "
          f"{result.counts}.\nRun folder: {shown(result.run_dir)}", file=sys.stderr)
    return EXIT_FAILED if result.close_reason == "error" else EXIT_CLOSED
