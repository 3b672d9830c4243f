"""`promptdesk audit RUN_DIR...`: re-check every request of one run or many (or of every run of a sweep
folder) against its private material (`promptdesk.core.record.audit`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from promptdesk.core.cli.common import command_parser, exit_codes, refuse
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, NotARun
from promptdesk.core.experiments.compare import is_sweep
from promptdesk.core.protocol.sanitize import strip_controls
from promptdesk.core.record.audit import AuditReport, audit_run

def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk audit", "Re-check every request sent to every actor and judge (prompts.jsonl) "
                       "against the run's private material: name each leak and whose material it is.",
                       exit_codes("every run is clean", "a leak, a part of the record that could not be checked, or a record "
                                  "cut short (a run killed before its end, or still being written)",
                                  "not a run"))
    p.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders, or a sweep folder")
    return p


def main(args: list[str]) -> int:
    """Print each leak and each part of the record that could not be checked, then a verdict per run;
    exit 0 when every run is clean, 1 when one has a leak or cannot all be checked, 2 not a run."""
    ns = parser().parse_args(args)
    try:
        folders = [run for arg in ns.run_dirs for run in runs_of(arg)]
        reports = [audit_run(folder) for folder in folders]
    except NotARun as exc:
        return refuse(str(exc))
    for report in reports:
        show(report)
    if len(reports) > 1:
        unclean = [r.run_dir.name for r in reports if not r.clean]
        tail = f": {', '.join(unclean)}" if unclean else ""
        print(f"{len(reports)} runs audited: {len(reports) - len(unclean)} clean, {len(unclean)} not clean{tail}.")
    return EXIT_CLOSED if all(r.clean for r in reports) else EXIT_FAILED


def runs_of(path: Path) -> list[Path]:
    """A run folder, or the run folders of a sweep folder (every one it holds, finished or not)."""
    if is_sweep(path) and not (path / "events.jsonl").is_file():
        runs = sorted(p for p in path.iterdir() if (p / "events.jsonl").is_file())
        if not runs:
            raise NotARun(f"{path} is a sweep folder with no run in it yet: nothing to audit")
        return runs
    return [path]


def show(report: AuditReport) -> None:
    """One run's findings, then its verdict."""
    for leak in report.leaks:
        print(strip_controls(leak.describe(report.names)))
    for problem in report.problems:
        print(f"UNCHECKED {strip_controls(problem)}")
    for text in report.disclosed:
        print(f"DISCLOSED {strip_controls(text)}")
    if report.cut:
        print(f"CUT {strip_controls(report.cut)}")
    for warning in report.warnings:
        print(f"WARNING {strip_controls(warning)}", file=sys.stderr)
    print(" ".join(strip_controls(report.summary()).split()))  # one line, whatever the run folder is named
