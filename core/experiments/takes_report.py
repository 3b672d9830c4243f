"""The HTML page of takes (`promptdesk report PARENT TAKE... --html FILE`): the tree of takes, the takes
side by side from the beat they branched at, aligned by beat with each take's change marked, and the
comparison of what follows that beat (`core.experiments.takes`). Self-contained and inert, as every
report (`core.experiments.report`)."""

from __future__ import annotations

from pathlib import Path

from core.errors import InvalidConfig
from core.experiments.compare import compare, takes_notes
from core.experiments.metrics import audit_verdict
from core.experiments.report import comparison_html, esc, page
from core.experiments.takes import Family, by_beat, family, metrics_after
from core.record import outputs

STYLE = """<style>table.takes td{text-align:left;vertical-align:top;min-width:14rem}
mark.change{background:#fde68a;font-weight:600}tr.diverges td:first-child{border-left:4px solid #ef4444}
pre.tree{background:#f6f6f6;padding:.5rem}</style>"""


def aligned(takes: Family) -> str:
    """A row per beat from the branch beat, a column per take; the take's change marked, the beat where
    the takes diverge flagged."""
    columns = [by_beat(t, takes.branched_at) for t in takes.takes]
    last = max((max(c, default=takes.branched_at) for c in columns), default=takes.branched_at)
    head = "".join(f"<th>{esc(t.folder.name)}</th>" for t in takes.takes)
    rows = []
    for beat in range(takes.branched_at, last + 1):
        cells = []
        for column in columns:
            lines = column.get(beat, [])
            cells.append("<br>".join(f'<mark class="change">» {esc(line)}</mark>' if change else esc(line)
                                     for line, change in lines) or "—")
        flag = ' class="diverges"' if beat == takes.diverges_at else ""
        tag = " (diverges)" if beat == takes.diverges_at else ""
        rows.append(f"<tr{flag}><td>beat {beat}{tag}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f'<table class="takes"><thead><tr><th>beat</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def takes_report(folders: list[Path]) -> str:
    """The HTML of runs that are takes of one another; `InvalidConfig` when they are not."""
    takes = family(folders)
    if takes is None:
        raise InvalidConfig("several run folders make one report only when they are takes of one another "
                            "(promptdesk branch); put other runs side by side with promptdesk compare")
    runs = [metrics_after(t, takes.branched_at, audit_verdict(t.folder)) for t in takes.takes]
    comparison = compare(runs, "run", takes=takes)
    first = takes.takes[0].events
    title = outputs.start_info(first).get("scene", {}).get("title") or takes.takes[0].folder.name
    body = [STYLE, f"<h1>Takes of {esc(title)}</h1>", *(f"<p>{esc(note)}</p>" for note in takes_notes(takes)),
            "<h2>Tree of takes</h2>", f'<pre class="tree">{esc(chr(10).join(takes.tree_lines()))}</pre>',
            f"<h2>Side by side from beat {takes.branched_at}</h2>", aligned(takes),
            f"<h2>Metrics from beat {takes.branched_at}</h2>", comparison_html(comparison)]
    return page(f"Takes of {title} — Promptdesk", body)
