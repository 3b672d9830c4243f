"""A yes/no question, answered with a key or a button; dismisses with a bool."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Static

from promptdesk.tui.dialog import Dialog


class ConfirmModal(Dialog[bool]):
    """Asks before doing something that cannot be undone (quitting while a scene is running)."""

    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Vertical { width: 64; max-width: 95%; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
    ConfirmModal #question { width: 1fr; height: auto; }
    ConfirmModal Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmModal Button { width: auto; margin-left: 1; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Yes, go ahead"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no", tooltip="No, go back"),
        Binding("left", "app.focus_previous", "Previous button", id="confirm.left", show=False,
                tooltip="Move to the button on the left"),
        Binding("right", "app.focus_next", "Next button", id="confirm.right", show=False,
                tooltip="Move to the button on the right"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content(self.question), id="question")
            with Horizontal():
                yield Button(Content(f"{self.yes} (y)"), variant="warning", id="yes")
                yield Button(Content(f"{self.no} (n)"), id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        """Yes or No by button."""
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """Dismiss with the answer."""
        self.dismiss(yes)
