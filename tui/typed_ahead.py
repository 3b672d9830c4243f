"""Keys typed ahead of a dialog's answer, handed on in the order they were typed.

A terminal sends a burst (typed ahead, pasted) faster than a dialog closes: the keys after the
`enter` that sends a world event reach the dialog's field, which is closing. `LineInput` holds them
and, once the dialog has answered, hands them here. They are then delivered one at a time, each as
the app would have delivered it had it come after the dialog was gone: priority bindings first, then
the focused field (typed there, in order), else the bindings of the focused widget, its screen and the
app (a stage key such as `e` opens its dialog at once, so the keys after it find that dialog). A key
for a dialog whose field has not taken the focus yet is held by the dialog until it has.
"""

from __future__ import annotations

from collections import deque

from textual import events
from textual.app import App
from textual.widgets import Input

from promptdesk.tui.dialog import Dialog

QUEUE = "_promptdesk_typed_ahead"


def hand_on(app: App, keys: list[events.Key]) -> None:
    """Deliver `keys` after every key handed on before them (one delivery runs at a time)."""
    queue: deque[events.Key] | None = getattr(app, QUEUE, None)
    if queue is not None:
        queue.extend(keys)
        return
    queue = deque(keys)
    setattr(app, QUEUE, queue)
    app.call_later(_drain, app, queue)


async def _drain(app: App, queue: deque[events.Key]) -> None:
    try:
        while queue:
            await deliver(app, queue.popleft())
    finally:
        setattr(app, QUEUE, None)


async def deliver(app: App, key: events.Key) -> None:
    """One key, as the app delivers a key it reads, with its binding acted on before the next."""
    if await app._check_bindings(key.key, priority=True):
        return
    screen, focused = app.screen, app.focused
    if isinstance(screen, Dialog) and screen.holds(key):
        return
    if isinstance(focused, Input):
        focused._forward_event(key)
        return
    if await app._check_bindings(key.key):
        return
    (focused or screen)._forward_event(key)

