"""The terminal closed under a running scene (SIGHUP): the run folder is closed as `q` would close it. It
was left without its close and derived files (the default action of SIGHUP ended the console mid-beat),
to be found only by `promptdesk resume`."""

from __future__ import annotations

import json
import time
from pathlib import Path

from test_tui_tmux import DEADLINE_S, Terminal, terminal, workspace  # noqa: F401  (fixture)


def test_closing_the_terminal_mid_beat_closes_the_run_folder(tmp_path: Path, terminal: Terminal):
    work = workspace(tmp_path, "the-apology.yaml", "[2000, 3000]")
    terminal.run("scenes/the-apology.yaml --isolation b --coordinator C --seed 7 --journals none --out runs/hung", work)
    terminal.wait_for(r"✓ The Apology")
    for step in (r"Every character was found", r"Choice 1 of 2", r"Choice 2 of 2", r"Base URL", r"Starting writes"):
        terminal.keys("C-n")
        terminal.wait_for(step)
    terminal.keys("C-n")
    terminal.wait_for(r"live ·")
    terminal.wait_for(r"Beat 1")
    terminal.tmux("kill-server")
    run = work / "runs" / "hung"
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end and not (run / "metadata.json").exists():
        time.sleep(0.05)
    records = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    assert records[-1]["type"] == "close" and records[-1]["reason"] == "stop", records[-1]
    assert (run / "transcript.md").is_file() and json.loads((run / "metadata.json").read_text())["reason"] == "stop"


async def test_the_console_puts_back_the_signal_handlers_it_replaced():
    """While it runs, SIGTERM and SIGHUP are the console's (they close the run folders); once it has
    closed, the process's own handlers are back (a test runner's, an embedding program's)."""
    import signal

    from promptdesk.tui.app import create_app
    from promptdesk.tui.scripted import ScriptedSession

    def own(*_):
        return None

    before = {sig: signal.signal(sig, own) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        app = create_app(session=ScriptedSession({"alice": "Alice"}))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert signal.getsignal(signal.SIGTERM) is not own
        assert signal.getsignal(signal.SIGTERM) is own and signal.getsignal(signal.SIGHUP) is own
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
