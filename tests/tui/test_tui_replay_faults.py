"""Replay of a damaged run folder: a torn or undecodable line of `events.jsonl` is skipped with a
warning on screen, and everything readable plays back as usual."""

from __future__ import annotations

import shutil
from pathlib import Path

from promptdesk.tui.app import create_app
from promptdesk.tui.widgets.transcript import Transcript

FIXTURE = Path(__file__).parent / "fixtures" / "replay-run"


async def test_replay_skips_unreadable_lines_and_says_so(tmp_path):
    run = shutil.copytree(FIXTURE, tmp_path / "run")
    log = run / "events.jsonl"
    lines = log.read_bytes().splitlines()
    damaged = lines[:3] + [b'{"t": 0.1, "from": "bob", "text": "caf\xe9 \xff broken"}'] + lines[3:]
    log.write_bytes(b"\n".join(damaged) + b'\n{"t": 99, "from": "alice", "type": "sp')
    app = create_app(replay=run)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert len(screen.skipped) == 2 and "line 4" in screen.skipped[0] and "line 27" in screen.skipped[1]
        assert any("2 unreadable line(s) of events.jsonl skipped" in n.message for n in app._notifications)
        await pilot.press("end")
        await pilot.pause()
        speech = [line for line in screen.query_one(Transcript).plain_lines() if line.startswith(("Alice", "Bob", "Charlie"))]
        assert len(speech) == 5 and screen.playback.done
