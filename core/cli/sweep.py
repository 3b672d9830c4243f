"""`promptdesk sweep SCENE --isolation a,b --coordinator A,B,C --seeds 1-10 ...`: parse, check, run.

Exit codes: 0 when every planned run has a result, 1 when a run failed or the sweep was stopped
(signal, budget, a file that could not be written: `RECORDING_ERROR`, naming it) before every run
was done, or its budget was already spent (nothing started), 2 on invalid input or a folder another
sweep is writing (nothing run).
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from promptdesk.core.cli import provider_flags
from promptdesk.core.casting.places import SWEEPS, find_scene
from promptdesk.core.cli.common import command_parser, exit_codes, folder_name, sweep_through
from promptdesk.core.cli.numbers import positive_int, sweep_budget_usd
from promptdesk.core.casting.build import ISOLATIONS, ROLES
from promptdesk.core.experiments.benchmark import parse_models, scene_files
from promptdesk.core.experiments.sweep import Sweep, SweepPlan
from promptdesk.core.experiments.sweep_checks import parse_choices, parse_seeds
from promptdesk.core.experiments.progress import Progress


EPILOG = """A sweep of takes (promptdesk sweep --branch-from RUN_DIR --at-beat K (--event TEXT | --note TEXT
[--to ACTOR]) --seeds 1-10 [--concurrency N] [--budget-usd X] [--out DIR]) takes one run again from beat K
over the seeds, with the change and without it; `promptdesk sweep --branch-from RUN_DIR --help` lists its flags.

Re-running the same command resumes the sweep in its folder: done runs are kept, the rest are played."""
CODES = exit_codes("every planned run has a result",
                   "a run failed, or the sweep stopped (a signal, its budget, a file that could not be written) "
                   "before every run was done, or its budget was already spent (nothing started)",
                   "invalid input, or a folder another sweep is writing (nothing run)")


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk sweep", "Run every isolation × coordinator × seed combination of a scene (or, for "
                       "a benchmark, of several scenes × --models), each an ordinary run in one sweep folder with "
                       "results.jsonl.", CODES, EPILOG)
    p.add_argument("scenes", type=Path, nargs="+", metavar="SCENE",
                   help="a scene file, or a scene's name (./scenes/, then the examples); several, or a folder of "
                        "scene files, make a benchmark sweep (each scene a factor)")
    p.add_argument("--isolation", required=True, help="comma-separated, e.g. a,b")
    p.add_argument("--coordinator", required=True, help="comma-separated, e.g. A,B,C")
    p.add_argument("--seeds", required=True, help="e.g. 1-10 or 1,3,5")
    p.add_argument("--models", metavar="LIST",
                   help="the actors' models as a factor, comma-separated provider:model[@base_url] (e.g. "
                        "openai:gpt-4o-mini,anthropic:claude-haiku-4-5); every actor of a run plays on its model")
    p.add_argument("--evaluator", metavar="LIST",
                   help="the models that score every run after its close on its scene's rubric (else sotopia), "
                        "comma-separated provider:model[@base_url]; default: each scene's own evaluator:")
    p.add_argument("--branch-from", dest="branch_from", metavar="RUN_DIR",
                   help="sweep takes of RUN_DIR instead (see below): with --at-beat K and --event or --note")
    p.add_argument("--characters-dir", dest="characters_dirs", action="append", type=folder_name, default=[], metavar="DIR",
                   help="a folder to look for characters in first (repeatable)")
    p.add_argument("--max-beats", dest="max_beats", type=positive_int, metavar="N", help="each run's beat limit")
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="N", help="runs at once (default 4)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the sweep folder (default sweeps/<scene>-<stamp>)")
    p.add_argument("--budget-usd", dest="budget_usd", type=sweep_budget_usd, metavar="USD",
                   help="ceiling on the whole sweep's spend, across invocations (default: the one it was given before)")
    p.add_argument("--rpm", dest="requests_per_min", type=positive_int, metavar="N",
                   help="requests per minute per provider and model")
    p.add_argument("--tpm", dest="tokens_per_min", type=positive_int, metavar="N",
                   help="tokens per minute per provider and model")
    p.add_argument("--retry-failed", dest="retry_failed", action="store_true",
                   help="play again the runs whose result is a failed run's (each attempt's record is kept)")
    provider_flags.add(p)
    return p


def plan_from(ns: argparse.Namespace) -> SweepPlan:
    """The plan the flags describe (raises InvalidConfig naming the flag to fix)."""
    benchmark = len(ns.scenes) > 1 or ns.scenes[0].is_dir() or ns.models or ns.evaluator
    scenes = scene_files([str(s) for s in ns.scenes], Path.cwd()) if benchmark else []
    scene = str(ns.scenes[0]) if benchmark else str(find_scene(ns.scenes[0], Path.cwd()))
    return SweepPlan(scene=scene, scenes=scenes, models=parse_models(ns.models, "--models"),
                     evaluators=parse_models(ns.evaluator, "--evaluator"),
                     isolations=parse_choices(ns.isolation, ISOLATIONS, "--isolation"),
                     coordinators=parse_choices(ns.coordinator, ROLES, "--coordinator"), seeds=parse_seeds(ns.seeds),
                     provider=ns.provider, model=ns.model, base_url=ns.base_url, max_beats=ns.max_beats,
                     characters_dirs=[str(d) for d in ns.characters_dirs], concurrency=ns.concurrency,
                     budget_usd=ns.budget_usd, requests_per_min=ns.requests_per_min, tokens_per_min=ns.tokens_per_min,
                     provider_settings=provider_flags.settings(ns), protocol=ns.protocol)


def main(argv: list[str]) -> int:
    if any(arg == "--branch-from" or arg.startswith("--branch-from=") for arg in argv):
        from promptdesk.core.cli.take_sweep import main as take_sweep
        return take_sweep(argv)
    ns = parser().parse_args(argv)
    folder = ns.out or SWEEPS / f"{ns.scenes[0].stem}-{datetime.now():%Y%m%d-%H%M%S}"
    return sweep_through(lambda: Sweep(plan_from(ns), folder, Progress()), folder, ns.retry_failed)
