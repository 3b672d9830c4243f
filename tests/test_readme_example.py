"""The docs' worked comparison (`docs/guide/experiments.md`) is what its commands print: a real offline sweep, run here exactly
as the page says (from a fresh copy of the scene and the characters), then `promptdesk compare`."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from promptdesk.core.cli.main import main
from helpers import ROOT
from worked_prose import figures, stale

MARKER = "<!-- worked-comparison:"


def worked_block(readme: str) -> tuple[list[list[str]], str]:
    """The commands (`$ promptdesk …` lines) and the expected output of the block after the marker."""
    after = readme[readme.index(MARKER):]
    block = re.search(r"```\n(.*?)```", after, re.S)
    assert block, "the worked comparison's code block is missing after its marker"
    lines = block[1].splitlines()
    commands = [shlex.split(line[2:]) for line in lines if line.startswith("$ ")]
    output = "\n".join(line for line in lines if not line.startswith("$ "))
    return commands, output


def test_the_readme_worked_comparison_is_what_its_commands_print(tmp_path, monkeypatch, capsys):
    commands, expected = worked_block((ROOT / "docs" / "guide" / "experiments.md").read_text(encoding="utf-8"))
    assert [c[:2] for c in commands] == [["promptdesk", "sweep"], ["promptdesk", "compare"]]
    scene = Path(commands[0][2])
    (tmp_path / scene.parent).mkdir(parents=True)
    shutil.copy(ROOT / scene, tmp_path / scene)
    shutil.copytree(ROOT / "characters", tmp_path / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
    assert "latency_ms" not in (tmp_path / scene).read_text()     # no simulated wall-clock waits in the example
    monkeypatch.chdir(tmp_path)
    for command in commands:
        capsys.readouterr()
        assert main(command[1:]) == 0, " ".join(command)
    printed = capsys.readouterr().out.rstrip("\n")
    assert printed == expected, ("docs/guide/experiments.md's worked comparison differs from what its commands print now; "
                                 "if the change is intended, paste this into the block:\n" + printed)
    prose = (ROOT / "docs" / "guide" / "experiments.md").read_text(encoding="utf-8")
    prose = prose[prose.index("How to read it."):prose.index("show their effect on the dialogue itself.")]
    out = commands[1][2]
    assert main(["compare", out, "--metrics", "tokens", "--unpaired"]) == 0
    unpaired = capsys.readouterr().out
    assert main(["compare", out, "--metrics", "tokens", "--csv"]) == 0
    missing = stale(prose, figures(printed, unpaired, capsys.readouterr().out))
    assert not missing, "docs/guide/experiments.md's prose quotes figures the sweep no longer gives; it should say:\n" + \
        "\n".join(missing)
