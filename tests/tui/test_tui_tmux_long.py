"""A long run in a real terminal (tmux), keys as a terminal sends them: in a replay, `end` after the
transcript was scrolled up shows the end (the close), not the old view under a `▼ … end to follow`."""

from __future__ import annotations

import subprocess

from test_tui_tmux import PROMPTDESK, TERMINAL_ENV, Terminal, terminal, workspace  # noqa: F401 - the fixture is used by name


def test_end_in_a_replay_scrolled_up_shows_the_close(tmp_path, terminal: Terminal):
    work = workspace(tmp_path, "the-apology.yaml")
    subprocess.run([str(PROMPTDESK), "--batch", "scenes/the-apology.yaml", "--isolation", "b", "--coordinator", "C",
                    "--seed", "7", "--max-beats", "20", "--out", "runs/long", "--quiet"], cwd=work, check=True,
                   capture_output=True, env=TERMINAL_ENV, timeout=120)
    terminal.run("replay runs/long", work, size=(100, 30))
    terminal.wait_for(r"event 0 of \d+")
    for _ in range(8):
        terminal.type("b")
    terminal.wait_for(r"Beats +7 of 20")  # the first `b` begins beat 0
    terminal.keys("PageUp")
    terminal.wait_for(r"(?s)^(?!.*── Beat 6 ──)")
    terminal.keys("End")
    screen = terminal.wait_for(r"■ end ·")
    screen = terminal.wait_for(r"Scene closed \(")
    assert "end to follow" not in screen
    terminal.quit()
