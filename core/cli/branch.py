"""`promptdesk branch RUN_DIR --at-beat K [--event TEXT] [--note TEXT [--to ACTOR]] [--seed N]
[--provider P] [--model M] [--base-url URL]
  [--timeout S] [--max-concurrency N] [--schema-format F] [--journal-timeout S] [--out DIR] [--quiet]`: take a scene again from beat K.

The take is a new run folder whose record up to the start of beat K is the parent's (copied, never
played again), then a `branch` event, then the scene played on with the change (`promptdesk.core.casting.branch`).
Exit codes: 0 when the take closed, 1 when it ended on an error, 2 when the folder is not a run, the
beat was never begun, the change does not fit, the run's format cannot be branched (a collaboration, a
roundtable) or `--out` is taken.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from promptdesk.core.casting.branch import Change, prepare_branch
from promptdesk.core.cli import provider_flags
from promptdesk.core.cli.common import command_parser, exit_codes, refuse, shown, spent
from promptdesk.core.cli.numbers import beat_number
from promptdesk.core.engine.outcome import PROVIDER_ERROR
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, EXIT_INVALID, PromptdeskError



def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk branch", "Take a scene again from the start of one of its beats, with a change, "
                       "into a new run folder (the record before that beat is copied, not played again).",
                       exit_codes("the take closed", "the take ended on an error, or its calls failed",
                                  "not a run, a beat never begun, a change that does not fit, a format that cannot "
                                  "be branched (collaborate, roundtable), or --out taken"))
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the run to take again")
    p.add_argument("--at-beat", dest="at_beat", type=beat_number, required=True, metavar="K", help="the beat the take starts from")
    p.add_argument("--event", help="a world event every actor receives at beat K")
    p.add_argument("--note", help="a director's note delivered at beat K (to everyone, or to --to)")
    p.add_argument("--to", metavar="ACTOR", help="the actor the --note is for: a slug or a character name")
    p.add_argument("--seed", type=int, help="another seed for the rest of the scene")
    p.add_argument("--provider", choices=provider_flags.PROVIDERS, help="take the rest of the scene with another provider")
    p.add_argument("--model", help="take the rest of the scene with another model")
    p.add_argument("--base-url", dest="base_url", help="a new address for the take's remote providers")
    provider_flags.add_tuning(p.add_argument_group("provider settings for the rest of the scene"))
    p.add_argument("--out", type=Path, metavar="DIR", help="the take's folder (default: <RUN_DIR>-take<K>-<stamp> beside it)")
    p.add_argument("--quiet", action="store_true", help="no line per turn, only the notices about the run and the summary")
    return p


def change_of(ns: argparse.Namespace) -> Change:
    """The change the command line asks for."""
    return Change(event=ns.event, note=ns.note, to=ns.to, seed=ns.seed, provider=ns.provider, model=ns.model,
                  settings=provider_flags.settings(ns) or None)


def main(args: list[str]) -> int:
    """The command; exit 0 closed, 1 ended on an error (or its calls failed), 2 refused."""
    from promptdesk.core.cli.batch import TurnPrinter, _run_with_signals, warn_unpriced

    try:
        ns = parser().parse_args(args)
    except SystemExit as exc:
        return EXIT_INVALID if exc.code else EXIT_CLOSED
    try:
        session = prepare_branch(ns.run_dir, ns.at_beat, change_of(ns), out=ns.out, base_url=ns.base_url)
    except (PromptdeskError, OSError, ValueError) as exc:
        return refuse(exc if isinstance(exc, PromptdeskError) else f"NOT_A_RUN: cannot branch {ns.run_dir}: {exc}")
    for notice in session.notices:
        print(notice, file=sys.stderr)
    print(f"{session.seam['text']} -> {shown(session.recorder.run_dir)}", file=sys.stderr)
    warn_unpriced(session, sys.stderr)
    session.subscribe(TurnPrinter(session.state.cast, sys.stderr, quiet=ns.quiet))
    tokens, cost = session.state.tokens, session.state.cost_usd  # the parent's, up to the beat: copied, not paid again
    result = asyncio.run(_run_with_signals(session))
    own = (f" (its own, beat {ns.at_beat} on: {session.state.tokens - tokens:,} tokens, ${session.state.cost_usd - cost:.4f}; "
           "the rest is its parent's record, copied, not paid again)" if tokens else "")
    total = spent(result.run_dir, session.state.tokens, session.state.cost_usd)
    print(f"Take closed: {result.close_reason} after {result.beats} beat{'' if result.beats == 1 else 's'}, {total}{own}, "
          f"{result.counts}.\nRun folder: {shown(result.run_dir)}", file=sys.stderr)
    if result.error is not None:
        print(result.error, file=sys.stderr)
    return EXIT_FAILED if result.error is not None or result.close_reason in ("error", PROVIDER_ERROR) else EXIT_CLOSED
