"""`promptdesk evaluate RUN_DIR... [--rubric sotopia] [--provider P --model M --base-url URL] [--again]
[--budget-usd X]`: score the actors of closed runs (or of every finished run of a sweep) on a rubric
(`promptdesk.core.experiments.evaluate`), and print each actor's scores beside what the audit proves of
its goal and secret. With neither `--provider` nor `--model`, each run is scored by the evaluators it
records (its scene's, or its sweep's; `--base-url` moves a remote one to another server), else by the
offline evaluator.

Exit codes: 0 every actor of every run was scored (or had been), 1 an actor could not be scored (its
call failed, or its answer could not be read at all), a run of several could not be evaluated (named),
or the budget or a signal stopped the command (Ctrl-C, SIGTERM, SIGHUP: the scores given so far stay); 2 not a closed run (given alone), a folder another process writes,
or a flag to fix.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from promptdesk.core.cli import provider_flags
from promptdesk.core.cli.audit import runs_of
from promptdesk.core.cli.common import command_parser, exit_codes, refuse
from promptdesk.core.cli.numbers import budget_usd
from promptdesk.core.experiments.progress import silence
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, InvalidConfig, PromptdeskError
from promptdesk.core.experiments.evaluate import RunEvaluation, evaluate_run, run_evaluators
from promptdesk.core.experiments.evaluation_view import audit_or_none, summary_lines
from promptdesk.core.protocol.rubrics import RUBRICS
from promptdesk.core.providers.spec import ProviderSpec


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk evaluate", "Score the actors of closed runs on a rubric (after the fact, as a "
                       "scene's `evaluate:` does at its close): one call per actor, recorded in the run folder, "
                       "the scores in evaluation.json.",
                       exit_codes("every actor was scored (now or before)",
                                  "an actor could not be scored (its call failed, or its answer could not be read "
                                  "at all), or the budget or a signal (Ctrl-C, SIGTERM, SIGHUP) stopped the command",
                                  "not a closed run, a folder another process is writing, or a flag to fix"))
    p.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders, or a sweep folder")
    p.add_argument("--rubric", choices=tuple(RUBRICS),
                   help="what to score (default: the run's own rubric, else sotopia: SOTOPIA-EVAL's seven dimensions)")
    p.add_argument("--again", action="store_true",
                   help="score again the actors this evaluator already scored (the latest evaluation counts)")
    p.add_argument("--budget-usd", dest="budget_usd", type=budget_usd, metavar="USD",
                   help="stop once the evaluation calls of this command have cost this much")
    provider_flags.add(p, "who scores (default: each run's own evaluator, as its scene's evaluator: or its sweep's "
                          "--evaluator chose it; else offline, the offline evaluator: no key, no network)", actors=False)
    return p


def chosen(ns: argparse.Namespace) -> bool:
    """The flags name an evaluator (else each run is scored by its own; `--base-url` alone moves it)."""
    return ns.provider is not None or ns.model is not None


def spec_of(ns: argparse.Namespace) -> ProviderSpec:
    """The evaluator's spec from the flags (default: the offline evaluator, which takes no model or server)."""
    name = ns.provider or "offline"
    if name == "offline" and (ns.model or (ns.base_url and chosen(ns))):
        raise InvalidConfig("--model/--base-url: the offline evaluator takes no model and no server; add --provider "
                            "(anthropic, openai, openai-compatible, claude-code)")
    data = {"name": name, "model": ns.model, "base_url": ns.base_url if chosen(ns) else None,
            **provider_flags.settings(ns)}
    try:
        return ProviderSpec.model_validate({k: v for k, v in data.items() if v is not None})
    except ValueError as exc:
        raise InvalidConfig(f"the evaluator's provider: {exc}") from None


def usable(spec: ProviderSpec) -> None:
    """Build (and close) the evaluator the flags name, once, before any run: a missing API key or model
    is a flag to fix (exit 2), said once, never a NOT EVALUATED line per run of a sweep (exit 1)."""
    from promptdesk.core.casting.pool import make_provider

    provider = make_provider(spec)
    asyncio.run(provider.aclose())


