"""Takes side by side (the Compare screen, when the runs are takes of one another): the tree of takes,
then a table with a row per beat from the branch beat and a column per take, each take's change marked
(», highlighted) and the beat where the takes diverge flagged (`promptdesk.core.experiments.takes`)."""

from __future__ import annotations

import textwrap

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from promptdesk.core.experiments.takes import Family, by_beat

COLUMN = 34
"""The width of a take's column, in cells (lines are wrapped to it)."""
CHANGE = Style(bold=True, color="black", bgcolor="#fde68a")


def cell(lines: list[tuple[str, bool]], width: int = COLUMN) -> Text:
    """One take's lines of one beat, wrapped to the column; a change highlighted after `» `."""
    text = Text()
    for line, change in lines:
        for piece in textwrap.wrap(("» " if change else "") + line, width) or [""]:
            if text:
                text.append("\n")
            text.append(piece, CHANGE if change else None)
    return text or Text("—", style="dim")


class TakesView(Vertical):
    """The takes of one scene, aligned by beat from where they branched."""

    DEFAULT_CSS = """
    TakesView { height: auto; border: round $accent; margin: 0 0 1 0; }
    TakesView #takes-beats { height: auto; max-height: 40; }
    """

    def __init__(self, takes: Family) -> None:
        super().__init__()
        self.takes = takes
        self.border_title = f"Takes from beat {takes.branched_at}"

    def compose(self) -> ComposeResult:
        yield Static(Text("\n".join(self.takes.tree_lines())), id="takes-tree", markup=False)
        yield DataTable(zebra_stripes=True, show_cursor=False, id="takes-beats")

    def on_mount(self) -> None:
        table = self.query_one("#takes-beats", DataTable)
        table.add_column("beat", width=10)
        for take in self.takes.takes:
            table.add_column(Text(take.folder.name), width=COLUMN)
        columns = [by_beat(t, self.takes.branched_at) for t in self.takes.takes]
        last = max((max(c, default=self.takes.branched_at) for c in columns), default=self.takes.branched_at)
        for beat in range(self.takes.branched_at, last + 1):
            diverges = beat == self.takes.diverges_at
            label = Text(f"{beat}" + (" ≠" if diverges else ""), style="bold red" if diverges else "")
            table.add_row(label, *(cell(c.get(beat, [])) for c in columns), height=None, key=str(beat))
