"""Replay of a damaged run folder: a torn or undecodable line of `events.jsonl` is skipped with a
warning on screen, and everything readable plays back as usual."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tui_support import screen_text

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


EDITED_STARTS = {
    "cast as a list": {"cast": ["alice", "bob"]},
    "cast as text": {"cast": "alice"},
    "cast as a number": {"cast": 5},
    "names not text": {"cast": {"alice": ["not", "a", "name"], "bob": None, "charlie": 7}},
    "scene as text": {"scene": "the-apology"},
    "fields of the wrong kind": {"max_beats": "many", "pace_s": "slow", "isolation": ["b"], "coordinator": {"x": 1},
                                 "scene": {"title": ["T"], "format": 3, "turns": None}},
    "pace below zero": {"pace_s": -3},
}


@pytest.mark.parametrize("edit", EDITED_STARTS)
async def test_a_start_record_edited_by_hand_replays_with_what_makes_sense(tmp_path, edit):
    """A hand-edited `start` record (the cast, the scene or a choice of the wrong kind) no longer ends the
    console with a traceback: what is not of its kind is left out, a name that is not text reads as its
    slug, and the rest plays back to the close."""
    run = shutil.copytree(FIXTURE, tmp_path / "run")
    log = run / "events.jsonl"
    lines = log.read_text().splitlines()
    start = json.loads(lines[0])
    start.update(EDITED_STARTS[edit])
    log.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    app = create_app(replay=run)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        screen = app.screen
        assert screen.playback.done
        text = screen_text(app)
        assert "■ Scene closed" in text and "Traceback" not in text
        assert "['not'" not in text and "None" not in text and "of many" not in text and "≥ -3" not in text
        if edit == "names not text":
            assert "PRIVATE · alice" in text and "PRIVATE · bob" in text
    assert app.return_code in (None, 0)


async def test_at_the_end_of_a_record_that_never_closed_the_panel_says_so_not_running(tmp_path):
    """A run cut off (the process killed, the disk full) has no close: at the end of its replay nothing is
    running, so the panel says `not closed` (and the bar says the record ends there), not `running`."""
    from promptdesk.tui.widgets.state_panel import StatePanel

    run = shutil.copytree(FIXTURE, tmp_path / "run")
    log = run / "events.jsonl"
    log.write_text("\n".join(line for line in log.read_text().splitlines() if '"type": "close"' not in line) + "\n")
    app = create_app(replay=run)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        assert app.screen.query_one(StatePanel).snapshot.status == "not closed"
        assert "Status    not closed" in screen_text(app) and "■ end of the record, no close" in screen_text(app)
        await pilot.press("home")
        await pilot.pause()
        assert app.screen.query_one(StatePanel).snapshot.status == "ready"


async def test_the_replay_of_a_record_cut_short_says_where_it_ends_and_what_plays_it_on(tmp_path):
    """A run killed before its close: the replay says, once, that the record is cut short, where, and
    what plays it on, and its end reads `no close`; a whole record gets no such word."""
    run = shutil.copytree(FIXTURE, tmp_path / "run")
    log = run / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:next(i for i, line in enumerate(lines) if '"type": "close"' in line)]))
    app = create_app(replay=run)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("end")
        await pilot.pause()
        told = [n.message for n in app._notifications if "cut short" in n.message]
        assert len(told) == 1 and "without a close" in told[0] and f"promptdesk resume {run}" in told[0]
        assert "no close" in screen_text(app)
    whole = create_app(replay=shutil.copytree(FIXTURE, tmp_path / "whole"))
    async with whole.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert not any("cut short" in n.message for n in whole._notifications)
