"""A one-line input that takes a burst of keys in the order they came.

Textual's `Input` types a character as soon as the key reaches it, but runs its editing keys
(`backspace`, `ctrl+u`, `left`, ...) and `enter` through bindings, which act only once the key has
bubbled up to the app. Keys a terminal sends together (typed ahead, a burst) are then applied out
of order: "abc", `backspace`, "d" gave "abd"... minus the "d" ("ab"), and the text submitted by an
`enter` held the keys typed after it ("Rain" then "Hail" sent as "RainHail").

`LineInput` runs its own editing keys where the characters are typed, in order, and notes the text
an `enter` submits when that `enter` arrives. `enter` itself still goes through its binding, so that a
key before it that acts elsewhere (a `tab` that moves the focus) keeps its place; what the field
noted for an `enter` that went elsewhere is forgotten when the focus leaves.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class LineInput(Input):
    """An `Input` whose editing keys and `enter` act in the order the keys came."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._entered: list[str] = []

    async def _on_key(self, event: events.Key) -> None:
        """Note the text an `enter` submits; run an editing key here, in order (Textual calls `Input`'s
        own handler, which types characters, after this one)."""
        if event.key == "enter":
            self._entered.append(self.value)
            return
        if event.is_printable:
            return
        bindings = self._bindings.key_to_bindings.get(event.key)
        if bindings:
            event.stop()
            event.prevent_default()
            await self.run_action(bindings[0].action)

    def _on_blur(self, event: events.Blur) -> None:
        """The focus moved away: the `enter`s noted went elsewhere."""
        self._entered.clear()

    async def action_submit(self) -> None:
        value = self._entered.pop(0) if self._entered else self.value
        validation = self.validate(value) if "submitted" in self.validate_on else None
        self.post_message(self.Submitted(self, value, validation))
