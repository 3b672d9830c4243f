"""`promptdesk sweep SCENE --isolation a,b --coordinator A,B,C --seeds 1-10 ...`: parse, check, run.

Exit codes: 0 when every planned run has a result, 1 when a run failed or the sweep was stopped
(signal, budget, a file that could not be written: `RECORDING_ERROR`, naming it) before every run
was done, or its budget was already spent (nothing started), 2 on invalid input or a folder another
sweep is writing (nothing run).
"""

from __future__ import annotations

import argparse
import math
from datetime import datetime
from pathlib import Path

from promptdesk.core.cli import provider_flags
from promptdesk.core.cli.common import sweep_through
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.casting.build import ISOLATIONS, ROLES
from promptdesk.core.experiments.sweep import Sweep, SweepPlan
from promptdesk.core.experiments.sweep_checks import parse_choices, parse_seeds
from promptdesk.core.experiments.progress import Progress


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="promptdesk sweep",
                                description="Run every isolation × coordinator × seed combination of a scene.")
    p.add_argument("scene", type=Path, metavar="SCENE")
    p.add_argument("--isolation", required=True, help="comma-separated, e.g. a,b")
    p.add_argument("--coordinator", required=True, help="comma-separated, e.g. A,B,C")
    p.add_argument("--seeds", required=True, help="e.g. 1-10 or 1,3,5")
    p.add_argument("--provider", choices=["offline", "anthropic", "openai", "openai-compatible"])
    p.add_argument("--model")
    p.add_argument("--base-url", dest="base_url")
    p.add_argument("--characters-dir", dest="characters_dirs", action="append", default=[], metavar="DIR")
    p.add_argument("--max-beats", dest="max_beats", type=int)
    p.add_argument("--concurrency", type=int, default=4, help="runs at once (default 4)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the sweep folder (default sweeps/<scene>-<stamp>)")
    p.add_argument("--budget-usd", dest="budget_usd", type=float,
                   help="ceiling on the whole sweep's spend, across invocations (default: the one it was given before)")
    p.add_argument("--rpm", dest="requests_per_min", type=int, help="requests per minute per provider and model")
    p.add_argument("--tpm", dest="tokens_per_min", type=int, help="tokens per minute per provider and model")
    provider_flags.add(p)
    return p


def plan_from(ns: argparse.Namespace) -> SweepPlan:
    """The plan the flags describe (raises InvalidConfig naming the flag to fix)."""
    for flag, value in (("--concurrency", ns.concurrency), ("--max-beats", ns.max_beats), ("--rpm", ns.requests_per_min),
                        ("--tpm", ns.tokens_per_min)):
        if value is not None and value <= 0:
            raise InvalidConfig(f"{flag} must be a positive whole number, not {value}")
    if ns.budget_usd is not None and not (math.isfinite(ns.budget_usd) and ns.budget_usd > 0):
        raise InvalidConfig(f"--budget-usd must be a finite amount more than 0, not {ns.budget_usd!r}")
    return SweepPlan(scene=str(ns.scene), isolations=parse_choices(ns.isolation, ISOLATIONS, "--isolation"),
                     coordinators=parse_choices(ns.coordinator, ROLES, "--coordinator"), seeds=parse_seeds(ns.seeds),
                     provider=ns.provider, model=ns.model, base_url=ns.base_url, max_beats=ns.max_beats,
                     characters_dirs=[str(d) for d in ns.characters_dirs], concurrency=ns.concurrency,
                     budget_usd=ns.budget_usd, requests_per_min=ns.requests_per_min, tokens_per_min=ns.tokens_per_min,
                     provider_settings=provider_flags.settings(ns))


def main(argv: list[str]) -> int:
    if any(arg == "--branch-from" or arg.startswith("--branch-from=") for arg in argv):
        from promptdesk.core.cli.take_sweep import main as take_sweep
        return take_sweep(argv)
    ns = parser().parse_args(argv)
    folder = ns.out or Path("sweeps") / f"{ns.scene.stem}-{datetime.now():%Y%m%d-%H%M%S}"
    return sweep_through(lambda: Sweep(plan_from(ns), folder, Progress()), folder)
