"""The session-state panel: format, the two choices, beat of max, turns, cost, time, status."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from tui.lines import safe
from tui.render import SINGLE_CALL_ANSWERED
from tui.stage_state import StageState

ISOLATION_SHORT = {"a": "(a) fresh call/turn", "b": "(b) thread per actor"}
ROLE_SHORT = {"A": "A — judge + notes", "B": "B — LLM judge", "C": "C — pure code"}
LABEL = Style(dim=True)


class StatePanel(Static):
    """A read-only summary of the session, redrawn from a `StageState` snapshot."""

    DEFAULT_CSS = """
    StatePanel { width: 36; height: 1fr; border: round $primary; padding: 0 1; overflow-y: auto; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(markup=False, **kwargs)
        self.snapshot = StageState()
        """The state last shown."""

    def on_mount(self) -> None:
        self.border_title = "Session"

    def show(self, state: StageState) -> None:
        """Redraw from a snapshot."""
        self.snapshot = state
        self.update(render_state(state), layout=False)


def _row(text: Text, label: str, value: str, style: Style | str = "") -> None:
    text.append(f"{label:<10}", LABEL)
    text.append(f"{value}\n", style)


def _beat(state: StageState) -> tuple[str, str]:
    if state.format == "collaborate":
        return "Collab", f"{state.round or 0}/{state.max_rounds or '?'}"
    if state.format == "roundtable":
        return "Round", f"{state.round or 0}" + (f" · {safe(state.phase)}" if state.phase else "")
    of = f" of {state.max_beats}" if state.max_beats else ""
    return ("Turns" if state.turns_mode == "sequential" else "Beats"), f"{state.beats_played}{of}"


def _roundtable_rows(text: Text, state: StageState) -> None:
    """Phase, consensus and conflict counts, and whether answers are blind."""
    _row(text, "Phase", safe(state.phase) if state.phase else "—")
    _row(text, "Consensus", str(state.consensus_count or 0))
    _row(text, "Conflicts", str(state.conflict_count or 0), "bold" if state.conflict_count else "")
    blind = state.blind is not False
    _row(text, "Answers", "blind (parallel)" if blind else "not blind (sequential)", "" if blind else "bold")


def render_state(state: StageState) -> Text:
    """The panel's text (plain `Text`, no markup; names made safe)."""
    text = Text(no_wrap=False, overflow="ellipsis")
    fmt = " · ".join(x for x in (state.format, state.turns_mode if state.format == "scene" else "") if x)
    _row(text, "Format", fmt)
    _row(text, "Isolation", ISOLATION_SHORT.get(state.isolation, state.isolation))
    _row(text, "Coord", ROLE_SHORT.get(state.coordinator, state.coordinator))
    label, value = _beat(state)
    _row(text, label, value, "bold")
    if state.format == "roundtable":
        _roundtable_rows(text, state)
    _row(text, "Status", state.status, "bold reverse" if state.status == "paused" else "bold")
    if state.waiting:
        _row(text, "Waiting", state.waiting, "bold reverse")
    _row(text, "Elapsed", f"{state.elapsed_s:.1f} s")
    _row(text, "Pace", f"≥ {state.pace_s:g} s/beat" if state.pace_s else "off")
    _row(text, "Tokens", f"{state.tokens:,}")
    _row(text, "Cost", f"${state.cost_usd:.4f}")
    _row(text, "Silent", f"{state.silent_streak} beat{'s' if state.silent_streak != 1 else ''}")
    if state.close_reason and state.single_call and state.close_reason in SINGLE_CALL_ANSWERED:
        _row(text, "Closed", "answered (single call)", "bold")
    elif state.close_reason:
        _row(text, "Closed", safe(state.close_reason), "bold")
        if state.goal_achieved is not None:
            _row(text, "Goal", "achieved" if state.goal_achieved else "not achieved")
    text.append("Turns\n", LABEL)
    for slug, name in state.cast.items():
        text.append(f"  {safe(name)[:18]:<18} {state.turns.get(slug, 0):>3}\n")
    if state.run_dir:
        text.append("Run folder\n", LABEL)
        text.append(f"  {safe(state.run_dir)}", Style(dim=True))
    return text
