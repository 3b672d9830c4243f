"""The docs' worked rehearsal (`docs/guide/rehearsal.md`) is what its commands print: a run, a take with no change and a take
with a world event from beat 3, then `promptdesk compare` of the three, from an empty folder (the scene is
the example Promptdesk ships, named)."""

from __future__ import annotations


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
    assert "/" not in commands[0][2], "the example is played by name, from an empty folder as a reader would"
    monkeypatch.chdir(tmp_path)
    for command in commands:
        capsys.readouterr()
        assert main(command[1:]) == 0, " ".join(command)
    printed = capsys.readouterr().out.rstrip("\n")
    assert printed == expected, ("docs/guide/rehearsal.md's worked rehearsal differs from what its commands print now; "
                                 "if the change is intended, paste this into the block:\n" + printed)
    runs = tmp_path / "runs"
    assert own_part(runs / "kitchen-again") == from_beat(runs / "kitchen", 3), "the take with no change plays it again"
