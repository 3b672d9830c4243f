"""The room of a stage whose format has one (a collaboration): its key, and the sessions it starts."""

from __future__ import annotations

from dataclasses import replace

from promptdesk.tui.formats.room_bar import RoomBar


class RoomControls:
    """The room's actions (mixed into `StageScreen`, whose session, format and options they use)."""

    def action_room(self) -> None:
        """Put the cursor in the room input."""
        if self.has_room:  # type: ignore[attr-defined]
            self.query_one("#room").focus()  # type: ignore[attr-defined]

    def on_room_bar_commanded(self, message: RoomBar.Commanded) -> None:
        """Start the command as a new session (its own `Session`, both choices as made here) on a new stage."""
        from promptdesk.core.casting.build import RunOptions, build_session

        room, state = self.query_one(RoomBar), self.session.state  # type: ignore[attr-defined]
        options = replace(self.options or RunOptions(), isolation=state.isolation,  # type: ignore[attr-defined]
                          coordinator=state.coordinator, out=None, max_beats=None, realtime=True)
        try:
            scene = self.format.room_scene(message.command, self.session.scene)  # type: ignore[attr-defined]
            session = build_session(scene, options)
        except Exception as exc:  # noqa: BLE001 - any failure is shown in the room, never a crash
            room.show(f"Cannot start: {exc}", error=True)
            return
        self.set_focus(None)  # type: ignore[attr-defined]
        self.app.push_screen(type(self)(session, title=scene.title or scene.name, options=options))  # type: ignore[attr-defined]
