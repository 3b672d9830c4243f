"""The HTML pages of takes, self-contained and inert as every report (`promptdesk.core.experiments.report`):

- `promptdesk report PARENT TAKE... --html FILE`: what was run, the tree of takes, the takes side by
  side from the beat they branched at, the whole of every beat (`beat_lines`), and the comparison of
  what follows that beat (`promptdesk.core.experiments.takes`);
- `promptdesk report SWEEP_OF_TAKES --html FILE`: a sweep of takes (`promptdesk.core.experiments.take_sweep`), the
  `retake` and `change` conditions compared with their statistics, a chart per metric and each take.

A beat is shown whole: speech, reactions, silences with their stage business, world events, the notes
that reached the actors and each actor's private thinking (folded, marked private). Who a note or an
event came from is read from the event's own fields, never its wording: the director's change the
take was made with (its `branch`), the director's other notes and events (`from: operator`), the
coordinator's notes (`from: coordinator`: winding down, a nudge) and the events it suggested
(`suggested_by: coordinator`). Columns wrap their lines and the side-by-side table scrolls inside
the page, so five takes fit a 1,400-pixel window."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import NamedTuple

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.experiments.compare import compare, left_out, nothing_finished
from promptdesk.core.experiments.compare_text import cite, takes_notes
from promptdesk.core.experiments.metrics import NotARunFolder, audit_verdict
from promptdesk.core.experiments.report import charts_html, comparison_html, esc, page, table, yes_no
from promptdesk.core.experiments.report_header import cite_html, facts_html, gather, run_command, take_sweep_command
from promptdesk.core.experiments.take_sweep import measure_take_sweep, read_take_plan, take_sweep_runs
from promptdesk.core.experiments.takes import Family, Take, after, change_events, distinct, family, metrics_after, seed_of
from promptdesk.core.formats.registry import of_run
from promptdesk.core.protocol.lines import folded, speech_line, world_event_line
from promptdesk.core.record import outputs
from promptdesk.core.record.events import COORDINATOR, OPERATOR, BaseEvent, SpeakEvent, ThinkEvent
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.takes import describe_change

STYLE = """<style>body{max-width:min(96vw,110rem)}
.side{overflow-x:auto;max-width:100%;border:1px solid #e5e7eb}
table.takes{table-layout:fixed;width:max(100%,calc(6rem + var(--takes) * 15rem))}
table.takes td,table.takes th{text-align:left;vertical-align:top;overflow-wrap:anywhere}
table.takes col.beat{width:6rem}.takes p{margin:.15rem 0}
.change{background:#fde68a;font-weight:600}.silence,.stage{color:#6b7280;font-style:italic}
.reaction{color:#047857}.world{color:#7c3aed}.director{color:#b45309;font-weight:600}
.coordinator{color:#0369a1}.system{color:#b91c1c}.thinking summary{color:#6b7280;font-size:.9em}
tr.diverges td:first-child{border-left:4px solid #ef4444}pre.tree{background:#f6f6f6;padding:.5rem;overflow-x:auto}
.key span{margin-right:1rem}</style>"""

KEY = ('<p class="key"><span class="speech">speech</span><span class="reaction">reaction</span>'
       '<span class="silence">silence (stage business)</span><span class="world">world event</span>'
       '<span class="change">» the director\'s change this take was made with</span>'
       '<span class="director">director\'s note or event</span><span class="coordinator">coordinator\'s note</span>'
       '<span class="thinking">▸ thinking (private: never sent to anyone)</span></p>')


class Line(NamedTuple):
    """One thing that happened in a beat: its CSS class and its text (thinking: whose and what)."""

    kind: str
    text: str
    who: str = ""


def _event_line(event: BaseEvent, names: dict[str, str], change: bool) -> Line:
    """A world event or a note, told apart by where it came from."""
    extra = event.model_extra or {}
    if event.type == "event":
        suggested = " (suggested by the coordinator)" if extra.get("suggested_by") == COORDINATOR else ""
        who = "The director's change: " if change else ("" if event.from_ != OPERATOR else "The director: ")
        return Line("change" if change else "world" if event.from_ != OPERATOR else "director",
                    f"{who}{world_event_line(event.text)}{suggested}")
    to = names.get(event.target, event.target) if event.target else "everyone"
    if change:
        return Line("change", f"The director's change: note to {to}: {folded(event.text)}")
    if event.from_ == COORDINATOR:
        why = f" ({event.reason})" if getattr(event, "reason", None) else ""
        return Line("coordinator", f"Coordinator's note to {to}{why}: {folded(event.text)}")
    return Line("director", f"Director's note to {to}: {folded(event.text)}")


def beat_lines(take: Take, beat: int) -> dict[int, list[Line]]:
    """Per beat from `beat` on, everything that happened in it (see the module docstring)."""
    own = of_run(take.events).lines
    names = outputs.cast_names(take.events)
    marked = {id(take.events[i]) for i in change_events(take)}
    rows: dict[int, list[Line]] = {}
    current = beat
    for event in after(take.events, beat):
        current = event.beat if event.beat is not None else current
        name = names.get(event.from_, event.from_)
        if isinstance(event, ThinkEvent):
            line = Line("thinking", event.text, name)
        elif isinstance(event, SpeakEvent) and event.action == "silent":
            business = f": *{folded(event.nonverbal)}*" if event.nonverbal else ""
            line = Line("silence", f"{name} is silent{business}")
        elif isinstance(event, SpeakEvent):
            line = Line("reaction" if event.action == "react" else "speech", speech_line(name, event))
        elif event.type in ("event", "note"):
            line = _event_line(event, names, id(event) in marked)
        elif event.type == "close":
            line = Line("system", f"[SCENE END: {event.reason}]")
        elif outputs.is_public(event, own):
            line = Line("system", outputs.transcript_lines([*take.events[:1], event], own, notes=True)[-1])
        else:
            continue
        rows.setdefault(current, []).append(line)
    return rows


def cell(lines: list[Line]) -> str:
    """One take's beat as HTML: its lines, each actor's thinking folded and marked private."""
    out = []
    for line in lines:
        if line.kind == "thinking":
            out.append(f'<details class="thinking"><summary>{esc(line.who)} thinks (private)</summary>'
                       f'<p class="private" dir="auto">{esc(line.text)}</p></details>')
        else:
            out.append(f'<p class="{line.kind}" dir="auto">{"» " if line.kind == "change" else ""}{esc(line.text)}</p>')
    return "".join(out) or "—"


def aligned(takes: Family) -> str:
    """A row per beat from the branch beat, a column per take, the beat where the takes diverge flagged."""
    columns = [beat_lines(t, takes.branched_at) for t in takes.takes]
    last = max((max(c, default=takes.branched_at) for c in columns), default=takes.branched_at)
    head = "".join(f"<th>{esc(t.folder.name)}</th>" for t in takes.takes)
    rows = []
    for beat in range(takes.branched_at, last + 1):
        flag = ' class="diverges"' if beat == takes.diverges_at else ""
        tag = " (diverges)" if beat == takes.diverges_at else ""
        rows.append(f"<tr{flag}><td>beat {beat}{tag}</td>" + "".join(f"<td>{cell(c.get(beat, []))}</td>" for c in columns)
                    + "</tr>")
    cols = '<colgroup><col class="beat">' + "<col>" * len(takes.takes) + "</colgroup>"
    return (f'<div class="side"><table class="takes" style="--takes:{len(takes.takes)}">{cols}<thead><tr><th>beat</th>'
            f'{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def takes_report(folders: list[Path], command: str | None = None) -> str:
    """The HTML of runs that are takes of one another; `InvalidConfig` when they are not."""
    takes = family(folders)
    if takes is None:
        raise InvalidConfig("several run folders make one report only when they are takes of one another "
                            "(promptdesk branch); put other runs side by side with promptdesk compare")
    runs = distinct([metrics_after(t, takes.branched_at, audit_verdict(t.folder)) for t in takes.takes],
                    [t.folder for t in takes.takes])
    comparison = compare(runs, "run", takes=takes)
    facts = gather([(t.folder, t.events) for t in takes.takes])
    facts.seeds = list(dict.fromkeys(s for s in map(seed_of, takes.takes) if s is not None))
    body = [STYLE, f"<h1>Takes of {esc(facts.title)}</h1>",
            facts_html(facts, ran=played_again(takes), made=command),
            cite_html(cite(comparison)), *(f"<p>{esc(note)}</p>" for note in takes_notes(takes)),
            "<h2>Tree of takes</h2>", f'<pre class="tree">{esc(chr(10).join(takes.tree_lines()))}</pre>',
            f"<h2>Side by side from beat {takes.branched_at}</h2>", KEY, aligned(takes),
            f"<h2>Metrics from beat {takes.branched_at}</h2>", comparison_html(comparison)]
    return page(f"Takes of {facts.title} — Promptdesk", body)


def played_again(takes: Family) -> list[str]:
    """Each run's command, parents first, each into its own folder's name (`--out`): a take's command names
    its parent by that name, so the commands in this order make the family again, takes of takes too."""
    return list(dict.fromkeys(f"{run_command(t.events, t.folder)} --out {shlex.quote(t.folder.name)}"
                              for _, t, _ in takes.tree()))


def take_sweep_report(folder: Path, command: str | None = None) -> str:
    """The HTML of a sweep of takes: what the change does over the seeds, from the branch beat on."""
    plan = read_take_plan(folder)
    runs = measure_take_sweep(folder)
    if not runs:
        raise NotARunFolder(nothing_finished(folder, "a sweep of takes with no finished take"))
    comparison = compare(runs, "condition")
    comparison.left_out = left_out([folder])
    change = describe_change({"event": plan.event, "note": plan.note, "to": plan.to})
    folders = take_sweep_runs(folder)[0]
    facts = gather([(f, read_events(f)) for f in folders])
    simulated = facts.clocks == {"simulated"}
    outcomes = [[esc(r.run), esc(r.condition()), esc(r.seed), esc(r.close_reason), yes_no(r.success), str(r.beats),
                 esc(r.audit)] for r in runs]
    ran = take_sweep_command(plan)
    body = [f"<h1>Sweep of takes {esc(folder.name)}</h1>",
            facts_html(facts, ran=ran, made=command, extra=[("Takes", f"{len(runs)} finished of {2 * len(plan.seeds)}")]),
            cite_html(cite(comparison)),
            f"<p>Takes of {esc(Path(plan.parent).name)} from beat {plan.at_beat}, {len(plan.seeds)} seeds: "
            f"<b>retake</b> changes nothing but the seed, <b>change</b> adds {esc(change)}. Every metric is of beat "
            f"{plan.at_beat} on (the beats before it are the parent's, recorded once, paid once).</p>",
            "<h2>Comparison</h2>", comparison_html(comparison), "<h2>Charts</h2>",
            *charts_html(comparison, simulated=simulated),
            "<h2>Takes</h2>", table(outcomes, ["take", "condition", "seed", "close", "success", "beats", "audit"])]
    return page(f"Sweep of takes {folder.name} — Promptdesk", body)
