"""A one-line input whose enter submits the text typed before it, in the order the keys came.

Textual's `Input` submits through its `enter` binding, which runs once the key has bubbled up to the
app: keys a terminal sent right after `enter` (typed ahead, a burst) have been typed into the field by
then, and the submitted text holds them too ("Rain" then "Hail" sent as "RainHail"). `LineInput`
submits at the `enter` itself, with the text as it is at that key.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class LineInput(Input):
    """An `Input` whose `enter` posts `Submitted` with the text typed before it."""

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.value))
            return
        await super()._on_key(event)
