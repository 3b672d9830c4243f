"""The console over a long, busy session: its counts against the record, and what it shows as the
transcript grows (found driving a 12-actor, 140-beat scene in tmux)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tui_support import session_for

from promptdesk.tui.stage_state import StateFold


def test_a_stop_between_beats_with_an_event_queued_counts_the_beats_the_panel_shows(workspace):
    """A world event typed in the pace wait after beat 2, then `s`: the event is recorded at the close
    (numbered 3, the beat that never began) and reaches no one. The Session panel (live and replay) says
    `Beats 3`; `metadata.json`'s `totalBeats` and `transcript.txt`'s duration said 4."""
    session = session_for(workspace)

    def on_event(event) -> None:
        if event.type == "beat_end" and event.beat == 2:
            session.inject_event("A gull crashes through the skylight")
            session.stop()

    session.subscribe(on_event)
    asyncio.run(session.run())
    events = session.recorder.events
    assert [e.type for e in events[-3:]] == ["stop", "event", "close"]
    begun = sum(1 for e in events if e.type == "beat")
    fold = StateFold()
    fold.feed(events)
    run_dir = Path(session.state.run_dir)
    assert begun == 3 and fold.state.beats_played == 3
    assert json.loads((run_dir / "metadata.json").read_text())["totalBeats"] == 3
    assert "- Duration: 3 beats" in (run_dir / "transcript.txt").read_text()

