"""The HTML pages of takes, self-contained and inert as every report (`promptdesk.core.experiments.report`):

- `promptdesk report PARENT TAKE... --html FILE`: the tree of takes, the takes side by side from the
  beat they branched at, aligned by beat with each take's change marked, and the comparison of what
  follows that beat (`promptdesk.core.experiments.takes`);
- `promptdesk report SWEEP_OF_TAKES --html FILE`: a sweep of takes (`promptdesk.core.experiments.take_sweep`), the
  `retake` and `change` conditions compared with their statistics, a chart per metric and each take."""

from __future__ import annotations

from pathlib import Path

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.experiments.compare import compare
from promptdesk.core.experiments.compare_text import takes_notes
from promptdesk.core.experiments.metrics import audit_verdict
from promptdesk.core.experiments.report import bars_svg, comparison_html, esc, known, page, table
from promptdesk.core.experiments.take_sweep import measure_take_sweep, read_take_plan
from promptdesk.core.experiments.takes import Family, by_beat, family, metrics_after
from promptdesk.core.record import outputs
from promptdesk.core.record.takes import describe_change

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


def take_sweep_report(folder: Path) -> str:
    """The HTML of a sweep of takes: what the change does over the seeds, from the branch beat on."""
    plan = read_take_plan(folder)
    runs = measure_take_sweep(folder)
    comparison = compare(runs, "condition")
    change = describe_change({"event": plan.event, "note": plan.note, "to": plan.to})
    charts = []
    for metric in ("success", "turns", "silences", "interruptions", "echo", "tokens", "cost_usd"):
        stats = comparison.table[metric]
        if any(s.mean is not None for s in stats.values()):
            charts += [f"<h3>{esc(metric)} (mean ± sd)</h3>",
                       bars_svg({c: s.mean for c, s in stats.items()}, metric, {c: s.sd for c, s in stats.items()})]
    outcomes = [[esc(r.run), esc(r.condition()), esc(r.seed), esc(r.close_reason), known(r.success), str(r.beats),
                 esc(r.audit)] for r in runs]
    body = [f"<h1>Sweep of takes {esc(folder.name)}</h1>",
            f"<p>Takes of {esc(Path(plan.parent).name)} from beat {plan.at_beat}, {len(plan.seeds)} seeds: "
            f"<b>retake</b> changes nothing but the seed, <b>change</b> adds {esc(change)}. Every metric is of beat "
            f"{plan.at_beat} on (the beats before it are the parent's, recorded once, paid once).</p>",
            "<h2>Comparison</h2>", comparison_html(comparison), "<h2>Charts</h2>", *charts,
            "<h2>Takes</h2>", table(outcomes, ["take", "condition", "seed", "close", "success", "beats", "audit"])]
    return page(f"Sweep of takes {folder.name} — Promptdesk", body)
