"""`promptdesk sweep --branch-from RUN_DIR --at-beat K (--event TEXT | --note TEXT [--to ACTOR]) --seeds 1-10`:
take one run again from beat K over many seeds, with the change and without it (`promptdesk.core.experiments.take_sweep`).

Exit codes as `promptdesk sweep`: 0 when every planned take has a result, 1 when a take failed or the
sweep was stopped (signal or budget) before every take was done, or its budget was already spent, 2 on
invalid input or a folder another sweep is writing (nothing run).
"""

from __future__ import annotations

import argparse
import os
from datetime import datetime
from pathlib import Path

from promptdesk.core.cli import provider_flags
from promptdesk.core.cli.common import command_parser, exit_codes, sweep_through
from promptdesk.core.cli.numbers import beat_number, positive_int, sweep_budget_usd
from promptdesk.core.casting.places import SWEEPS
from promptdesk.core.experiments.sweep_checks import parse_seeds
from promptdesk.core.experiments.take_sweep import TakeProgress, TakeSweep, TakeSweepPlan


CODES = exit_codes("every planned take has a result",
                   "a take failed, or the sweep stopped (a signal, its budget) before every take was done, or its "
                   "budget was already spent", "invalid input, or a folder another sweep is writing (nothing run)")


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk sweep --branch-from",
                       "Take one run again from a beat over many seeds, with a change and without it, to measure "
                       "what the change does.", CODES, "Re-running the same command resumes the sweep in its folder.")
    p.add_argument("--branch-from", dest="branch_from", type=Path, required=True, metavar="RUN_DIR",
                   help="the run to take again")
    p.add_argument("--at-beat", dest="at_beat", type=beat_number, required=True, metavar="K",
                   help="the beat every take starts from")
    p.add_argument("--event", help="the world event of the `change` takes, at beat K")
    p.add_argument("--note", help="the director's note of the `change` takes, at beat K (to everyone, or --to)")
    p.add_argument("--to", metavar="ACTOR", help="the actor the --note is for: a slug or a character name")
    p.add_argument("--seeds", required=True, help="e.g. 1-10 or 1,3,5: one take with and one without the change each")
    p.add_argument("--provider", choices=provider_flags.PROVIDERS,
                   help="play every take from beat K with another provider (with the change and without it)")
    p.add_argument("--model", help="play every take from beat K with another model")
    p.add_argument("--base-url", dest="base_url", metavar="URL", help="a new address for the takes' remote providers")
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="takes at once (default 4)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the sweep folder (default sweeps/<run>-takes<K>-<stamp>)")
    p.add_argument("--budget-usd", dest="budget_usd", type=sweep_budget_usd, metavar="USD",
                   help="ceiling on the whole sweep's spend, across invocations (default: the one it was given before)")
    p.add_argument("--rpm", dest="requests_per_min", type=positive_int, metavar="N",
                   help="requests per minute per provider and model")
    p.add_argument("--tpm", dest="tokens_per_min", type=positive_int, metavar="N",
                   help="tokens per minute per provider and model")
    p.add_argument("--retry-failed", dest="retry_failed", action="store_true",
                   help="play again the runs whose result is a failed run's (each attempt's record is kept)")
    provider_flags.add_tuning(p.add_argument_group("provider settings for every take from beat K"))
    return p


def plan_from(ns: argparse.Namespace) -> TakeSweepPlan:
    """The plan the flags describe."""
    return TakeSweepPlan(parent=str(ns.branch_from), at_beat=ns.at_beat, seeds=parse_seeds(ns.seeds), event=ns.event,
                         note=ns.note, to=ns.to, base_url=ns.base_url, provider=ns.provider, model=ns.model,
                         provider_settings=provider_flags.settings(ns), concurrency=ns.concurrency,
                         budget_usd=ns.budget_usd, requests_per_min=ns.requests_per_min,
                         tokens_per_min=ns.tokens_per_min)


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    named = Path(os.path.abspath(ns.branch_from)).name  # `--branch-from .` is the run's own name, not ''
    folder = ns.out or SWEEPS / f"{named}-takes{ns.at_beat}-{datetime.now():%Y%m%d-%H%M%S}"
    return sweep_through(lambda: TakeSweep(plan_from(ns), folder, TakeProgress()), folder, ns.retry_failed)
