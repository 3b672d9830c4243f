"""The improviser as a roundtable facilitator - also the rule-based facilitator of coordinator role C.

Questions follow the strategy's phase and the last synthesis; a synthesis groups the answers by
position: unanimity is consensus, anything else one conflict for the phase; it advances the phase
once its minimum rounds are done (a round more while a conflict is open) and concludes in the last
phase, asking the operator to decide when the last phase's conflict will not close."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from promptdesk.core.formats.roundtable.improv_facts import as_block, facts, last_user
from promptdesk.core.providers.base import Request


def facilitate(request: Request, seed: int, malformed_rate: float) -> str:
    """The facilitator's YAML: a question, a synthesis or a conclusion, per the task line."""
    info = facts(request)
    task = info.get("task") or ("question" if last_user(request).startswith("TASK: question") else "synthesis")
    if task == "question":
        return as_block(question(info))
    return as_block(synthesis(info, conclude=task == "conclude"))


def question(info: dict[str, Any]) -> dict[str, Any]:
    phase = info.get("phase") or {}
    last = info.get("previous_synthesis") or {}
    topic = str(info.get("topic") or "the topic").rstrip()
    if phase.get("rounds_done_in_phase", 0) == 0:
        text = f"{phase.get('goal', '')} With that in mind, where do you stand on this: {topic}".strip()
        focus = phase.get("goal") or "Core requirements and constraints"
    elif last.get("conflicts"):
        text = "You are still split on how to proceed. What would change your mind, and what could you live with?"
        focus = last.get("next_focus") or "closing the gap"
    else:
        text = "You agree so far. What is still missing before we can move on?"
        focus = last.get("next_focus") or "gaps and open questions"
    return {"action": "question", "question": text, "participants": "all", "focus": focus}


def same(position: Any) -> str:
    """A position as compared: in any case, spacing and punctuation (a model's `Yes, gradually.` is
    `yes gradually`), so that only what it says tells two positions apart."""
    return " ".join(re.findall(r"\w+", str(position).casefold()))


def _majority(answers: dict[str, dict[str, Any]]) -> tuple[str, int]:
    """The position held most (most confidently on a tie), as the first of its holders by slug wrote it, and
    how many hold it."""
    counts = Counter(same(a["position"]) for a in answers.values())
    weight = {k: sum(a.get("confidence") or 0.5 for a in answers.values() if same(a["position"]) == k) for k in counts}
    best = sorted(counts, key=lambda k: (-counts[k], -weight[k], k))[0]
    holder = min(s for s, a in answers.items() if same(a["position"]) == best)  # not arrival order: the same each run
    return answers[holder]["position"], counts[best]


def synthesis(info: dict[str, Any], conclude: bool = False) -> dict[str, Any]:
    answers = {s: a for s, a in (info.get("answers") or {}).items() if isinstance(a, dict) and a.get("position")}
    phase = info.get("phase") or {}
    name = phase.get("name", "discussion")
    before = (info.get("previous_synthesis") or {}).get("conflicts") or []
    if not answers:
        return {"action": "synthesis", "synthesis": "No answers this round.", "consensus": [], "conflicts": [],
                "resolved": [], "next_action": "conclude" if conclude else "continue", "next_focus": "Clarify positions"}
    best, held = _majority(answers)
    unanimous = held == len(answers)
    conflicts = [] if unanimous else [{"topic": f"{name}: how to proceed",
                                       "positions": {s: a["position"] for s, a in answers.items()}}]
    dissent = sorted(a.get("name", s) for s, a in answers.items() if same(a["position"]) != same(best))
    verb = "sees" if len(dissent) == 1 else "see"
    groups = _groups(answers)
    tied = not unanimous and len(groups) > 1 and len(groups[0][1]) == len(groups[1][1])
    if tied:  # no position leads: each is said with who holds it, none is called the table's
        text = (f"Round {info.get('round')} ({name}): no majority. "
                + "; ".join(f"{', '.join(who)}: '{position}'" for position, who in groups) + ".")
    else:
        text = (f"Round {info.get('round')} ({name}): {held} of {len(answers)} favour '{best}'. "
                + ("Everyone agrees." if unanimous else f"{', '.join(dissent)} {verb} it differently."))
    return {"action": "synthesis", "synthesis": text, "consensus": [best] if unanimous else [],
            "conflicts": conflicts, "resolved": [c.get("topic", c) for c in before if isinstance(c, dict)] if unanimous else [],
            "next_action": "conclude" if conclude else _next(phase, unanimous, info),
            "next_focus": "the next phase" if unanimous else "what it would take to close the gap",
            "recommendation": f"{best} (held by {held} of {len(answers)}"
                              + ("; tied, the more confident side)" if tied else ")")}


def _groups(answers: dict[str, dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each position held, as its first holder by slug wrote it, with its holders' names: the most held
    first (then the more confident), as `_majority` ranks them."""
    keys = {same(a["position"]) for a in answers.values()}
    holders = {k: sorted(s for s, a in answers.items() if same(a["position"]) == k) for k in keys}
    weight = {k: sum(answers[s].get("confidence") or 0.5 for s in holders[k]) for k in keys}
    ranked = sorted(keys, key=lambda k: (-len(holders[k]), -weight[k], k))
    return [(answers[holders[k][0]]["position"], sorted(answers[s].get("name", s) for s in holders[k])) for k in ranked]


def _next(phase: dict[str, Any], unanimous: bool, info: dict[str, Any]) -> str:
    done = phase.get("rounds_done_in_phase", 0) + 1
    need = phase.get("min_rounds", 1) + (0 if unanimous else 1)
    if done < need:
        return "continue"
    if not phase.get("last_phase"):
        return "phase"
    if not unanimous and max((info.get("open_conflicts_rounds") or {0: 0}).values()) >= 2:
        return "escalate"
    return "conclude"
