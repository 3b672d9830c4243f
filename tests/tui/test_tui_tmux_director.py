"""The keys this round changed, once each in a real terminal (tmux), as a terminal sends them: `a` and `v`
say why they cannot act on a small scene's stage, a note says whom it is for, `-` to a pace of 0 says off,
the palette's Keys is the help and `esc` closes it, the key bar stays whole at 60x20, `←` moves to the
quit dialog's other button; in the wizard `?` in the scene path shows the keys, and after `w` the choices
the command line gave are asked again; `o` on a closed stage opens its replay at the start, each time."""

from __future__ import annotations

import re

from test_tui_tmux import Terminal, terminal, wizard_through, workspace  # noqa: F401 - the fixture is used by name


def test_stage_keys_say_why_name_the_note_say_off_and_fit_at_60x20(tmp_path, terminal: Terminal):
    work = workspace(tmp_path, "the-apology.yaml", "null")
    terminal.run("scenes/the-apology.yaml --isolation b --coordinator C --seed 7 --pace 0.5", work)
    wizard_through(terminal)
    terminal.wait_for(r"── Beat 1 ──")
    terminal.tmux("resize-window", "-x", "80", "-y", "24")
    terminal.type("p")
    terminal.wait_for(r"· paused ·")
    terminal.type("a")
    terminal.wait_for(r"Decide: not now, a scene never")
    terminal.type("v")
    terminal.wait_for(r"Panes: not now, every actor")
    terminal.type("n")
    terminal.wait_for(r"Director's note")
    terminal.type("Keep it short")
    terminal.keys("Enter")
    terminal.wait_for(r"note to everyone “Keep it short”")
    terminal.type("-")
    terminal.wait_for(r"Pace: off \(each beat starts")
    terminal.tmux("resize-window", "-x", "60", "-y", "20")
    screen = terminal.wait_for(r"(?m)^.{0,60}t Theme\s*$")
    bar = screen.splitlines()[-1]
    assert "q Quit" in bar and "r Resume" in bar, bar
    assert screen.splitlines()[0].startswith(" Promptdesk · paused · "), screen.splitlines()[0]
    terminal.keys("C-p")
    terminal.wait_for(r"Search for commands")
    terminal.type("Keys")
    terminal.wait_for(r"Every key of this screen")
    terminal.keys("Enter")
    terminal.wait_for(r"Keys · Stage")
    terminal.keys("Escape")
    terminal.wait_for(r"(?s)^(?!.*Keys · Stage)")
    terminal.type("q")
    terminal.wait_for(r"Stop and quit \(y\)")
    terminal.keys("Left")
    terminal.keys("Enter")
    terminal.wait_for(r"PROMPTDESK-EXITED-0")


def test_question_mark_in_the_scene_path_and_the_choices_asked_again_after_w(tmp_path, terminal: Terminal):
    work = workspace(tmp_path, "the-apology.yaml")
    terminal.run("--isolation b --coordinator C --seed 7 --max-beats 2 --pace 0", work)
    terminal.wait_for(r"Pick a scene")
    terminal.keys("Tab")
    terminal.type("?")
    terminal.wait_for(r"Keys · Wizard")
    terminal.wait_for(r"t +Theme +\(not now\)")  # in the path, t is typed: the help says so
    terminal.keys("Escape")
    screen = terminal.wait_for(r"(?s)^(?!.*Keys · Wizard)")
    assert "▊  ?" not in screen, "the ? was typed into the path"
    terminal.type("scenes/the-apology.yaml")
    terminal.keys("Enter")
    terminal.wait_for(r"Every character was found")
    for step in (r"Choice 1 of 2", r"Choice 2 of 2", r"Base URL", r"Starting writes notes\.md"):
        terminal.keys("C-n")
        terminal.wait_for(step)
    terminal.keys("C-n")
    terminal.wait_for(r"Scene closed \(")
    terminal.type("w")
    terminal.wait_for(r"Pick a scene")
    terminal.keys("Enter")
    terminal.wait_for(r"Every character was found")
    terminal.keys("C-n")
    screen = terminal.wait_for(r"Choice 1 of 2")
    assert "Nothing is pre-selected" in screen and "▐●▌" not in screen, screen
    assert re.search(r"Last scene: \(b\)", screen), screen
    terminal.quit()


def test_o_on_a_closed_stage_opens_its_replay_and_again_from_the_start(tmp_path, terminal: Terminal):
    """`o` on the closed stage, the replay played to its end, `escape`, and `o` as soon as the stage
    shows, twice: each time the replay opens at the run's first event (it is kept and rewound). The model takes some time, so that the run's events are not all at its first instant."""
    work = workspace(tmp_path, "the-apology.yaml", "[100, 200]")
    terminal.run("scenes/the-apology.yaml --isolation b --coordinator C --seed 7 --max-beats 2 --pace 0", work)
    wizard_through(terminal)
    terminal.wait_for(r"Scene closed \(")
    terminal.wait_for(r"o Replay")
    terminal.type("o")
    terminal.wait_for(r"replay · The Apology")
    terminal.wait_for(r"event 0 of \d+")
    terminal.keys("End")
    terminal.wait_for(r"■ end")
    terminal.keys("Escape")  # a terminal sends `escape` then `o` within its escape delay as alt+o
    terminal.wait_for(r"Promptdesk · closed ·")
    terminal.type("o")
    screen = terminal.wait_for(r"event 0 of \d+")
    assert "■ end" not in screen and "replay · The Apology" in screen
    terminal.keys("End")
    terminal.wait_for(r"■ end")
    terminal.keys("Escape")
    terminal.wait_for(r"Promptdesk · closed ·")
    terminal.type("o")
    screen = terminal.wait_for(r"event 0 of \d+")
    assert "replay · The Apology" in screen
    terminal.quit()
