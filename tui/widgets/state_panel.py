"""The session-state panel: format, the two choices, beat of max, turns (and each actor's current
tone), cost, time, status."""

from __future__ import annotations

import re
import textwrap

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from promptdesk.core.engine.suggestions import REPEATED
from promptdesk.tui.formats import registry
from promptdesk.tui.formats.base import Row
from promptdesk.tui.lines import fit_name, safe, shown_path
from promptdesk.tui.snapshot import StageState

ISOLATION_SHORT = {"a": "(a) fresh call/turn", "b": "(b) thread per actor"}
ROLE_SHORT = {"A": "A — judge + notes", "B": "B — LLM judge", "C": "C — pure code"}
LABEL = Style(dim=True)


class StatePanel(VerticalScroll):
    """A read-only summary of the session, redrawn from a `StageState` snapshot. It scrolls: a
    crowd's turns (a row per actor) run past the bottom of the panel."""

    DEFAULT_CSS = """
    StatePanel { width: 36; height: 1fr; border: round $primary; padding: 0 0 0 1; scrollbar-size-vertical: 1; }
    StatePanel > Static { height: auto; }
    """

    can_focus = False
    """Scrolled with the mouse wheel; the keys stay with the transcript and the panes."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.snapshot = StageState()
        """The state last shown."""
        self._rows = 0

    def compose(self) -> ComposeResult:
        yield Static(markup=False)

    def on_mount(self) -> None:
        self.border_title = "Session"

    def show(self, state: StageState) -> None:
        """Redraw from a snapshot (laid out again only when its number of lines changed)."""
        self.snapshot = state
        text = render_state(state, self.content_region.width)
        rows = text.plain.count("\n")
        self.query_one(Static).update(text, layout=rows != self._rows)
        self._rows = rows

    def on_resize(self) -> None:
        """The run folder's rows are broken for the width: break them again."""
        self.show(self.snapshot)


def _row(text: Text, label: str, value: str, style: Style | str = "") -> None:
    text.append(f"{label:<10}", LABEL)
    text.append(f"{value}\n", style)


def _rows(text: Text, rows: list[Row]) -> None:
    for row in rows:
        _row(text, row.label, row.value, row.style)


def path_rows(path: str, width: int) -> list[str]:
    """A path in rows of at most `width` cells, broken after a `/` (or, inside a name longer than a row,
    after a `-`), so that no name is cut at an arbitrary letter unless it has no such place at all."""
    pieces = [p for p in re.split(r"(?<=/)", path) if p]
    rows, row = [], ""
    for piece in pieces:
        parts = [piece] if len(piece) <= width else [p for p in re.split(r"(?<=-)", piece) if p]
        for part in parts:
            if row and len(row) + len(part) > width:
                rows.append(row)
                row = ""
            while len(part) > width:
                rows.append(part[:width])
                part = part[width:]
            row += part
    return rows + [row] if row else rows


def cells(text: str, most: int) -> str:
    """`text` cut to at most `most` terminal cells (a wide character counts two; none is split)."""
    return text if cell_len(text) <= most else set_cell_size(text, most).rstrip()


def shortened(text: str, most: int) -> str:
    """`text` at most `most` characters long, cut after a word with `…` when it is longer."""
    if len(text) <= most:
        return text
    cut = text[:most - 1].rsplit(" ", 1)[0] if " " in text[:most - 1] else text[:most - 1]
    return cut.rstrip(" ,;:.") + "…"


def render_state(state: StageState, width: int = 0) -> Text:
    """The panel's text (plain `Text`, no markup; names made safe). The format's console side gives
    its Format label, its progress row, its own rows and how a close reads."""
    fmt = registry.of(state)
    text = Text(no_wrap=False, overflow="ellipsis")
    _row(text, "Format", fmt.format_label(state))
    _row(text, "Isolation", ISOLATION_SHORT.get(state.isolation, state.isolation))
    _row(text, "Coord", ROLE_SHORT.get(state.coordinator, state.coordinator))
    label, value, _ = fmt.progress_row(state)
    _row(text, label, value, "bold")
    _rows(text, fmt.rows(state))
    _row(text, "Status", state.status, "bold reverse" if state.status == "paused" else "bold")
    if state.waiting:
        _row(text, "Waiting", state.waiting, "bold reverse")
    if state.slow:
        text.append("Waiting on\n", LABEL)
        names = {slug: safe(state.cast.get(slug, slug)) for slug in state.slow}
        room = max(10, min(max(map(cell_len, names.values())), (width or 36) - 3 - len("waiting 999 s")))
        for slug, seconds in state.slow.items():
            name = fit_name(names[slug], room, [safe(name) for name in state.cast.values()])
            text.append(f"  {set_cell_size(name, room)} waiting {seconds:.0f} s\n", "bold")
            if slug in (state.retrying or {}):
                rows = textwrap.wrap(safe(state.retrying[slug]), max(16, width - 4) if width > 4 else 60)
                shown = rows[:1] + ([shortened(" ".join(rows[1:]), max(16, width - 4) if width > 4 else 60)] if rows[1:] else [])
                text.append("".join(f"    {row}\n" for row in shown), Style(italic=True))
    _row(text, "Elapsed", f"{state.elapsed_s:.1f} s")
    _row(text, "Pace", f"≥ {state.pace_s:g} s/beat" if state.pace_s else "off")
    unknown = " + unknown" if state.unknown_usage else ""
    _row(text, "Tokens", f"{state.tokens:,}{unknown}")
    _row(text, "Cost", f"${state.cost_usd:.4f}{unknown or (' + unknown' if state.unpriced else '')}")
    if fmt.counts_silences:
        _row(text, "Silent", f"{state.silent_streak} beat{'s' if state.silent_streak != 1 else ''}")
    if state.judge_fallbacks:
        _row(text, "Fallback", f"judge → C rules ×{state.judge_fallbacks}", "bold reverse")
    if state.suggestion and state.status in ("running", "paused"):
        _row(text, "Suggests", f"{shortened(safe(state.suggestion), 40)} (y: inject)", "bold")
    elif state.suggestion:
        _row(text, "Suggested", f"{shortened(safe(state.suggestion), 40)} (never injected)")
    elif state.withheld == REPEATED:
        _row(text, "Suggests", "withheld: a repeat of an earlier one", "bold reverse")
    elif state.withheld:
        _row(text, "Suggests", "withheld: it carried private words", "bold reverse")
    _rows(text, fmt.closed_rows(state))
    heading, counts = fmt.turn_counts(state)
    text.append(f"{heading}\n", LABEL)
    everyone = [safe(name) for name in state.cast.values()]
    for slug, name in state.cast.items():
        name = fit_name(safe(name), 18, everyone)
        text.append(f"  {set_cell_size(name, 18)} {counts.get(slug, 0):>3}\n")
        if slug in state.tones:
            text.append(f"    tone: {cells(safe(state.tones[slug]), 22)}\n", Style(italic=True))
    if state.run_dir:
        text.append("Run folder\n", LABEL)
        where = safe(shown_path(state.run_dir))
        rows = path_rows(where, width - 2) if width > 2 else [where]
        text.append("\n".join(f"  {row}" for row in rows), Style(dim=True))
    return text
