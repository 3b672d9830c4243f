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

In a dialog, the keys that come after an `enter` (typed ahead, a burst) wait until that `enter` has
been answered: if it closed the dialog they are handed on (`typed_ahead`), so they act on the screen
below (`e`, text, `enter`, `e`, text, `enter` sends two world events); if the dialog stayed open (a
blank line), they are typed here, in order.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class LineInput(Input):
    """An `Input` whose editing keys and `enter` act in the order the keys came."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._entered: list[str] = []
        self._held: list[events.Key] = []

    def _answered(self) -> bool | None:
        """Whether this field's dialog has answered (None outside a dialog)."""
        from promptdesk.tui.dialog import Dialog

        return self.screen._answered if isinstance(self.screen, Dialog) else None

    async def _on_key(self, event: events.Key) -> None:
        """Note the text an `enter` submits; run an editing key here, in order (Textual calls `Input`'s
        own handler, which types characters, after this one). In a dialog, a key after an `enter`
        not yet answered waits for the answer, and a key reaching a dialog already answered goes on."""
        answered = self._answered()
        if answered is not None and (answered or self._entered or self._held):
            event.stop()
            event.prevent_default()
            self._held.append(events.Key(event.key, event.character))
            if answered:
                self.pass_on()
            return
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
        if self._held:
            self.call_after_refresh(self._type_held)

    def pass_on(self) -> None:
        """The dialog has answered: the keys held here go on, in order, to the screen below."""
        from promptdesk.tui.typed_ahead import hand_on

        held, self._held = self._held, []
        if held:
            hand_on(self.app, held)

    def _type_held(self) -> None:
        """The `enter` was answered and the dialog stayed open: the keys held are this field's, in order."""
        if self._answered() or not self._held:
            return
        held, self._held = self._held, []
        for key in held:
            self._forward_event(key)
