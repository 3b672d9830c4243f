"""One self-contained HTML file for a run or a sweep: no network, no script, inline SVG charts.

Every piece of text that came from a model, a character file or a scene file goes through
`esc` (`html_text`: escaped, quotes included, control and direction characters dropped) before it reaches the page, and a Content-Security-Policy
forbids scripts and remote resources even if something slipped through.
"""

from __future__ import annotations

from pathlib import Path

from promptdesk.core.protocol.sanitize import html_text
from promptdesk.core.formats.registry import of_run
from promptdesk.core.record import outputs
from promptdesk.core.experiments.compare import (METRICS, Comparison, benchmark_conditions, compare, is_sweep, left_out, nothing_finished, number,
                                                 sweep_runs)
from promptdesk.core.experiments.evaluation_compare import evaluation_metrics, measured, unit_for
from promptdesk.core.experiments.column_stat import YES_NO
from promptdesk.core.experiments.report_evaluation import run_section, sweep_section
from promptdesk.core.experiments.compare_text import (cite, difference_cells, difference_header, factorial_header,
                                                      factorial_rows, notes, shown_differences)
from promptdesk.core.experiments.report_header import STYLE as FACTS_STYLE
from promptdesk.core.experiments.report_header import cite_html, facts_html, gather, run_command, scenes_given, sweep_command
from promptdesk.core.experiments.sweep import read_plan
from promptdesk.core.record.events import BaseEvent
from promptdesk.core.experiments.metrics import (NESTED, FAILED, INTERRUPTED, REACTED, SILENT, SPOKE, NotARunFolder, RunMetrics, audit_verdict,
                                      recorded_success, spend_per_beat, run_events, run_metrics, timeline)
from promptdesk.core.experiments.report_arcs import arcs_svg, graph_svg, insights_html, relationships_rows
from promptdesk.core.errors import PromptdeskError
from promptdesk.core.record.cut import cut_of
from promptdesk.core.record.private import read_private
from promptdesk.core.record.seams import superseded_calls

