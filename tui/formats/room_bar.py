"""The room of a collaboration: one input line where the operator starts new sessions.

A goal, `@gpt text` (a single call) or `@router collaborate gpt claude: GOAL`; what cannot be run
is explained under the input, literally, and nothing starts.
"""

from __future__ import annotations

from collections.abc import Collection

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static

from promptdesk.tui.formats.room_commands import USAGE, RoomCommand, RoomError, parse_room
from promptdesk.tui.lines import safe
from promptdesk.tui.line_input import LineInput


class RoomBar(Vertical):
    """The room input and its status line."""

    BINDINGS = [Binding("escape", "leave", "Leave the room", id="room.leave",
                        tooltip="Stop typing in the room (the stage's keys work again)")]
    DEFAULT_CSS = """
    RoomBar { height: auto; padding: 0 1; }
    RoomBar > Input { height: 3; }
    RoomBar > #room-status { height: auto; color: $text-muted; }
    RoomBar > #room-status.error { color: $error; }
    """

    class Commanded(Message):
        """The operator typed a command that can run: start a new session for it."""

        def __init__(self, command: RoomCommand) -> None:
            super().__init__()
            self.command = command
            """What to start."""

    def __init__(self, known: Collection[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.known = frozenset(known)
        """The participants that can be named with `@`."""

    def compose(self) -> ComposeResult:
        yield LineInput(placeholder="Room: a goal · @gpt text · @router collaborate gpt claude: GOAL", id="room")
        yield Static(Content(f"Room: {USAGE}."), id="room-status")

    @on(Input.Submitted, "#room")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        parsed = parse_room(event.value, self.known)
        if isinstance(parsed, RoomError):
            self.show(parsed.message, error=True)
            return
        event.input.value = ""
        self.show(f"Starting: {parsed.goal}")
        self.post_message(self.Commanded(parsed))

    def show(self, text: str, error: bool = False) -> None:
        """Say something under the input (untrusted text shown literally)."""
        status = self.query_one("#room-status", Static)
        status.set_class(error, "error")
        status.update(Content(safe(text)))

    def action_leave(self) -> None:
        """Give the keys back to the stage."""
        self.screen.set_focus(None)
