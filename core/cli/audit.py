"""`promptdesk audit RUN_DIR`: re-check every request of a run against its private material (`core.record.audit`)."""

from __future__ import annotations

import sys
from pathlib import Path

from core.cli.common import refuse
from core.errors import EXIT_CLOSED, EXIT_FAILED, NotARun
from core.record.audit import audit_run


def main(args: list[str]) -> int:
    """`promptdesk audit RUN_DIR`: print each leak; exit 0 clean, 1 leak (or unreadable), 2 not a run."""
    if len(args) != 1:
        return refuse("INVALID_CONFIG: usage: promptdesk audit RUN_DIR")
    try:
        report = audit_run(Path(args[0]))
    except NotARun as exc:
        return refuse(str(exc))
    for leak in report.leaks:
        print(leak.describe(report.names))
    for problem in report.problems:
        print(f"UNCHECKED {problem}")
    for warning in report.warnings:
        print(f"WARNING {warning}", file=sys.stderr)
    print(report.summary())
    return EXIT_CLOSED if report.clean else EXIT_FAILED

