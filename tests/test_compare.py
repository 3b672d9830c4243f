"""`promptdesk compare` over run folders and a sweep folder whose logs are written by hand."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.compare import compare, load

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


def make_stats_sweep(root: Path) -> Path:
    """Three conditions × five seeds, turns counted by hand: every b-C run speaks more than every a-C and
    every b-B run; a-C and b-B overlap. a-C's runs carry a recorded success, the others' do not."""
    plan = {"scene": "tea.yaml", "isolations": ["a", "b"], "coordinators": ["B", "C"], "seeds": [1, 2, 3, 4, 5]}
    root.mkdir()
    (root / "sweep.yaml").write_text(yaml.safe_dump(plan))
    turns = {"a-C": [2, 3, 2, 3, 2], "b-C": [6, 7, 6, 7, 8], "b-B": [3, 2, 3, 4, 2]}
    rows = []
    for condition, counts in turns.items():
        iso, coordinator = condition.split("-")
        for seed, n in enumerate(counts, start=1):
            folder = write_log(root / f"{condition}-seed{seed}", iso, coordinator, seed, n)
            if condition == "a-C":
                (folder / "metadata.json").write_text(json.dumps({"success": seed != 2}))
            rows.append({"run": folder.name})
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


def test_the_differences_of_a_sweep_are_hand_checked_and_holm_adjusted(tmp_path):
    runs, by = load([make_stats_sweep(tmp_path / "sweep")], audit=False)
    found = {(d.metric, d.a, d.b): d for d in compare(runs, by).differences}
    # Columns in plan order: a-C, b-B, b-C (a-B has no run). Three pairs per metric.
    assert [k[1:] for k in found if k[0] == "turns"] == [("a-C", "b-B"), ("a-C", "b-C"), ("b-B", "b-C")]
    apart, near, also_apart = found["turns", "a-C", "b-C"], found["turns", "a-C", "b-B"], found["turns", "b-B", "b-C"]
    # b − a: 6.8 − 2.4. Five runs against five, all of b above all of a: the exact permutation test finds
    # the observed difference (or its mirror) in 2 of the C(10, 5) = 252 arrangements.
    assert (apart.diff, apart.p_value) == (4.4, pytest.approx(2 / 252, rel=1e-5))
    assert apart.ci_low > 0 and apart.ci_high < 6 and apart.ci_low < 4.4 < apart.ci_high
    # Holm over the metric's three pairs: the smallest p times 3, the next times 2 (kept monotone).
    assert apart.p_adjusted == also_apart.p_adjusted == pytest.approx(3 * 2 / 252, rel=1e-5)
    assert apart.significant and also_apart.significant and not near.significant
    assert near.p_adjusted == max(near.p_value, apart.p_adjusted)
    # The power note: seeds per condition for 80% power, never below the 5 that three pairs need.
    assert apart.seeds_needed == 5 and near.seeds_needed > 5
    # Seeded: the same runs give the same numbers, whatever else is compared alongside.
    again = {(d.metric, d.a, d.b): d for d in compare(runs, by, ("turns",)).differences}
    assert again["turns", "a-C", "b-C"] == apart


def test_a_side_with_fewer_than_two_known_values_has_no_interval_nor_p(tmp_path):
    runs, by = load([make_stats_sweep(tmp_path / "sweep")], audit=False)
    success = [d for d in compare(runs, by).differences if d.metric == "success"]
    # Only a-C recorded a success (4 of 5); the others are unknown, not 0: no difference can be measured.
    assert [(d.a, d.b, d.diff, d.ci_low, d.p_value, d.p_adjusted) for d in success] == \
        [("a-C", "b-B", None, None, None, None), ("a-C", "b-C", None, None, None, None),
         ("b-B", "b-C", None, None, None, None)]


def test_compare_prints_the_table_the_differences_and_what_is_significant(tmp_path, capsys):
    assert main(["compare", str(make_stats_sweep(tmp_path / "sweep"))]) == 0
    out = capsys.readouterr().out
    assert "beyond the spread" not in out and "sd₁ + sd₂" not in out
    assert re.search(r"^turns \* +2\.4 ± 0\.548 \(n=5\) +2\.8 ± 0\.837 \(n=5\) +6\.8 ± 0\.837 \(n=5\)$", out, re.M)
    assert re.search(r"^success +0\.8 ± 0\.447 \(n=5\) +unknown +unknown$", out, re.M)
    row = re.search(r"^turns +a-C +b-C +\+4\.4 +(\S+) to (\S+) +0\.008 +0\.024 \* +5$", out, re.M)
    assert row and 0 < float(row[1]) < 4.4 < float(row[2])
    assert re.search(r"^turns +a-C +b-B +\+0\.4 .* (0\.\d{3}) +\1 +\d+$", out, re.M)   # not starred
    prose = " ".join(out.split("\n\n")[-1].split())
    assert ("Significant at 0.05 after adjustment (*): beats (a-C vs b-C); beats (b-B vs b-C); goal_achieved (a-C vs "
            "b-C); goal_achieved (b-B vs b-C); turns (a-C vs b-C); turns (b-B vs b-C).") in prose
    assert "Holm-adjusted across each metric's pairs" in prose and "Seeds for 80% power" in prose


def test_compare_json_and_csv_give_every_difference(tmp_path, capsys):
    sweep = str(make_stats_sweep(tmp_path / "sweep"))
    assert main(["compare", sweep, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["differences"]) == 3 * 16  # three pairs of conditions, sixteen metrics
    assert {d["metric"] for d in data["differences"]} >= {"failures", "corrections", "salvaged"}
    row = next(d for d in data["differences"] if (d["metric"], d["a"], d["b"]) == ("turns", "a-C", "b-C"))
    assert {k: row[k] for k in ("diff", "p_value", "p_adjusted", "significant")} == \
        {"diff": 4.4, "p_value": pytest.approx(2 / 252, rel=1e-5), "p_adjusted": pytest.approx(6 / 252, rel=1e-5),
         "significant": True}
    assert {"metric", "a", "b", "diff", "ci_low", "ci_high", "p_value", "p_adjusted"} <= set(row)
    unknown = next(d for d in data["differences"] if d["metric"] == "success")
    assert [unknown[k] for k in ("diff", "ci_low", "ci_high", "p_value", "p_adjusted")] == [None] * 5
    assert data["metrics"]["success"]["b-C"] == {"mean": None, "sd": None, "n": 0, "unknown": 5}
    assert main(["compare", sweep, "--csv-differences"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3 * 16
    turns = next(r for r in rows if (r["metric"], r["a"], r["b"]) == ("turns", "a-C", "b-C"))
    assert (turns["diff"], float(turns["p_adjusted"]), turns["significant"]) == \
        ("4.4", pytest.approx(6 / 252, rel=1e-5), "True")
    assert next(r for r in rows if r["metric"] == "success")["p_value"] == ""


def test_compare_metrics_chooses_the_rows_and_refuses_an_unknown_name(tmp_path, capsys):
    sweep = str(make_stats_sweep(tmp_path / "sweep"))
    assert main(["compare", sweep, "--metrics", "tokens,turns"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[1:3]] == ["tokens", "turns"] and "beats" not in out
    assert main(["compare", sweep, "--metrics", "turns,wit"]) == 2
    err = capsys.readouterr().err
    assert "--metrics" in err and "'turns,wit'" in err and "mean_speech_words" in err


def test_compare_run_folders_one_column_each_as_csv_and_json(tmp_path, capsys):
    first = write_log(tmp_path / "r1", "a", "A", 1, 2)
    second = write_log(tmp_path / "r2", "b", "B", 9, 5)
    assert main(["compare", str(first), str(second), "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["run"], r["condition"], r["turns"], r["goal_achieved"], r["success"]) for r in rows] == \
        [("r1", "a-A", "2", "False", ""), ("r2", "b-B", "5", "True", "")]
    assert main(["compare", str(first), str(second), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "run" and data["columns"] == ["r1", "r2"]
    assert data["metrics"]["turns"]["r2"] == {"mean": 5.0, "sd": 0.0, "n": 1, "unknown": 0}
    turns = next(d for d in data["differences"] if d["metric"] == "turns")
    assert (turns["diff"], turns["ci_low"], turns["p_value"], turns["p_adjusted"]) == (3.0, None, None, None)
    assert main(["compare", str(first), str(second)]) == 0
    assert "no seed-to-seed spread to test a difference against" in capsys.readouterr().out


def test_compare_of_something_that_is_not_a_run_exits_2(tmp_path, capsys):
    assert main(["compare", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err


def test_the_experiment_commands_import_no_textual_rich_or_sdk():
    import subprocess
    import sys
    code = ("import sys, promptdesk.core.experiments.metrics, promptdesk.core.experiments.sweep, promptdesk.core.experiments.compare, promptdesk.core.experiments.report, promptdesk.core.cli.metrics, promptdesk.core.cli.sweep, "
            "promptdesk.core.cli.compare, promptdesk.core.cli.report, promptdesk.core.providers.ratelimit\n"
            "print(','.join(m for m in ('textual', 'rich', 'anthropic', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
