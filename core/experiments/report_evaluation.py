"""The evaluation in the HTML reports: a run's scores per actor beside what the audit proves of its goal
and secret, with the evaluator's reasoning; a sweep's mean over agents and episodes per condition
(the paired statistics of each dimension are in the sweep's comparison table, where they are metrics).

Every text from a model or a file (reasoning, names) is escaped here, as everywhere in the reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from promptdesk.core.protocol.sanitize import html_text
from promptdesk.core.experiments.compare import Comparison, number
from promptdesk.core.experiments.evaluation_compare import means_text_rows
from promptdesk.core.experiments.evaluation_view import audit_or_none, isolation_line, overall_text
from promptdesk.core.protocol.rubrics import RUBRICS
from promptdesk.core.record.evaluation_file import evaluations, failed
from promptdesk.core.record.events import BaseEvent


def esc(text: object) -> str:
    return html_text(text)


def _table(rows: list[list[str]], header: list[str]) -> str:
    """An HTML table of already-escaped cells (the reports' own shape)."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _score(value: Any) -> str:
    return "unknown" if value is None else esc(number(float(value)) if isinstance(value, float) else value)


def _cite(rubric: str) -> str:
    known = RUBRICS.get(rubric)
    return f"<p>The rubric: {esc(known.citation)}</p>" if known and known.citation else ""


def run_section(run_dir: Path, events: list[BaseEvent]) -> list[str]:
    """A run's evaluations (none: nothing), each with one row per actor and its reasoning."""
    groups, unscored = evaluations(events), failed(events)
    if not groups and not unscored:
        return []
    audit = audit_or_none(run_dir)
    out = ["<h2>Evaluation</h2>",
           "<p>The evaluator's <code>secret</code> score says what a character said; the last column is what "
           "the isolation audit proves the engine sent.</p>"]
    for group in groups:
        names = list(group["dimensions"])
        rows = [[esc(actor["name"]), *(_score(actor["scores"].get(n)) for n in names), esc(overall_text(actor)),
                 esc(isolation_line(audit, slug))] for slug, actor in group["actors"].items()]
        out += [f"<h3>{esc(group['title'])} by {esc(group['evaluator'])}</h3>",
                _table(rows, ["actor", *(esc(n) for n in names), "overall", "goal and secret (audit)"])]
        for actor in group["actors"].values():
            detail = [[esc(n), _score(actor["scores"].get(n)), esc(actor["reasoning"].get(n, "")),
                       esc(actor["unknown"].get(n, ""))] for n in names]
            out.append(f"<details><summary>{esc(actor['name'])}: the evaluator's reasoning</summary>"
                       f"{_table(detail, ['dimension', 'score', 'reasoning', 'unknown because'])}</details>")
        out.append(_cite(group["rubric"]))
    for key, actors in unscored.items():
        rubric, _, evaluator = key.partition("@")
        title = RUBRICS[rubric].title if rubric in RUBRICS else rubric
        out += [f"<h3>{esc(title)} by {esc(evaluator)}: not scored</h3>",
                _table([[esc(slug), esc(why)] for slug, why in actors.items()], ["actor", "the evaluation call failed"]),
                "<p>Every score of these actors is unknown; <code>promptdesk evaluate</code> on this run asks again.</p>"]
    return out


def sweep_section(comparison: Comparison) -> list[str]:
    """A sweep's mean over agents and episodes per evaluation and condition (as Sotopia's tables)."""
    parts = means_text_rows(comparison)
    if not parts:
        return []
    out = ["<h2>Evaluation: mean over agents and episodes</h2>",
           "<p>Each cell is the mean of every agent's score in every run of the condition (unknown scores left "
           "out and counted), as Sotopia's tables report it. The paired comparison of each dimension, run by "
           "run, is in the comparison table above.</p>"]
    for title, rows, notes in parts:
        out += [f"<h3>{esc(title)}</h3>", _table([[esc(c) for c in row] for row in rows[1:]], [esc(h) for h in rows[0]]),
                *(f"<p>{esc(note)}</p>" for note in notes)]
    rubrics = {key.partition("@")[0] for run in comparison.runs for key in run.evaluation}
    return out + [_cite(rubric) for rubric in sorted(rubrics)]
