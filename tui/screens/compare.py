"""The Compare screen: the comparison table of `promptdesk compare`, the differences between
conditions (n, b − a, 95% CI, effect size, p, adjusted p, seeds for 80% power) and the notes under them, then
per run a beat timeline, talk-share bars and a cost-per-beat sparkline (tokens when no cost was
recorded).

The console's palette opens it (`open_compare`); `promptdesk.tui.app.run_compare_app` opens the console on it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Input, Label, ProgressBar, Sparkline, Static

from promptdesk.core.record import outputs
from promptdesk.core.experiments.compare import Comparison, compare, folders_of, number
from promptdesk.core.experiments.column_stat import YES_NO
from promptdesk.core.experiments.compare_text import difference_cells, difference_header, notes, shown_differences
from promptdesk.core.errors import PromptdeskError
from promptdesk.core.experiments.metrics import RunMetrics, recorded_success, run_metrics, spend_per_beat
from promptdesk.core.record.recorder import read_events
from promptdesk.core.record.seams import superseded_calls
from promptdesk.core.experiments.take_sweep import is_take_sweep, measure_take_sweep
from promptdesk.core.experiments.takes import Family, family, metrics_after
from promptdesk.tui.dialog import Dialog
from promptdesk.tui.lines import fit_name, safe
from promptdesk.tui.widgets.beat_timeline import BeatTimeline
from promptdesk.tui.widgets.key_bar import KeyBar
from promptdesk.tui.widgets.takes_view import TakesView


class RunPanel(Vertical):
    """One run: its outcome, timeline, talk share and spend per beat."""

    DEFAULT_CSS = """
    RunPanel { height: auto; border: round $primary; margin: 0 0 1 0; }
    RunPanel .share { height: 1; }
    RunPanel .share Label { width: 14; }
    RunPanel Sparkline { height: 2; margin: 0 1; }
    """

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.events = read_events(folder)
        self.metrics = measured(folder, self.events)

    def compose(self) -> ComposeResult:
        m, names = self.metrics, outputs.cast_names(self.events)
        goal = {True: "goal achieved", False: "goal not achieved"}.get(m.goal_achieved, "goal unknown")
        success = {True: "success", False: "not a success"}.get(m.success, "success unknown")
        yield Static(Text(f"{m.run} · {m.condition()} · seed {m.seed} · {m.close_reason}, {goal}, {success}, "
                          f"{m.beats} beats"), markup=False)
        yield BeatTimeline(names, self.events)
        for slug, actor in m.actors.items():
            with Horizontal(classes="share"):
                yield share_label(names.get(slug, slug), names.values())
                yield _bar(1.0, actor.talk_share)
        spend = spend_per_beat(self.events)
        yield Label(spend.unit)
        yield Sparkline(spend.per_beat or [0.0])
        if spend.journal:
            yield Label(Text(f"journal step, after the close: {number(spend.journal)}"), classes="journal")


SHARE_LABEL = 13
"""Cells of a name shown beside its talk-share bar (the label is 14 cells wide)."""


def share_label(name: str, cast: Iterable[str] = ()) -> Label:
    """A name beside its bar: a longer one is cut by cells with an ellipsis, never to read as another of
    the `cast` (`promptdesk.tui.lines.fit_name`), the whole name its tooltip (untrusted: made safe and
    shown literally)."""
    name = safe(name)
    cut = fit_name(name, SHARE_LABEL, [safe(other) for other in cast])
    label = Label(Text(cut))
    label.tooltip = Text(name)
    return label


def measured(folder: Path, events: list | None = None) -> RunMetrics:
    """A run's metrics as `promptdesk compare` has them (the recorded success; the audit not run)."""
    return run_metrics(read_events(folder) if events is None else events, run=folder.name, audit="not run",
                       success=recorded_success(folder), cut=superseded_calls(folder))


def _bar(total: float, progress: float) -> ProgressBar:
    bar = ProgressBar(total=total, show_eta=False)
    bar.progress = progress
    return bar


