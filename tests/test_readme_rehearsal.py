"""The docs' worked rehearsal (`docs/guide/rehearsal.md`) is what its commands print: a run, a take with no change and a take
with a world event from beat 3, then `promptdesk compare` of the three (from a fresh copy of the scene
and the characters, as `tests/test_readme_example.py` does for the worked comparison)."""

from __future__ import annotations

import shutil
from pathlib import Path

from promptdesk.core.cli.main import main
from helpers import ROOT
from test_branch import from_beat, own_part
from test_readme_example import worked_block


def test_the_readme_worked_rehearsal_is_what_its_commands_print(tmp_path, monkeypatch, capsys):
    readme = (ROOT / "docs" / "guide" / "rehearsal.md").read_text(encoding="utf-8")
    section = readme[readme.index("<!-- worked-rehearsal:"):]
    commands, expected = worked_block(section.replace("<!-- worked-rehearsal:", "<!-- worked-comparison:", 1))
    assert [c[:2] for c in commands] == [["promptdesk", "--batch"], ["promptdesk", "branch"], ["promptdesk", "branch"],
                                         ["promptdesk", "compare"]]
    scene = Path(commands[0][2])
    (tmp_path / scene.parent).mkdir(parents=True)
    shutil.copy(ROOT / scene, tmp_path / scene)
    shutil.copytree(ROOT / "characters", tmp_path / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
    monkeypatch.chdir(tmp_path)
    for command in commands:
        capsys.readouterr()
        assert main(command[1:]) == 0, " ".join(command)
    printed = capsys.readouterr().out.rstrip("\n")
    assert printed == expected, ("docs/guide/rehearsal.md's worked rehearsal differs from what its commands print now; "
                                 "if the change is intended, paste this into the block:\n" + printed)
    runs = tmp_path / "runs"
    assert own_part(runs / "kitchen-again") == from_beat(runs / "kitchen", 3), "the take with no change plays it again"
