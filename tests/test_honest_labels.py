"""Offline runs are labelled for what they are: their durations are simulated time (the transcript's
header, its statistics, `metrics`, `compare`), and tables say yes and no, never True and False."""

from __future__ import annotations

import json
import re
import shutil

from promptdesk.core.cli.main import main
from helpers import ROOT


def offline_run(tmp_path, monkeypatch, *args: str):
    shutil.copytree(ROOT / "characters", tmp_path / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
    (tmp_path / "scenes").mkdir()
    shutil.copy(ROOT / "scenes" / "morning-kitchen.yaml", tmp_path / "scenes")
    monkeypatch.chdir(tmp_path)
    assert main(["--batch", "scenes/morning-kitchen.yaml", "--isolation", "a", "--coordinator", "B", "--seed", "2",
                 "--out", "run", *args]) == 0
    return tmp_path / "run"


def test_an_offline_runs_durations_say_simulated_time(tmp_path, monkeypatch, capsys):
    run = offline_run(tmp_path, monkeypatch)
    assert re.search(r"^\*\*Duration:\*\* [\d.]+ minutes of simulated time \(offline improviser\)$",
                     (run / "transcript.md").read_text(), re.M)
    assert "(real-time generation)" not in (run / "transcript.md").read_text()
    assert re.search(r"^- Processing time: [\d.]+s of simulated time$", (run / "transcript.txt").read_text(), re.M)
    capsys.readouterr()
    assert main(["metrics", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clock"] == "simulated"
    assert main(["metrics", str(run)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^duration_s +[\d.]+ \(simulated time\)$", out, re.M)
    assert re.search(r"^goal_achieved +(yes|no)$", out, re.M) and re.search(r"^success +yes$", out, re.M)
    assert not re.search(r"\b(True|False)\b", out)


def test_a_sweeps_duration_row_says_simulated_time(tmp_path, monkeypatch, capsys):
    offline_run(tmp_path, monkeypatch)
    assert main(["sweep", "scenes/morning-kitchen.yaml", "--isolation", "a", "--coordinator", "B,C", "--seeds", "1-2",
                 "--out", "sweep"]) == 0
    capsys.readouterr()
    assert main(["compare", "sweep", "--metrics", "duration_s,turns"]) == 0
    assert re.search(r"^duration_s \(simulated time\) ", capsys.readouterr().out, re.M)