class CompareScreen(Screen[None]):
    """Runs (or a sweep's conditions) side by side, then each run as pictures."""

    BINDINGS = [("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    CompareScreen DataTable { height: auto; max-height: 20; margin: 0 0 1 0; }
    CompareScreen #summary { margin: 0 1 1 1; }
    """

    def __init__(self, folders: list[Path], by: str = "run") -> None:
        super().__init__()
        self.folders, self.by = folders, by
        takes = family(folders) if by == "run" else None
        runs = [measured(f) for f in folders] if takes is None else \
            [metrics_after(t, takes.branched_at) for t in takes.takes]
        if by == "condition" and folders and is_take_sweep(folders[0].parent):
            runs = measure_take_sweep(folders[0].parent, audit=False)
        self.comparison: Comparison = compare(runs, by, takes=takes)

    def compose(self) -> ComposeResult:
        takes = self.comparison.takes
        what = f"{len(self.folders)} runs by {self.by}" if takes is None else \
            f"{family_words(takes)}, measured from beat {takes.branched_at}"
        yield Static(Text(f"Promptdesk · compare · {what}"), id="title", markup=False)
        with VerticalScroll():
            if takes is not None:
                yield TakesView(takes)
            yield DataTable(zebra_stripes=True, cursor_type="row", id="comparison")
            if shown_differences(self.comparison):
                yield DataTable(zebra_stripes=True, cursor_type="row", id="differences")
            yield Static(Text("\n".join(notes(self.comparison))), id="summary", markup=False)
            for folder in self.folders:
                yield RunPanel(folder)
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one("#comparison", DataTable)
        table.add_columns("metric", *(Text(c) for c in self.comparison.columns))
        marked = {d.metric for d in self.comparison.significant}
        for metric in self.comparison.metrics:
            table.add_row(Text(metric + (" *" if metric in marked else ""), style="bold" if metric in marked else ""),
                          *(Text(s.text(metric in YES_NO)) for s in self.comparison.table[metric].values()))
        shown = shown_differences(self.comparison)
        if shown:
            differences = self.query_one("#differences", DataTable)
            differences.add_columns(*(Text(h) for h in difference_header(self.comparison)))
            for d in shown:
                differences.add_row(*(Text(c, style="bold" if d.significant else "") for c in difference_cells(d)))


def family_words(takes: Family) -> str:
    """How many runs are compared and how many of them are takes: `a run and 2 takes of it`."""
    taken = sum(1 for take in takes.takes if take.parent is not None)
    plural = "s" if taken != 1 else ""
    if taken == len(takes.takes) - 1:
        return f"a run and {taken} take{plural} of it"
    return f"{len(takes.takes)} runs, {taken} of them take{plural}"


class ComparePrompt(Dialog[tuple[list[Path], str] | None]):
    """Asks for run folders (or one sweep folder) to compare; says what is wrong with a bad path."""

    DEFAULT_CSS = """
    ComparePrompt { align: center middle; }
    ComparePrompt > Vertical { width: 80; max-width: 95%; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    ComparePrompt #problem { color: $error; }
    ComparePrompt Label { width: 1fr; }
    """
    BINDINGS = [("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Compare: run folders, or one sweep folder (separated by spaces)")
            yield Input(placeholder="sweeps/apology   or   runs/a runs/b", id="paths")
            yield Static("", id="problem", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        """Dismiss with the folders and grouping, or show the problem and keep asking."""
        paths = [Path(p) for p in message.value.split()]
        if not paths:
            return
        try:
            self.dismiss(folders_of(paths))
        except PromptdeskError as exc:
            self.query_one("#problem", Static).update(Text(str(exc)))

    def action_cancel(self) -> None:
        self.dismiss(None)


def open_compare(app: App) -> None:
    """The palette's "Compare runs": ask for folders, then open the Compare screen on them."""
    def opened(answer: tuple[list[Path], str] | None) -> None:
        if answer is not None:
            app.push_screen(CompareScreen(*answer))
    app.push_screen(ComparePrompt(), opened)
