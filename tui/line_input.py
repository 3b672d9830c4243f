"""A one-line input whose enter submits the text typed before that enter, whatever was typed after it.

Textual's `Input` types a character as soon as the key reaches it, but submits through its `enter`
binding, which runs only once the key has bubbled up to the app: keys a terminal sent right after
`enter` (typed ahead, a burst) are in the field by then, and the submitted text held them too ("Rain"
then "Hail" sent as "RainHail"). `LineInput` notes the text when the `enter` reaches it, in the order
the keys came, and submits that; the binding still decides what `enter` does (a `tab` before it that
moved the focus away sends it elsewhere, and what the field noted for it is forgotten).
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class LineInput(Input):
    """An `Input` whose `enter` submits the text as it was when that `enter` arrived."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._entered: list[str] = []

    def _on_key(self, event: events.Key) -> None:
        """Note the text an `enter` submits (Textual calls `Input`'s own handler after this one)."""
        if event.key == "enter":
            self._entered.append(self.value)

    def _on_blur(self, event: events.Blur) -> None:
        """The focus moved away: the `enter`s noted went elsewhere."""
        self._entered.clear()

    async def action_submit(self) -> None:
        value = self._entered.pop(0) if self._entered else self.value
        validation = self.validate(value) if "submitted" in self.validate_on else None
        self.post_message(self.Submitted(self, value, validation))
