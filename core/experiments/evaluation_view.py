"""A run's evaluation as a person reads it: each actor's scores beside what the audit proves of its goal
and secret.

The evaluator's `secret` score says what a character *said*; the audit (`promptdesk.core.record.audit`)
proves what the engine *sent*: that no other actor's request ever carried this actor's goal (its
perspective) or secret (or anything else of its profile). `isolation_line` puts the proof in one line per
actor: "goal and secret: never sent to the other actor (audited)" when the audit is clean, the
recipients when it found a leak of that material, and "not proven" when the record could not all be
checked (the audit fails closed). A clean line never stands beside a leak of the actor's other material
(its thinking, its journal): that leak is named after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from promptdesk.core.errors import PromptdeskError
from promptdesk.core.protocol.evaluation import EVALUATOR
from promptdesk.core.record.audit import AuditReport, audit_run
from promptdesk.core.record.evaluation_file import evaluations
from promptdesk.core.record.recorder import read_events

GOAL_AND_SECRET = ("perspective", "secret", "profile")
"""The audit's kinds of an actor's material that hold its goal and its secret."""
PROVEN = "goal and secret: never sent to the other actor (audited)"


def isolation_line(report: AuditReport | None, slug: str) -> str:
    """What the audit proves of one actor's goal and secret (see the module docstring)."""
    if report is None:
        return "goal and secret: not proven (the run could not be audited)"
    reached = sorted({leak.recipient or "every actor" for leak in report.leaks if leak.owner == slug
                      and leak.kind in GOAL_AND_SECRET and leak.recipient not in (slug, EVALUATOR)})
    named = lambda who: ", ".join(f"{r} ({report.names[r]})" if r in report.names else r for r in who)  # noqa: E731
    if reached:
        return f"goal or secret: SENT to {named(reached)} (the audit found the leak)"
    if report.problems:
        return "goal and secret: not proven (the audit could not check the whole record)"
    proven = PROVEN.replace("the other actor", "any other actor") if len(report.names) > 2 else PROVEN
    other = {}  # the actor's other material the audit found leaked (its thinking, its journal), by kind
    for leak in report.leaks:
        if leak.owner == slug and leak.recipient not in (slug, EVALUATOR):
            other.setdefault(leak.kind, set()).add(leak.recipient or "every actor")
    if other:
        return proven + "; but its " + "; its ".join(f"{kind}: SENT to {named(sorted(who))}"
                                                      for kind, who in sorted(other.items())) + " (the audit found the leak)"
    return proven


def audit_or_none(run_dir: Path) -> AuditReport | None:
    """The run's audit, None when it cannot be audited at all."""
    try:
        return audit_run(run_dir)
    except PromptdeskError:
        return None


def run_evaluations(run_dir: Path) -> list[dict[str, Any]]:
    """The run's evaluations, as `evaluation.json` groups them (read from its log)."""
    return evaluations(read_events(Path(run_dir), warn=lambda _line: None))


def score_text(score: Any) -> str:
    return "unknown" if score is None else str(score)


def overall_text(actor: dict[str, Any]) -> str:
    """An actor's overall score, saying over how many dimensions it is the mean when some are unknown
    (a mean of one known score is not a mean of seven)."""
    if actor["overall"] is None:
        return "unknown"
    scores = list(actor["scores"].values())
    known = sum(score is not None for score in scores)
    return f"{actor['overall']:.2f}" + (f" (mean of the {known} known of {len(scores)})" if known < len(scores) else "")


def summary_lines(run_dir: Path, report: AuditReport | None = None, only: str | None = None) -> list[str]:
    """Per evaluation (or the one by `only`, an evaluator label), per actor: its scores and overall, and
    what the audit proves of its goal and secret."""
    out = []
    for group in run_evaluations(run_dir):
        if only is not None and group["evaluator"] != only:
            continue
        out.append(f"{group['title']} by {group['evaluator']}:")
        for slug, actor in group["actors"].items():
            scores = ", ".join(f"{name} {score_text(score)}" for name, score in actor["scores"].items())
            out.append(f"  {actor['name']} ({slug}): {scores}; overall {overall_text(actor)}")
            out.append(f"    {isolation_line(report, slug)}")
    return out
