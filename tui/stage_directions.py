"""The operator's directions to a running scene, from the stage: a world event, a director's note,
the coordinator's suggested world event accepted. Each is queued for the next beat and said so."""

from __future__ import annotations

from promptdesk.tui.lines import safe
from promptdesk.tui.widgets.input_modal import DirectorNote, InputModal, WorldEvent
from promptdesk.tui.widgets.queued_line import QueuedLine


class Directions:
    """The stage's direction actions (mixed into `StageScreen`, whose bridge, session and notify they use)."""

    def action_inject(self) -> None:
        """Ask for a world event."""
        self.app.push_screen(InputModal("event"), self.send_direction)

    def action_note(self) -> None:
        """Ask for a director's note."""
        self.app.push_screen(InputModal("note", self.session.state.cast), self.send_direction)

    def send_direction(self, request: WorldEvent | DirectorNote | None) -> None:
        """Queue what the dialog returned; it reaches the actors at the next beat (or is recorded at the
        close). Refused, and said so, when the scene closed while the dialog was open."""
        from promptdesk.core.engine.stage import SceneClosed

        if request is None:
            return
        event = isinstance(request, WorldEvent)
        whom = "everyone" if event or request.to is None else \
            safe(self.session.state.cast.get(request.to, request.to))
        what = "World event" if event else f"Director's note to {whom}"
        try:
            if event:
                self.bridge.inject_event(request.text)
            else:
                self.bridge.add_note(request.text, request.to)
        except (SceneClosed, ValueError) as exc:
            self.notify(f"{what} not sent: {safe(exc)}", severity="warning", markup=False, timeout=6)
            return
        paused = self.session.state.status == "paused"
        self.query_one(QueuedLine).add("event" if event else "note", request.text, paused, whom)
        self.notify(f"{what} queued, delivered after the resume" if paused else f"{what} queued for the next beat",
                    markup=False, timeout=3)

    def action_accept_suggestion(self) -> None:
        """Inject the coordinator's pending suggested world event (`suggested_events: ask`)."""
        from promptdesk.core.engine.stage import SceneClosed

        try:
            text = self.session.accept_suggestion()  # type: ignore[attr-defined]
        except (SceneClosed, ValueError, AttributeError) as exc:
            self.notify(f"No suggested event injected: {exc}", severity="warning", markup=False, timeout=6)
            return
        self.notify(f"Suggested world event queued for the next beat: {safe(text)}", markup=False, timeout=3)
        self.refresh_state()
