"""The wizard's step bar: where the operator is among the steps, done ones plain, later ones dim."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


class StepBar(Widget):
    """`1 Scene › 2 Cast › …` with the current step highlighted (`1 › 2 Cast › 3 …` when narrow)."""

    DEFAULT_CSS = """
    StepBar { height: 1; padding: 0 1; }
    """

    current: reactive[int] = reactive(0)
    """The index of the step being answered."""

    def __init__(self, labels: tuple[str, ...], **kwargs) -> None:
        super().__init__(**kwargs)
        self.labels = labels

    def render(self) -> Text:
        """Every step by number and name; in a terminal too narrow for that, the current step's name only."""
        named = sum(len(label) + 4 for label in self.labels) + len(self.labels) - 1 <= self.content_size.width
        bar = Text(no_wrap=True, overflow="ellipsis")
        for i, label in enumerate(self.labels):
            style = Style(bold=True, reverse=True) if i == self.current else Style(dim=i > self.current)
            bar.append(f" {i + 1} {label} " if named or i == self.current else f" {i + 1} ", style)
            if i < len(self.labels) - 1:
                bar.append("›", Style(dim=True))
        return bar
