"""`evaluation.json`: every evaluation of a run's actors, gathered from its `evaluation` events.

An `evaluation` event (`promptdesk.core.engine.evaluation`) holds one actor's scores by one evaluator on one
rubric. The file groups them by rubric and evaluator (an actor evaluated twice by the same evaluator keeps
its latest evaluation), adds each dimension's range and the mean over the actors of each dimension and of
the overall score (known scores only: an unknown is never read as 0):

    {"version": 1, "evaluations": [
      {"rubric": "sotopia", "title": "SOTOPIA-EVAL", "evaluator": "openai:gpt-4o",
       "dimensions": {"believability": [0, 10], ...},
       "actors": {"ava": {"name": "Ava Lee", "scores": {"believability": 8, "goal": null, ...},
                          "overall": 4.5, "reasoning": {...}, "unknown": {"goal": "why"}, "answered": {},
                          "tries": 1}},
       "mean": {"believability": 7.5, ..., "overall": 4.1}}]}

It is derived (written with the other derived files, `promptdesk rebuild` writes it again); readers of a
run's scores read the events (`evaluations`), or this file.
"""

from __future__ import annotations

import json
from typing import Any

from promptdesk.core.protocol.evaluation import EVALUATOR
from promptdesk.core.protocol.rubrics import RUBRICS
from promptdesk.core.record.events import BaseEvent

FILE = "evaluation.json"
VERSION = 1
TYPE = "evaluation"


def is_evaluation(event: BaseEvent) -> bool:
    return event.type == TYPE and event.from_ == EVALUATOR


def fields(event: BaseEvent) -> dict[str, Any]:
    """An evaluation event's own fields (rubric, evaluator, scores, ...)."""
    return event.model_extra or {}


def evaluations(events: list[BaseEvent]) -> list[dict[str, Any]]:
    """The run's evaluations, one per rubric and evaluator, in the order they first appear (see the
    module docstring); [] when the run has none."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for event in (e for e in events if is_evaluation(e)):
        extra = fields(event)
        rubric, evaluator = str(extra.get("rubric", "")), str(extra.get("evaluator", ""))
        group = groups.setdefault((rubric, evaluator), _group(rubric, evaluator))
        group["actors"][event.target or ""] = {
            "name": extra.get("name") or event.target, "scores": dict(extra.get("scores") or {}),
            "overall": extra.get("overall"), "reasoning": dict(extra.get("reasoning") or {}),
            "unknown": dict(extra.get("unknown") or {}), "answered": dict(extra.get("answered") or {}),
            "tries": extra.get("tries", 1)}
    for group in groups.values():
        names = list(group["dimensions"]) or sorted({d for a in group["actors"].values() for d in a["scores"]})
        group["mean"] = {name: _mean([a["scores"].get(name) for a in group["actors"].values()]) for name in names}
        group["mean"]["overall"] = _mean([a["overall"] for a in group["actors"].values()])
    return list(groups.values())


def failed(events: list[BaseEvent]) -> dict[str, dict[str, str]]:
    """`rubric@evaluator` -> actor -> why: the actors an evaluator's call failed for (the `system` line the
    evaluation step and `promptdesk evaluate` record), unless a later evaluation by it scored them."""
    out: dict[str, dict[str, str]] = {}
    for event in events:
        extra = fields(event)
        if event.type == "system" and getattr(event, "reason", None) == TYPE and extra.get("rubric") and extra.get("evaluated"):
            out.setdefault(f"{extra['rubric']}@{extra.get('evaluator', '')}", {})[str(extra["evaluated"])] = \
                str(event.text or "").partition(": ")[2] or "the call failed"
        elif is_evaluation(event):
            out.get(f"{extra.get('rubric', '')}@{extra.get('evaluator', '')}", {}).pop(event.target or "", None)
    return {key: actors for key, actors in out.items() if actors}


def _group(rubric: str, evaluator: str) -> dict[str, Any]:
    known = RUBRICS.get(rubric)
    return {"rubric": rubric, "title": known.title if known else rubric, "evaluator": evaluator,
            "dimensions": {d.name: [d.low, d.high] for d in known.dimensions} if known else {}, "actors": {}}


def _mean(values: list[Any]) -> float | None:
    known = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return round(sum(known) / len(known), 4) if known else None


def render(events: list[BaseEvent]) -> str | None:
    """The file's text, or None when the run has no evaluation (then no file is written)."""
    found = evaluations(events)
    if not found:
        return None
    return json.dumps({"version": VERSION, "evaluations": found}, indent=2, ensure_ascii=False)
