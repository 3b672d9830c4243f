"""End to end in a real terminal: the installed `promptdesk` under tmux, driven by keys only.

A fresh tmux server (its own `-S` socket) per test; the screen is read with `capture-pane -p`,
polled until a deadline (that waits on another process, it is not a sleep standing in for a
condition). Skipped only when tmux is missing outside CI; in CI (`CI` set) it must run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from loopback import loopback  # noqa: F401  (fixture)
from tui_support import make_workspace

from promptdesk.core.casting.notes import choice_lines

PROMPTDESK = Path(sys.executable).parent / "promptdesk"
TERMINAL_ENV = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
"""The terminal's own size must win: the test runner may have exported an 80x24 COLUMNS/LINES."""
DEADLINE_S = 30.0

if shutil.which("tmux") is None and not os.environ.get("CI"):
    pytest.skip("tmux is not installed (the test is required in CI)", allow_module_level=True)


class Terminal:
    """One tmux server with one 120x40 window running a command."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=10,
                             env=TERMINAL_ENV)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def start(self, command: str, cwd: Path, size: tuple[int, int] = (120, 40)) -> None:
        self.tmux("new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd), command)

    def run(self, args: str, cwd: Path, env: str = "", size: tuple[int, int] = (120, 40)) -> None:
        """`promptdesk ARGS` (after `env`, e.g. a key), which prints `PROMPTDESK-EXITED-<status>` when it ends."""
        self.start(f"{env + ' ' if env else ''}{PROMPTDESK} {args}; echo PROMPTDESK-EXITED-$?; sleep 60", cwd, size)

    def quit(self) -> None:
        """`q`, and Promptdesk exits with status 0."""
        self.type("q")
        self.wait_for(r"PROMPTDESK-EXITED-0")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-l", text)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def wait_for(self, pattern: str, deadline_s: float = DEADLINE_S) -> str:
        """Poll the screen until `pattern` (a regex) shows, or fail with the last screen."""
        end = time.monotonic() + deadline_s
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            if re.search(pattern, screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} never appeared; the screen was:\n{screen}")


def workspace(tmp_path: Path, scene: str, latency: str = "null") -> Path:
    """The example scenes and characters in `tmp_path/work`, `scene`'s simulated model latency set to
    `latency` (as YAML: null for none, or [low, high] in ms)."""
    work = make_workspace(tmp_path / "work")
    path = work / "scenes" / scene
    path.write_text(path.read_text().replace("latency_ms: [150, 900]", f"latency_ms: {latency}"))
    return work


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path / "tmux.sock")
    try:
        yield term
    finally:
        subprocess.run(["tmux", "-S", str(term.socket), "kill-server"], capture_output=True)


def test_the_console_walks_the_wizard_injects_an_event_and_stops_the_scene(tmp_path, terminal):
    work = workspace(tmp_path, "the-apology.yaml", "[500, 800]")
    terminal.run("scenes/the-apology.yaml --seed 7", work)

    terminal.wait_for(r"Pick a scene")
    terminal.wait_for(r"✓ The Apology")
    terminal.keys("C-n")
    terminal.wait_for(r"Every character was found")
    terminal.keys("C-n")
    terminal.wait_for(r"Choice 1 of 2")
    assert "Nothing is pre-selected" in terminal.screen()
    terminal.keys("C-n")
    assert "Choice 1 of 2" in terminal.screen()
    terminal.keys("b", "C-n")
    terminal.wait_for(r"Choice 2 of 2")
    terminal.keys("c", "C-n")
    terminal.wait_for(r"Base URL")
    terminal.keys("C-n")
    terminal.wait_for(r"Starting writes notes\.md")
    terminal.keys("C-n")

    terminal.wait_for(r"PRIVATE · Alice")
    terminal.wait_for(r"Pace\s+≥ 1\.5 s/beat")
    terminal.type("+")
    terminal.wait_for(r"Pace\s+≥ 2 s/beat")
    terminal.type("-")
    terminal.type("-")
    terminal.wait_for(r"Pace\s+≥ 1 s/beat")
    terminal.wait_for(r"── Beat 1 ──")
    terminal.keys("e")
    terminal.wait_for(r"Inject a world event")
    terminal.type("The fire alarm goes off")
    terminal.keys("Enter")
    terminal.wait_for(r"EVENT \(from you\): The fire alarm goes off")
    terminal.keys("s")
    screen = terminal.wait_for(r"Scene closed \(stop")
    assert re.search(r"Status\s+closed", screen)

    runs = list((work / "runs").iterdir())
    assert len(runs) == 1
    run = runs[0]
    rows = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    event = next(i for i, r in enumerate(rows) if r["type"] == "event" and r["from"] == "operator")
    assert rows[event]["text"] == "The fire alarm goes off"
    assert any(r["type"] == "beat" for r in rows[event + 1:])
    assert [r["type"] for r in rows][-1] == "close" and rows[-1]["reason"] == "stop"
    assert (run / "notes.md").read_text().splitlines()[:2] == choice_lines("b", "C")
    assert json.loads((run / "metadata.json").read_text())["reason"] == "stop"

    terminal.quit()


def test_replay_keys_as_a_terminal_sends_them(tmp_path, terminal):
    """`.` steps to the next event that shows (Textual calls it full_stop), `b` a beat, `end` jumps; the
    footer shows `.`."""
    run = shutil.copytree(Path(__file__).parent / "fixtures" / "replay-run", tmp_path / "run")
    terminal.run(f"replay {run}", tmp_path)
    terminal.wait_for(r"event 0 of \d+")
    assert re.search(r"\. Step", terminal.screen())
    terminal.type(".")
    terminal.wait_for(r"event 1 of \d+")
    terminal.type(".")
    terminal.wait_for(r"event 8 of \d+")  # the spawns and briefs show nothing: taken along to beat 0
    terminal.keys("End")
    screen = terminal.wait_for(r"■ end")
    total = re.search(r"event (\d+) of (\d+)", screen)
    assert total and total.group(1) == total.group(2)
    terminal.quit()


WIZARD_STEPS = (r"✓ ", r"Every character was found", r"Choice 1 of 2", r"Choice 2 of 2", r"Base URL",
                r"Starting writes notes\.md")


def wizard_through(terminal: Terminal) -> None:
    """From the scene step to the stage, both choices preset by the command line."""
    for step in WIZARD_STEPS:
        terminal.wait_for(step)
        terminal.keys("C-n")


def test_a_roundtable_escalation_waits_for_the_operator_in_the_console(tmp_path, terminal):
    work = workspace(tmp_path, "roundtable-debate.yaml", "null")
    terminal.run("scenes/roundtable-debate.yaml --isolation a --coordinator C --seed 7", work)
    wizard_through(terminal)
    terminal.wait_for(r"The roundtable needs your decision")
    terminal.keys("Escape")
    terminal.wait_for(r"Waiting\s+your decision \(a\)")
    terminal.keys("a")
    terminal.wait_for(r"The roundtable needs your decision")
    terminal.keys("Enter")
    terminal.wait_for(r"Scene closed \(decided")
    run = next((work / "runs").iterdir())
    notes = (run / "notes.md").read_text()
    assert "- On escalation: ask the operator" in notes and "(by operator)" in notes
    terminal.quit()


def test_scroll_lock_and_copy_in_a_real_terminal(tmp_path, terminal):
    """Scrolled up, the transcript holds with a "▼ n new lines" marker and `End` follows again; a
    mouse drag selects text and ctrl+c copies it, and the palette copies the run folder's path
    (both reach the terminal's clipboard: tmux keeps what the app sends as a buffer)."""
    work = workspace(tmp_path, "the-apology.yaml", "null")
    terminal.run("scenes/the-apology.yaml --isolation b --coordinator C --seed 7 --pace 1", work)
    terminal.tmux("set-option", "-s", "set-clipboard", "on")
    wizard_through(terminal)
    terminal.wait_for(r"── Beat 5 ──")
    terminal.keys("PageUp")
    terminal.wait_for(r"▼ \d+ new lines? · end to follow")
    terminal.keys("End")
    terminal.wait_for(r"(?s)^(?!.*new lines? · end to follow)")
    terminal.keys("s")
    terminal.wait_for(r"Scene closed \(")

    terminal.keys("C-p")
    terminal.wait_for(r"Search for commands")
    terminal.type("Copy the run folder")
    terminal.wait_for(r"Copy the run folder's path")
    terminal.keys("Enter")
    terminal.wait_for(r"Copied: ")
    run = next((work / "runs").iterdir())
    assert terminal.tmux("show-buffer") == str(run.resolve())

    row = terminal.screen().splitlines()[2]
    terminal.type("\x1b[<0;3;3M\x1b[<32;12;3M\x1b[<0;12;3m")  # SGR mouse: press, drag, release on row 3
    terminal.keys("C-c")
    end = time.monotonic() + DEADLINE_S
    while terminal.tmux("show-buffer") == str(run.resolve()) and time.monotonic() < end:
        time.sleep(0.05)
    assert terminal.tmux("show-buffer") == row[2:12].strip() and row[2:12].strip()
    terminal.quit()


def test_f_in_a_replay_takes_the_scene_again_as_a_terminal_sends_it(tmp_path, terminal):
    """Replay a run, step to beat 2, `f`: the dialog; type a world event and Enter: the take plays live
    on a stage whose title says it is a take of that run from beat 2, and closes into a folder beside it."""
    from promptdesk.core.cli.main import main

    work = workspace(tmp_path, "the-apology.yaml", "[20, 40]")
    assert main(["--batch", str(work / "scenes" / "the-apology.yaml"), "--isolation", "b", "--coordinator", "C",
                 "--seed", "7", "--max-beats", "6", "--characters-dir", str(work / "characters"), "--journals", "none",
                 "--out", str(work / "runs" / "parent"), "--quiet"]) == 0
    terminal.run("replay runs/parent", work)
    terminal.wait_for(r"event 0 of \d+")
    for _ in range(4):
        terminal.type("b")
    terminal.wait_for(r"── Beat 2 ──")
    terminal.type("f")
    terminal.wait_for(r"from the start of beat 2")
    terminal.wait_for(r"this run stays as it is")  # the whole explanation, not its first row only
    terminal.type("The window blows open")
    terminal.keys("Enter")
    terminal.wait_for(r"take of parent from beat 2")
    terminal.wait_for(r"EVENT \(from you\): The window blows open")
    terminal.wait_for(r"Scene closed \(")
    takes = [p for p in (work / "runs").iterdir() if p.name.startswith("parent-take2-")]
    assert len(takes) == 1
    rows = [json.loads(line) for line in (takes[0] / "events.jsonl").read_text().splitlines()]
    branch = next(i for i, r in enumerate(rows) if r["type"] == "branch")
    assert rows[branch]["beat"] == 2 and rows[branch + 1]["text"] == "The window blows open"
    terminal.quit()


def test_stage_keys_at_80x24_say_why_not_show_help_and_confirm_a_copy(tmp_path, terminal):
    """At 80x24: the footer lists what acts now, each key apart; `r` while running says why not; `?` lists
    the stage's keys and `esc` closes it; a mouse drag is highlighted and ctrl+c says what it copied."""
    work = workspace(tmp_path, "the-apology.yaml", "null")
    terminal.run("scenes/the-apology.yaml --isolation b --coordinator C --seed 7 --pace 2", work)
    terminal.tmux("set-option", "-s", "set-clipboard", "on")
    wizard_through(terminal)
    terminal.wait_for(r"PRIVATE · Alice")
    terminal.tmux("resize-window", "-x", "80", "-y", "24")
    screen = terminal.wait_for(r"── Beat 1 ──")
    screen = terminal.wait_for(r"(?m)^ q Quit")
    footer = " ".join(screen.splitlines()[-1].split())
    assert "+- Pace t Theme" in footer and "Resume" not in footer and "Decide" not in footer, footer
    terminal.type("r")
    terminal.wait_for(r"Resume: not now, the scene is not")
    terminal.type("?")
    terminal.wait_for(r"Keys · Stage")
    terminal.wait_for(r"World event")
    terminal.keys("Escape")
    terminal.wait_for(r"(?s)^(?!.*Keys · Stage)")
    terminal.keys("s")
    terminal.wait_for(r"Scene closed \(")
    terminal.type("\x1b[<0;3;3M\x1b[<32;12;3M\x1b[<0;12;3m")
    terminal.keys("C-c")
    terminal.wait_for(r"Copied \d+ characters")
    terminal.quit()


def test_replay_keys_at_80x24_fit_step_to_what_shows_and_open_the_help(tmp_path, terminal):
    """The replay at 80x24: every footer key fits (Quit last), `.` skips what shows nothing (the spawns
    and briefs before the first beat), and `?` lists the replay's keys."""
    run = shutil.copytree(Path(__file__).parent / "fixtures" / "replay-run", tmp_path / "run")
    terminal.run(f"replay {run}", tmp_path, size=(80, 24))
    screen = terminal.wait_for(r"event 0 of \d+")
    assert re.search(r"Isolation \(b\)", screen), "both choices are known before the first event"
    footer = screen.splitlines()[-1]
    for key in ("←→ Scrub", "space Play", "x Speed", ". Step", "b Beat", "f Take", "t Theme", "q Quit"):
        assert key in footer, (key, footer)
    terminal.type(".")
    terminal.wait_for(r"event 1 of \d+")
    terminal.type(".")
    terminal.wait_for(r"event 8 of \d+")
    terminal.type("?")
    terminal.wait_for(r"Keys · Replay")
    terminal.keys("Escape")
    terminal.wait_for(r"(?s)^(?!.*Keys · Replay)")
    terminal.quit()


def test_v_picks_a_crowds_thinking_panes_as_a_terminal_sends_it(tmp_path, terminal):
    """Twenty residents on a 120x40 stage: the panes that fit are shown and the grid says so; `v` opens
    the checklist, space unticks the highlighted actor, Enter shows the others."""
    from test_tui_crowd import CROWD, town_meeting

    work = make_workspace(tmp_path / "work")
    town_meeting(work)
    terminal.run("scenes/town-meeting.yaml --isolation b --coordinator C --seed 7 --pace 3", work)
    wizard_through(terminal)
    shown = int(re.search(rf"Thinking: (\d+) of {CROWD} shown · v picks which",
                          terminal.wait_for(rf"Thinking: \d+ of {CROWD} shown")).group(1))
    assert 8 <= shown < CROWD
    terminal.type("v")
    terminal.wait_for(rf"Thinking panes: {shown} of {CROWD} shown")
    terminal.keys("Space")
    terminal.wait_for(rf"{shown - 1} ticked")
    terminal.keys("Enter")
    terminal.wait_for(rf"Thinking: {shown - 1} of {CROWD} shown")
    terminal.keys("s")
    terminal.wait_for(r"Scene closed \(")
    terminal.quit()


def test_y_injects_the_coordinators_suggested_event_as_a_terminal_sends_it(tmp_path, terminal, loopback):
    """A judge (on the loopback server) suggests a world event at beat 2: the Session panel offers it
    (`y: inject`), `y` queues it, and it reaches the transcript as the operator's."""
    from test_moderator import suggesting_judge

    loopback.default = suggesting_judge(loopback)
    work = make_workspace(tmp_path / "work")
    scene = work / "scenes" / "the-apology.yaml"
    data = yaml.safe_load(scene.read_text())
    data["provider"]["latency_ms"] = None
    data["judge"] = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene.write_text(yaml.safe_dump(data))
    terminal.run("scenes/the-apology.yaml --isolation b --coordinator B --seed 7 --pace 1", work,
                 env="OPENAI_API_KEY=sk-loopback")
    wizard_through(terminal)
    # the suggestion reads as a suggestion, never as something that happened (looked for as soon as it
    # shows: a few paced beats later it has scrolled out of the transcript's view)
    terminal.wait_for(r"✦ Coordinator suggests a world event \(not in the scene unless injected\)")
    terminal.wait_for(r"(?s)Suggests .*\(y: inject\)")  # the Session panel is narrow: it may wrap
    terminal.wait_for(r"y Inject suggestion")
    terminal.type("y")
    terminal.wait_for(r"EVENT \(from you, suggested by the coordinator\): A fire")
    terminal.keys("s")
    terminal.wait_for(r"Scene closed \(")
    terminal.quit()
    event = next(json.loads(line) for line in next((work / "runs").iterdir()).joinpath("events.jsonl").open()
                 if json.loads(line)["type"] == "event")
    assert (event["text"], event["from"], event["suggested_by"]) == ("A fire alarm goes off", "operator", "coordinator")