def main(argv: list[str]) -> int:
    """Evaluate each run in turn; print its scores and the audit's line per actor."""
    ns = parser().parse_args(argv)
    try:
        spec = spec_of(ns)
        folders = [run for arg in ns.run_dirs for run in runs_of(arg)]
        if chosen(ns):
            usable(spec)
    except PromptdeskError as exc:
        return refuse(str(exc))
    spent, failed, stopped = 0.0, False, False
    out = Output()
    for folder in folders:
        try:
            own, specs = (None, [spec]) if chosen(ns) else run_evaluators(folder, provider_flags.settings(ns),
                                                                          ns.base_url)
            rubric = RUBRICS[ns.rubric or own or "sotopia"]
            for one in specs or [spec]:
                try:
                    result = stoppable(evaluate_run(folder, rubric, one, again=ns.again, budget_usd=ns.budget_usd,
                                                    spent=spent))
                except Interrupted as exc:
                    out.flush()
                    print(f"Stopped by {exc}: the scores given so far are recorded; run the same command to score the "
                          "rest.", file=sys.stderr)
                    failed = stopped = True
                    break
                spent += result.cost_usd
                failed |= bool(result.failed) or bool(result.unread) or result.stopped is not None
                _show(result, out)
                if result.stopped:
                    print(f"Stopped: {result.stopped}; run the same command with a higher --budget-usd to score the "
                          "rest.", file=sys.stderr)
                    stopped = True
                    break
        except PromptdeskError as exc:
            why = str(exc) + ("" if chosen(ns) or isinstance(exc, InvalidConfig) else
                              " (the evaluator this run records; --provider and --model choose another)")
            if len(folders) == 1:
                return refuse(why)
            out(f"{folder}: NOT EVALUATED: {why}")
            failed = True
            continue
        if stopped:
            break
    print(f"Evaluation calls of this command cost ${spent:.4f}.", file=sys.stderr)
    if out.lost is not None:  # every run was scored: now the output that was lost is said (exit 1)
        raise out.lost
    return EXIT_FAILED if failed else EXIT_CLOSED


class Interrupted(Exception):
    """Ctrl-C, SIGTERM or SIGHUP stopped the evaluation of a run (its message: the signal's name)."""


def stoppable(coro: Any) -> Any:
    """`asyncio.run(coro)`, but Ctrl-C, SIGTERM and SIGHUP cancel it, and `Interrupted` is raised once it
    has unwound: the scores recorded so far stay, the run's derived files are written and its folder's
    lock is released (a Ctrl-C was a traceback; a SIGTERM left the folder's files unwritten)."""
    import signal

    async def run() -> Any:
        loop, task, got = asyncio.get_running_loop(), asyncio.current_task(), []
        installed = []
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(signum, lambda signum=signum: (got.append(signum), task and task.cancel()))
                installed.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        try:
            return await coro
        except asyncio.CancelledError:
            if got:
                raise Interrupted(signal.Signals(got[0]).name) from None
            raise
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    return asyncio.run(run())


class Output:
    """stdout for the scores, a run's block at a time. A reader that went away (`| head -1`), a closed
    stdout or a full disk stops the printing, never the scoring (it stopped after the first run, the
    others never scored): the failure is raised once every run is done, and said as any output's."""

    def __init__(self) -> None:
        self.lost: OSError | None = None

    def __call__(self, text: str) -> None:
        self._try(print, text)

    def flush(self) -> None:
        """Hand the run's block to the reader now (a script reads it as each run is scored)."""
        self._try(sys.stdout.flush)

    def _try(self, write: Any, *args: Any) -> None:
        if self.lost is not None:
            return
        try:
            write(*args)
        except OSError as exc:  # BrokenPipeError included
            self.lost = exc
            silence(sys.stdout)


def _show(result: RunEvaluation, out: Output) -> None:
    """One run: who was scored, skipped or failed, then the scores and the audit's line per actor."""
    unread = result.unread
    out(f"{result.run_dir}: {len(result.scored) - len(unread)} scored"
          + (f", {len(unread)} unread" if unread else "") + f", {len(result.skipped)} already scored by "
          f"{result.evaluator}" + (f", {len(result.failed)} failed" if result.failed else ""))
    for slug, why in result.failed.items():
        out(f"  FAILED {slug}: {why}")
    for slug, why in unread.items():
        out(f"  UNREAD {slug}: the evaluator's answer could not be read, twice ({why}); every score is unknown, and "
              "the same command asks again")
    for line in summary_lines(result.run_dir, audit_or_none(result.run_dir), only=result.evaluator):
        out(f"  {line}")
    out.flush()
