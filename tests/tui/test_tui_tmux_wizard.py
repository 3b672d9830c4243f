"""The wizard's keys in a real terminal (tmux, keys as a terminal sends them): a failed cast check keeps
the keys on the step shown (`q` quits, letters never reach the hidden path field), and the Next key on a
step not yet answered says why."""

from __future__ import annotations

from pathlib import Path

from test_tui_tmux import Terminal, terminal, workspace  # noqa: F401 - the fixture is used by name
from tui_support import make_workspace


def broken_cast(tmp_path: Path) -> Path:
    work = make_workspace(tmp_path / "work")
    scene = work / "scenes" / "the-apology.yaml"
    scene.write_text(scene.read_text().replace("[alice, bob, charlie]", "[alice, bob, zed]")
                     .replace("\n  charlie: |", "\n  zed: |"))
    return work


def test_after_a_failed_cast_check_q_quits_and_the_path_field_stays_clean(tmp_path, terminal: Terminal):
    work = broken_cast(tmp_path)
    terminal.run("scenes/the-apology.yaml --seed 7", work)
    terminal.wait_for(r"✓ The Apology")
    terminal.keys("C-n")
    terminal.wait_for(r"Fix the cast before going on")
    terminal.type("xy")
    terminal.keys("Escape")
    screen = terminal.wait_for(r"Pick a scene")
    assert "scenes/the-apology.yaml" in screen and "the-apology.yamlxy" not in screen and "xy" not in screen
    terminal.keys("C-n")
    terminal.wait_for(r"Fix the cast before going on")
    terminal.keys("C-n")
    terminal.wait_for(r"Not yet")
    terminal.quit()


def test_the_next_key_on_an_unanswered_choice_says_why(tmp_path, terminal: Terminal):
    work = make_workspace(tmp_path / "work")
    terminal.run("scenes/the-apology.yaml --seed 7", work)
    terminal.wait_for(r"✓ The Apology")
    terminal.keys("C-n")
    terminal.wait_for(r"Every character was found")
    terminal.keys("C-n")
    terminal.wait_for(r"Choice 1 of 2")
    terminal.keys("C-n")
    screen = terminal.wait_for(r"Not yet")
    assert "Choice 1 of 2" in screen and "press a or b" in screen
    terminal.type("b")
    terminal.keys("C-n")
    terminal.wait_for(r"Choice 2 of 2")
    terminal.keys("C-q")
    terminal.wait_for(r"PROMPTDESK-EXITED-0")


def test_w_on_a_closed_stage_opens_the_wizard_again_with_suggestions_only(tmp_path, terminal: Terminal):
    work = workspace(tmp_path, "the-apology.yaml")
    terminal.run("scenes/the-apology.yaml --seed 7 --max-beats 2 --pace 0", work)
    terminal.wait_for(r"✓ The Apology")
    terminal.keys("C-n")
    terminal.wait_for(r"Every character was found")
    terminal.keys("C-n")
    terminal.wait_for(r"Choice 1 of 2")
    terminal.type("b")
    terminal.keys("C-n")
    terminal.wait_for(r"Choice 2 of 2")
    terminal.type("c")
    terminal.keys("C-n")
    terminal.wait_for(r"Base URL")
    terminal.keys("C-n")
    terminal.wait_for(r"Starting writes notes\.md")
    terminal.keys("C-n")
    terminal.wait_for(r"Scene closed \(")
    terminal.type("w")
    screen = terminal.wait_for(r"Pick a scene")
    assert "✓ The Apology" not in screen
    terminal.keys("Enter")
    terminal.wait_for(r"Every character was found")
    terminal.keys("C-n")
    screen = terminal.wait_for(r"Choice 1 of 2")
    assert "Last scene: (b) Separate API conversation per actor" in screen and "▐●▌" not in screen
    terminal.quit()


def test_a_scene_name_typed_on_the_first_step_is_typed_even_its_q(tmp_path, terminal: Terminal):
    work = make_workspace(tmp_path / "work")
    terminal.run("", work)
    terminal.wait_for(r"Pick a scene")
    terminal.type("quarrel")
    screen = terminal.wait_for(r"▊  quarrel")
    assert "PROMPTDESK-EXITED" not in screen
    terminal.keys("C-u")
    terminal.type("the-apology")
    terminal.keys("Enter")
    terminal.wait_for(r"Every character was found")
    terminal.keys("Escape")
    terminal.wait_for(r"Pick a scene")
    terminal.keys("C-q")
    terminal.wait_for(r"PROMPTDESK-EXITED-0")
