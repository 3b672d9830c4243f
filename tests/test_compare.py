"""`promptdesk compare` over run folders and a sweep folder whose logs are written by hand."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import yaml

from core.cli.main import main
from core.experiments.compare import compare, load

CAST = {"alice": "Alice", "bob": "Bob"}


def write_log(folder: Path, isolation: str, coordinator: str, seed: int, speeches: int) -> Path:
    """A run whose Alice speaks `speeches` times, three words each, one beat per speech."""
    records = [{"t": 0.0, "from": "coordinator", "type": "start", "text": "start", "beat": 0, "scene": {"name": "tea"},
                "cast": CAST, "isolation": isolation, "coordinator": coordinator, "seed": seed}]
    records += [{"t": float(i + 1), "from": "alice", "type": "speak", "action": "speak", "text": "one two three",
                 "target": "Bob", "beat": i} for i in range(speeches)]
    records.append({"t": 20.0, "from": "coordinator", "type": "close", "reason": "natural", "text": "closed",
                    "beat": speeches - 1, "goal_achieved": speeches > 4})
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def make_sweep(root: Path) -> Path:
    """a-C with 2 and 3 speeches, b-C with 6 and 7; b-C-seed3 has a folder but no result (unfinished)."""
    plan = {"scene": "tea.yaml", "isolations": ["a", "b"], "coordinators": ["C"], "seeds": [1, 2]}
    root.mkdir()
    (root / "sweep.yaml").write_text(yaml.safe_dump(plan))
    rows = []
    for (iso, seed), n in {("a", 1): 2, ("a", 2): 3, ("b", 1): 6, ("b", 2): 7}.items():
        write_log(root / f"{iso}-C-seed{seed}", iso, "C", seed, n)
        rows.append({"run": f"{iso}-C-seed{seed}"})
    write_log(root / "b-C-seed3", "b", "C", 3, 40)
    (root / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_a_sweep_compares_by_condition_with_mean_sd_and_n(tmp_path):
    runs, by = load([make_sweep(tmp_path / "sweep")], audit=False)
    result = compare(runs, by)
    assert by == "condition" and list(result.columns) == ["a-C", "b-C"]
    turns = result.table["turns"]
    assert (turns["a-C"].mean, turns["a-C"].n, turns["b-C"].mean) == (2.5, 2, 6.5)
    assert round(turns["a-C"].sd, 4) == 0.7071
    assert result.table["goal_achieved"]["b-C"].mean == 1.0 and result.table["goal_achieved"]["a-C"].mean == 0.0
    # 4 turns apart with sd 0.71 each: beyond the spread. Every speech has 3 words in both: not.
    assert result.beyond_spread["turns"] == [("a-C", "b-C")]
    assert "mean_speech_words" not in result.beyond_spread


def test_compare_prints_the_table_and_names_differences_beyond_the_spread(tmp_path, capsys):
    assert main(["compare", str(make_sweep(tmp_path / "sweep"))]) == 0
    out = capsys.readouterr().out
    assert "2.5 ± 0.707 (n=2)" in out and "6.5 ± 0.707 (n=2)" in out
    assert "turns *" in out and "mean_speech_words *" not in out
    assert "Differences beyond the seed-to-seed spread" in out and "turns (a-C vs b-C)" in out


def test_compare_run_folders_one_column_each_as_csv_and_json(tmp_path, capsys):
    first = write_log(tmp_path / "r1", "a", "A", 1, 2)
    second = write_log(tmp_path / "r2", "b", "B", 9, 5)
    assert main(["compare", str(first), str(second), "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["run"], r["condition"], r["turns"], r["goal_achieved"]) for r in rows] == \
        [("r1", "a-A", "2", "False"), ("r2", "b-B", "5", "True")]
    assert main(["compare", str(first), str(second), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "run" and data["columns"] == ["r1", "r2"]
    assert data["metrics"]["turns"]["r2"] == {"mean": 5.0, "sd": 0.0, "n": 1}


def test_compare_of_something_that_is_not_a_run_exits_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err


def test_the_experiment_commands_import_no_textual_rich_or_sdk():
    import subprocess
    import sys
    code = ("import sys, core.experiments.metrics, core.experiments.sweep, core.experiments.compare, core.experiments.report, core.cli.metrics, core.cli.sweep, "
            "core.cli.compare, core.cli.report, core.providers.ratelimit\n"
            "print(','.join(m for m in ('textual', 'rich', 'anthropic', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
