"""The summary a resume prints says what its cost leaves out and how the goal stands, as `--batch`'s does."""

from __future__ import annotations

import asyncio

from helpers import example_scene
from loopback import LoopbackServer, Reply
from test_resume import kill_mid_beat
from promptdesk.core.cli.main import main
from test_scene_faults import remote_cast, turn


async def test_a_resumed_run_on_an_unpriced_model_says_its_cost_is_unknown(run_scene, capsys):
    line = Reply(text=turn('[TONE: calm] "Go on."', "I wait and see."))
    with LoopbackServer(line) as server:
        scene = example_scene("the-apology", limits={"max_beats": 4},
                              cast=remote_cast(server, "alice", "bob", "charlie", provider="openai-compatible",
                                               model="llama3"))
        run = await run_scene(scene, isolation="b", coordinator="C")
        kill_mid_beat(run.dir, 2)
        capsys.readouterr()
        assert await asyncio.to_thread(main, ["resume", str(run.dir), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "Scene closed: max_beats_exceeded (goal unknown) after 4 beats" in err, err
    assert "$0.0000 + unknown (no price for openai-compatible:llama3)" in err, err


def test_resume_of_a_folder_that_does_not_exist_says_so(tmp_path, capsys):
    """`promptdesk resume runs/kitchn` (a typo): it said the run's events.jsonl was missing and to "put it back
    from a copy of the folder", as if a run folder were there with a file gone."""
    from promptdesk.core.cli.main import main

    assert main(["resume", str(tmp_path / "kitchn")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"NOT_A_RUN: {tmp_path / 'kitchn'} is not a folder") and "put it back" not in err, err