COLOURS = {SPOKE: "#3b82f6", INTERRUPTED: "#f59e0b", REACTED: "#10b981", SILENT: "#9ca3af", FAILED: "#ef4444"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#111}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:right}
td:first-child,th:first-child{text-align:left}tr.significant td{background:#fff7d6;font-weight:600}.line{margin:.3rem 0}
details{margin:.3rem 0}summary{cursor:pointer}.private{color:#555;white-space:pre-wrap}.legend span{margin-right:1rem}
.scroll{overflow-x:auto;max-width:100%}svg{height:auto}""" + FACTS_STYLE


def esc(text: object) -> str:
    """Text made inert for HTML (element content and attribute values alike)."""
    return html_text(text)


def page(title: str, body: list[str]) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>{''.join(body)}</body></html>")


def table(rows: list[list[str]], header: list[str], classes: list[str] | None = None) -> str:
    """An HTML table of already-escaped cells."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(f'<tr class="{(classes or [""] * len(rows))[i]}">' + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                   for i, row in enumerate(rows))
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


LABEL_CHARS = 17
"""How many characters of a name fit the label column of the charts at 11px."""


def label_svg(name: str, x: int, y: int) -> str:
    """A chart's name label that fits its column: a longer name is cut with an ellipsis, and the
    whole name is its tooltip (`<title>`)."""
    shown = name if len(name) <= LABEL_CHARS else name[:LABEL_CHARS - 1].rstrip() + "…"
    return f'<text x="{x}" y="{y}" font-size="11"><title>{esc(name)}</title>{esc(shown)}</text>'


def timeline_svg(rows: dict[str, list[str]], names: dict[str, str]) -> str:
    """One row per actor, one square per beat, coloured by what the actor did in it."""
    cell, label = 14, 110
    beats = max((len(r) for r in rows.values()), default=0)
    width, height = label + cell * max(beats, 1), cell * len(rows) + 4
    parts = [f'<svg role="img" aria-label="beat timeline" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">']
    for y, (slug, states) in enumerate(rows.items()):
        parts.append(label_svg(names.get(slug, slug), 0, y * cell + 11))
        for x, state in enumerate(states):
            if state:
                parts.append(f'<rect x="{label + x * cell}" y="{y * cell}" width="{cell - 2}" height="{cell - 2}" '
                             f'fill="{COLOURS[state]}"><title>beat {x}: {state}</title></rect>')
    legend = "".join(f'<span style="color:{c}">■ {s}</span>' for s, c in COLOURS.items())
    return "".join(parts) + f'</svg><div class="legend">{legend}</div>'


def _ticks(top: float) -> list[float]:
    """Round tick values from 0 to at least `top` (1, 2 or 5 times a power of ten apart, 4 to 6 of them)."""
    import math
    if top <= 0:
        return [0.0, 1.0]
    step = 10 ** math.floor(math.log10(top / 5))
    for factor in (1, 2, 5, 10):
        if top / (step * factor) <= 5:
            step *= factor
            break
    return [i * step for i in range(int(math.ceil(top / step - 1e-9)) + 1)]


CHART_WIDTH, NAME_WIDTH, VALUE_WIDTH = 720, 130, 90
"""A bar chart's drawing size (it scales down with the page: its width is 100%, at most this)."""


def bars_svg(values: dict[str, float | None], label: str, errors: dict[str, float] | None = None,
             unit: str = "") -> str:
    """Horizontal bars on an axis from 0 (ticks, and the unit under it), ± whiskers when given, all
    inside the frame: the axis runs to the largest mean plus its whisker. A value that is None gets no
    bar and the word "unknown" (never a bar of 0). The chart scales with the page (viewBox)."""
    errors = errors or {}
    ticks = _ticks(max([v + errors.get(k, 0) for k, v in values.items() if v is not None] + [0.0]))
    top = ticks[-1] or 1.0
    row, bar_w = 22, CHART_WIDTH - NAME_WIDTH - VALUE_WIDTH
    height = row * len(values) + 44
    parts = [f'<svg role="img" aria-label="{esc(label)}" viewBox="0 0 {CHART_WIDTH} {height}" width="100%" '
             f'style="max-width:{CHART_WIDTH}px" xmlns="http://www.w3.org/2000/svg">']
    axis_y = row * len(values) + 4
    for tick in ticks:
        x = NAME_WIDTH + bar_w * tick / top
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{axis_y}" stroke="#e5e7eb"/>'
                     f'<text x="{x:.1f}" y="{axis_y + 14}" font-size="11" text-anchor="middle" fill="#374151">'
                     f'{esc(number(tick))}</text>')
    parts.append(f'<line x1="{NAME_WIDTH}" x2="{NAME_WIDTH + bar_w}" y1="{axis_y}" y2="{axis_y}" stroke="#6b7280"/>'
                 f'<text x="{NAME_WIDTH + bar_w / 2:.1f}" y="{axis_y + 32}" font-size="12" text-anchor="middle" '
                 f'fill="#111">{esc(unit or label)}</text>')
    for i, (key, v) in enumerate(values.items()):
        y = i * row
        if v is None:
            parts.append(label_svg(key, 0, y + 15) +
                         f'<text x="{NAME_WIDTH}" y="{y + 15}" font-size="11" fill="#6b7280">unknown</text>')
            continue
        w = bar_w * v / top
        parts.append(label_svg(key, 0, y + 15) +
                     f'<rect x="{NAME_WIDTH}" y="{y + 4}" width="{w:.1f}" height="{row - 8}" fill="#3b82f6"/>')
        end = w
        if errors.get(key):
            lo, hi = NAME_WIDTH + bar_w * max(0.0, v - errors[key]) / top, NAME_WIDTH + bar_w * (v + errors[key]) / top
            end = hi - NAME_WIDTH
            parts.append(f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y + 11}" y2="{y + 11}" stroke="#111"/>'
                         f'<line x1="{lo:.1f}" x2="{lo:.1f}" y1="{y + 7}" y2="{y + 15}" stroke="#111"/>'
                         f'<line x1="{hi:.1f}" x2="{hi:.1f}" y1="{y + 7}" y2="{y + 15}" stroke="#111"/>')
        parts.append(f'<text x="{NAME_WIDTH + end + 6:.1f}" y="{y + 15}" font-size="11">{esc(number(v))}</text>')
    return "".join(parts) + "</svg>"


def sparkline_svg(values: list[float], label: str) -> str:
    """A small line of a per-beat series."""
    width, height = 300, 40
    top = max(values + [1e-9])
    step = width / max(len(values) - 1, 1)
    points = " ".join(f"{i * step:.1f},{height - 2 - (height - 4) * v / top:.1f}" for i, v in enumerate(values))
    return (f'<svg role="img" aria-label="{esc(label)}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
            f'<polyline fill="none" stroke="#3b82f6" stroke-width="1.5" points="{points}"/></svg>')


def transcript(events: list[BaseEvent]) -> str:
    return "".join(f'<p class="line" dir="auto">{esc(line)}</p>' for line in outputs.transcript_lines(events, of_run(events).lines))


def known(value: object) -> str:
    """A value as a cell: None (not recorded, or not measurable) as `unknown`, true and false as yes and no."""
    if isinstance(value, bool):
        return yes_no(value)
    return esc("unknown" if value is None else value)


def yes_no(value: bool | None) -> str:
    """A recorded verdict as a reader says it: yes, no, or unknown (never `True`/`False`/`None`)."""
    return {True: "yes", False: "no"}.get(value, "unknown")


def metrics_html(m: RunMetrics) -> str:
    summary = [[esc(k), known(v) + (" (simulated time)" if k == "duration_s" and m.clock == "simulated" else "")]
               for k, v in m.to_dict().items() if k not in NESTED]
    cols = ("turns", "silences", "interruptions", "reactions", "talk_share", "tokens", "cost_usd", "echo", "failures",
            "corrections", "salvaged")
    actors = [[esc(slug), *(known(getattr(a, c)) for c in cols)] for slug, a in m.actors.items()]
    return table(summary, ["metric", "value"]) + table(actors, ["actor", *cols])


def timing_html(m: RunMetrics) -> str:
    """Each beat's wall time, calls, slowest call (whose) and spread of latencies."""
    rows = [[str(t.beat), known(t.wall_s), str(t.calls), known(t.slowest_s), known(t.slowest), known(t.spread_s)]
            for t in m.beat_timing]
    return table(rows, ["beat", "wall (s)", "calls", "slowest call (s)", "slowest", "spread (s)"])


def spend_html(events: list[BaseEvent]) -> list[str]:
    """The spend per beat as the console shows it: cost, or output tokens when no cost was recorded."""
    spend = spend_per_beat(events)
    journal = [f"<p>Journal step, after the close (in no beat): {esc(number(spend.journal))}</p>"] if spend.journal else []
    if spend.unit == "cost per beat":
        return ["<h2>Cost per beat</h2>", sparkline_svg(spend.per_beat, spend.unit), *journal]
    return ["<h2>Tokens per beat</h2>", "<p>No cost recorded: output tokens per beat instead.</p>",
            sparkline_svg(spend.per_beat, spend.unit), *journal]


UNITS = {"beats": "beats per run", "goal_achieved": "share of runs whose goal was achieved",
         "success": "share of runs that closed on their own", "turns": "speeches per run",
         "silences": "silent turns per run", "interruptions": "interruptions per run", "echo": "echo (share of 3-grams)",
         "tokens": "tokens per run", "cost_usd": "estimated cost per run (USD)", "duration_s": "seconds per run"}
"""What a sweep chart's axis measures, per metric."""

CHARTED = ("goal_achieved", "success", "turns", "silences", "interruptions", "echo", "tokens", "cost_usd", "duration_s")


def unit_of(metric: str, simulated: bool) -> str:
    unit = UNITS.get(metric, metric)
    return unit + (" (simulated time)" if simulated and metric == "duration_s" else "")


def charts_html(comparison: Comparison, metrics: tuple[str, ...] = CHARTED, simulated: bool = False) -> list[str]:
    """A chart per metric: each condition's mean over its runs, ± one sd, on an axis with its unit."""
    out = []
    for metric in metrics:
        stats = comparison.table.get(metric)
        if stats and any(s.mean is not None for s in stats.values()):
            out += [f"<h3>{esc(metric)}: mean ± sd over the runs of each condition</h3>",
                    bars_svg({c: s.mean for c, s in stats.items()}, metric, {c: s.sd for c, s in stats.items()},
                             unit_of(metric, simulated))]
    return out


def duration_text(m: RunMetrics, simulated: bool) -> str:
    return f"{number(m.duration_s)} s" + (" of simulated time" if simulated else "")


def ending_html(m: RunMetrics) -> str:
    """How the run ended: its close reason, or that it never closed (a record cut off)."""
    return "<b>never closed</b>, its record stopping" if m.close_reason == "incomplete" else f"closed <b>{esc(m.close_reason)}</b>"


def cut_html(run_dir: Path, events: list) -> list[str]:
    """A paragraph saying where a record cut short ends and what plays it on (nothing for a whole one)."""
    try:
        record = read_private(run_dir)
    except (PromptdeskError, OSError, ValueError):
        record = {}
    cut = cut_of(run_dir, events, record)
    return [f"<p><b>The record is cut short.</b> {esc(cut)}.</p>"] if cut else []


def run_report(run_dir: Path, command: str | None = None) -> str:
    """The HTML of one run."""
    events = run_events(run_dir)
    m = run_metrics(events, run=run_dir.resolve().name, audit=audit_verdict(run_dir), success=recorded_success(run_dir),
                    cut=superseded_calls(run_dir))
    names = outputs.cast_names(events)
    facts = gather([(run_dir, events)])
    simulated = facts.clocks == {"simulated"}
    body = [f"<h1>{esc(facts.title)}</h1>",
            facts_html(facts, ran=run_command(events, run_dir), made=command),
            f"<p>Isolation {esc(m.isolation)}, coordinator {esc(m.coordinator)}, seed {esc(m.seed)}: "
            f"{ending_html(m)} after {m.beats} beats and {esc(duration_text(m, simulated))}; success "
            f"{yes_no(m.success)}, goal achieved {yes_no(m.goal_achieved)}.</p>",
            *cut_html(run_dir, events),
            cite_html("One run is one draw of a seeded process: cite its numbers as a description of this run "
                      f"(scene, choices, provider and seed {m.seed} as above), not as an estimate of what the "
                      "choices do; compare a sweep over several seeds for that."),
            "<h2>Timeline</h2>", timeline_svg(timeline(events), names),
            "<h2>Talk share</h2>", bars_svg({names.get(s, s): a.talk_share for s, a in m.actors.items()}, "talk share",
                                            unit="share of the run's spoken words"),
            *spend_html(events),
            "<h2>Emotional arcs</h2>", arcs_svg(m.arcs, names),
            "<h2>Who addresses whom</h2>", graph_svg(m.relationships, names),
            table(relationships_rows(m.relationships, names), ["from", "to", "speeches", "tones"]),
            "<h2>Timing per beat</h2>", timing_html(m),
            *run_section(run_dir, events),
            "<h2>Metrics</h2>", metrics_html(m), "<h2>Transcript</h2>", transcript(events),
            "<h2>Character insights: thinking and response</h2>", insights_html(events, names)]
    return page(f"{facts.title} — Promptdesk run", body)


def comparison_html(comparison: Comparison) -> str:
    """The comparison table (a metric with a significant difference highlighted), the differences
    table (each significant one highlighted and starred), the factorial table and the notes."""
    marked = {d.metric for d in comparison.significant}
    rows = [[esc(comparison.label(metric) + (" *" if metric in marked else "")),
             *(esc(s.text(metric in YES_NO)) for s in comparison.table[metric].values())]
            for metric in comparison.metrics]
    classes = ["significant" if m in marked else "" for m in comparison.metrics]
    out = table(rows, ["metric", *(esc(c) for c in comparison.columns)], classes)
    shown = shown_differences(comparison)
    if shown:
        out += "<h3>Differences between conditions</h3>" + table(
            [[esc(c) for c in difference_cells(d)] for d in shown], [esc(h) for h in difference_header(comparison)],
            ["significant" if d.significant else "" for d in shown])
    if factorial_rows(comparison):
        terms = [t for f in comparison.factorial for t in f.terms]
        out += "<h3>Factorial view: isolation × coordinator</h3>" + table(
            [[esc(c) for c in row] for row in factorial_rows(comparison)], [esc(h) for h in factorial_header(comparison)],
            ["significant" if t.significant else "" for t in terms])
    return out + "".join(f"<p>{esc(note)}</p>" for note in notes(comparison))


def sweep_report(folder: Path, command: str | None = None) -> str:
    """The HTML of a sweep: what was run, how to cite it, the comparison by condition, a chart per
    metric, and each run's outcome."""
    logs = {d.name: run_events(d) for d in sweep_runs(folder)}
    if not logs:
        raise NotARunFolder(nothing_finished(folder, "a sweep with no finished run"))
    runs = benchmark_conditions(folder, [run_metrics(events, run=name, audit=audit_verdict(folder / name),
                                                     success=recorded_success(folder / name),
                                                     cut=superseded_calls(folder / name))
                                         for name, events in logs.items()])
    comparison = compare(runs, "condition", (*METRICS, *evaluation_metrics(runs)), unit=unit_for(runs, [folder]),
                         measure=measured)
    comparison.left_out = left_out([folder])
    plan = read_plan(folder)
    facts = gather([(folder / name, events) for name, events in logs.items()], file=scenes_given(plan))
    facts.example_label = runs[0].condition() if runs else ""
    simulated = facts.clocks == {"simulated"}
    timelines = [f"<details><summary>{esc(name)}</summary>{timeline_svg(timeline(events), outputs.cast_names(events))}"
                 f"</details>" for name, events in logs.items()]
    outcomes = [[esc(r.run), esc(r.condition()), esc(r.seed), esc(r.close_reason), yes_no(r.success),
                 yes_no(r.goal_achieved), str(r.beats), esc(duration_text(r, simulated)), esc(r.audit)] for r in runs]
    planned = len(plan.combinations())
    title = facts.title if len(facts.titles) < 2 else f"{len(facts.titles):,} scenes"
    body = [f"<h1>{esc(title)}: sweep {esc(folder.name)}</h1>",
            facts_html(facts, ran=sweep_command(plan), made=command,
                       extra=[("Runs", f"{len(runs)} finished of {planned} planned")]),
            cite_html(cite(comparison)),
            "<h2>Comparison by condition</h2>", comparison_html(comparison), *sweep_section(comparison),
            "<h2>Charts</h2>",
            *charts_html(comparison, simulated=simulated),
            "<h2>Runs</h2>", table(outcomes, ["run", "condition", "seed", "close", "success", "goal", "beats", "duration",
                                              "audit"]),
            "<h2>Timelines</h2>", *timelines]
    return page(f"{title}: sweep {folder.name} — Promptdesk", body)


def report(path: Path, command: str | None = None) -> str:
    """The HTML for a run folder or a sweep folder (`command`: the command line that asked for it)."""
    if is_sweep(path):
        return sweep_report(path, command)
    if not (path / "events.jsonl").is_file():
        raise NotARunFolder(f"{path} is neither a run folder (no events.jsonl) nor a sweep folder (no sweep.yaml)")
    return run_report(path, command)
