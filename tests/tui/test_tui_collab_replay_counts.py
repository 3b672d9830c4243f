"""A collaboration's replay counts each participant's replies in the Session panel, as the live stage
does from the session (it counted only `speak` events, so every collaboration replayed with 0 turns)."""

from __future__ import annotations

import json

from promptdesk.core.record.recorder import read_events
from promptdesk.tui.stage_state import StateFold
from promptdesk.tui.widgets.state_panel import render_state
from helpers import run_session
from test_collaborate import collab_scene


async def test_a_replayed_collaboration_counts_the_replies_of_each_participant(tmp_path):
    run = await run_session(tmp_path, collab_scene(goal="Translate a recipe for borscht into Spanish", max_rounds=4),
                            isolation="a", coordinator="C")
    meta = json.loads((run.dir / "metadata.json").read_text())
    fold = StateFold(str(run.dir))
    fold.feed(read_events(run.dir))
    state = fold.snapshot()
    assert dict(state.turns) == {slug: facts["turns"] for slug, facts in meta["actors"].items() if facts.get("turns")}
    assert sum(state.turns.values()) == meta["rounds"] > 0
    panel = render_state(state, 40).plain
    assert f"Claude             {state.turns['claude']:>3}" in panel
