"""`session.yaml` (rewritten whole, atomically, once per round: no partial round is ever visible)
and the final `summary.md` of a roundtable run. In `summary.md` nothing a model wrote starts a line:
each bullet is folded onto its line, the recommendation's further lines are indented."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from promptdesk.core.formats.roundtable.state import RoundtableState
from promptdesk.core.protocol.lines import indented, one_line


def session_data(state: RoundtableState) -> dict[str, Any]:
    """The whole session file as data: topic, strategy, phase, rounds, decisions, conclusion."""
    data: dict[str, Any] = {
        "topic": state.topic, "strategy": state.strategy.name, "phases": [p.name for p in state.strategy.phases],
        "current_phase": state.phase.name, "output_type": output_type(state),
        "participation": state.participation, "blind_answers": state.blind,
        "participants": [{"slug": s, "name": n, **({"role": state.roles[s]} if s in state.roles else {})}
                         for s, n in state.participants.items()],
        "status": state.status, "total_rounds": len(state.rounds), "max_rounds": state.max_rounds,
        "rounds": state.rounds, "decisions": state.decisions,
    }
    if not state.blind:
        data["note"] = "participation: sequential - each participant saw the answers before theirs (not blind)"
    if state.conclusion is not None:
        data["conclusion"] = state.conclusion
    return data


def output_type(state: RoundtableState) -> str:
    """The output the discussion produces: the latest the facilitator named, else spec 002's `summary`."""
    named = [(r.get("synthesis") or {}).get("output_type") for r in state.rounds]
    return next((n for n in reversed(named) if n), "summary")


class _Plain(yaml.SafeDumper):
    """Writes a list or mapping the record holds twice (a round's consensus that is also the conclusion's) in
    full each time: never as a YAML anchor and alias (`&id001`, `*id001`), which a reader of the file would
    have to follow and many tools refuse."""

    def ignore_aliases(self, data: object) -> bool:
        return True


class SessionFile:
    """Owns `session.yaml`; `writes` counts the batch writes (one per round, one per decision)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writes = 0

    def write(self, state: RoundtableState) -> None:
        """Replace the file in one step (write a temporary file, then rename over)."""
        text = yaml.dump(session_data(state), Dumper=_Plain, sort_keys=False, allow_unicode=True, width=100)
        tmp = self.path.with_suffix(".yaml.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.path)
        self.writes += 1


def _bullets(items: list[str], empty: str) -> list[str]:
    return [f"- {one_line(str(i))}" for i in items] or [f"- {empty}"]


def summary_md(state: RoundtableState, improvised: list[str] | None = None) -> str:
    """The final summary: recommendation, consensus, open conflicts, decisions; and who at the table was
    the offline improviser, so no one reads its drawn positions as a model's judgement."""
    end = state.conclusion or {}
    conflicts = [c["topic"] if isinstance(c, dict) else str(c) for c in end.get("open_conflicts", [])]
    decisions = [f"Round {d['round']}: **{d['decision']}**" + (f" - {d['text']}" if d.get("text") else "")
                 + f" ({d['by']})" for d in state.decisions]
    lines = [f"# Roundtable: {one_line(state.topic)}", "",
             f"- Strategy: {state.strategy.title or state.strategy.name} (phases: "
             f"{', '.join(p.name for p in state.strategy.phases)}); ended in phase {state.phase.name}",
             f"- Rounds: {len(state.rounds)} of at most {state.max_rounds}",
             f"- Participation: {state.participation}" + ("" if state.blind else " (answers were not blind)"),
             f"- Participants: {', '.join(_seated(state))}",
             f"- Ended: {end.get('reason', 'incomplete')}" + (f" - {one_line(str(end['note']))}" if end.get("note") else ""),
             *([f"- Improvised offline (not a model; positions drawn by seed, not reasoned): {', '.join(improvised)}"]
               if improvised else []),
             "", "## Recommendation", "", indented(str(end.get("recommendation") or "(none)")), "",
             "## Consensus", "", *_bullets(end.get("consensus", []), "(none)"), "",
             "## Open conflicts", "", *_bullets(conflicts, "(none)"), "",
             "## Decisions", "", *_bullets(decisions, "(none)"), ""]
    return "\n".join(lines)


def _seated(state: RoundtableState) -> list[str]:
    """Each participant's name, and the rounds in which the question was for them and they gave no answer."""
    seated = []
    for slug, name in state.participants.items():
        silent = [str(r["round"]) for r in state.rounds if slug in r.get("no_answer", [])]
        seated.append(f"{name} (no answer in round{'s' if len(silent) > 1 else ''} {', '.join(silent)})" if silent else name)
    return seated


def write_summary(run_dir: Path, state: RoundtableState, improvised: list[str] | None = None) -> None:
    """Write `summary.md` beside `session.yaml`."""
    (run_dir / "summary.md").write_text(summary_md(state, improvised), encoding="utf-8")
