"""`promptdesk compare` over run folders and a sweep folder whose logs are written by hand."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from statistics import stdev

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.compare import compare, load
from promptdesk.core.experiments.stats.shift import fewest_pairs

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


def test_the_differences_of_a_sweep_are_paired_by_seed_and_hand_checked(tmp_path):
    runs, by = load([make_stats_sweep(tmp_path / "sweep")], audit=False)
    comparison = compare(runs, by)
    found = {(d.metric, d.a, d.b): d for d in comparison.differences}
    # Columns in plan order: a-C, b-B, b-C (a-B has no run). Three pairs per metric, paired by seed.
    assert [k[1:] for k in found if k[0] == "turns"] == [("a-C", "b-B"), ("a-C", "b-C"), ("b-B", "b-C")]
    apart, near = found["turns", "a-C", "b-C"], found["turns", "a-C", "b-B"]
    # Seed by seed b-C − a-C is 4, 4, 4, 4, 6: every one positive, so of the 2^5 = 32 sign flips only the
    # observed one and its mirror are as extreme: p = 2/32, the smallest five pairs can give.
    assert (apart.design, apart.pairs, apart.diff, apart.p_value) == ("paired", 5, 4.4, pytest.approx(2 / 32))
    assert apart.ci_unbounded and apart.ci_low is None    # p ≥ 0.0625 for every shift: none can be rejected
    assert apart.effect == pytest.approx(4.4 / stdev([4, 4, 4, 4, 6]), rel=1e-5)
    # b-B − a-C is 1, −1, 1, 1, 0 (mean 0.4): the flips of the four nonzero ones reach |sum| ≥ 2 unless two
    # are + and two −, 10 of 16, times the zero's two signs: 20 of 32.
    assert (near.diff, near.p_value) == (0.4, pytest.approx(20 / 32))
    # Holm across every test of the table that could reject; with five seeds none can reach 0.05.
    family = [d for d in comparison.differences if d.tested and not d.all_equal]
    assert comparison.statistics.family == len(family) > 3
    assert apart.p_adjusted == pytest.approx(min(1.0, len(family) * 2 / 32)) and not comparison.significant
    assert apart.seeds_needed == fewest_pairs(0.05 / len(family))   # so large an effect: the exact test's floor
    # The same runs always give the same numbers, whatever else is compared alongside (but the family).
    again = {(d.metric, d.a, d.b): d for d in compare(runs, by, ("turns",)).differences}
    assert again["turns", "a-C", "b-C"].p_value == apart.p_value and again["turns", "a-C", "b-C"].ci_unbounded


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
    assert re.search(r"^turns +2\.4 ± 0\.548 \(n=5\) +2\.8 ± 0\.837 \(n=5\) +6\.8 ± 0\.837 \(n=5\)$", out, re.M)
    assert re.search(r"^success +0\.8 ± 0\.447 \(n=5\) +unknown +unknown$", out, re.M)
    assert re.search(r"^turns +a-C +b-C +5 +\+4\.4 +unbounded +\+4\.92 \(\S+ to \S+\) +0\.062 +0\.500 +9$", out, re.M)   # Holm: 8 tests × 2/32
    prose = " ".join(out.split("\n\n")[-1].split())
    assert "No difference is significant at 0.05 after adjustment." in prose
    assert ("With these units the smallest p the exact test can give is 0.062: times" in prose
            and "no difference can be significant after Holm's adjustment" in prose)
    assert "Paired by seed" in prose and "Seeds for 80% power" in prose


def test_an_unfinished_sweep_says_which_planned_runs_are_left_out(tmp_path, capsys):
    """A sweep stopped by a signal or its budget is compared on its finished runs; the output says how
    many planned runs have no result, which ones, and how to finish them, in the text and in --json."""
    root = make_sweep(tmp_path / "sweep")
    plan = yaml.safe_load((root / "sweep.yaml").read_text())
    (root / "sweep.yaml").write_text(yaml.safe_dump({**plan, "seeds": [1, 2, 3, 4]}))
    assert main(["compare", str(root)]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert (f"{root}: 4 of 8 planned runs have a result; left out, with no result yet: a-C seeds 3-4, b-C seeds 3-4 "
            "(run the sweep's command again to finish it)." in prose)
    assert main(["compare", str(root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["left_out"] == [
        {"folder": str(root), "planned": 8, "finished": 4, "runs": ["a-C-seed3", "a-C-seed4", "b-C-seed3", "b-C-seed4"],
         "seeds": {"a-C": [3, 4], "b-C": [3, 4]}, "unrecorded": {}}]
    assert main(["compare", str(make_sweep(tmp_path / "done"))]) == 0
    assert "planned runs" not in capsys.readouterr().out     # a finished sweep has nothing to say here


def test_runs_that_did_not_close_on_their_own_are_named_where_they_are_counted(tmp_path, capsys):
    """A run whose model calls failed (or that was stopped) has a result and its values count; the
    output names it and its close, so zeros of a failed run are not read as measurements unawares."""
    root = make_sweep(tmp_path / "sweep")
    log = root / "b-C-seed2" / "events.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    records[-1]["reason"] = "provider-error"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["compare", str(root)]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert "Did not close on their own, counted as recorded (what they reached before they ended): b-C-seed2 (provider-error)." in prose
    assert main(["compare", str(make_sweep(tmp_path / "other"))]) == 0
    assert "Did not close on their own" not in capsys.readouterr().out


def test_result_lines_that_are_json_but_no_result_are_passed_over_like_torn_ones(tmp_path, capsys):
    """A results.jsonl edited by hand or by another tool may hold JSON that is no result (a list, a
    number, a string): such a line is passed over as a torn one is, never a traceback."""
    root = make_sweep(tmp_path / "sweep")
    with open(root / "results.jsonl", "a") as handle:
        handle.write('[1, 2]\n"a-C-seed1"\n7\nnull\n{"run": ["a-C-seed1"]}\nnot json\n')
    with open(root / "results.jsonl", "ab") as handle:
        handle.write(b'\xff\xfe{"run": "b-C-seed9"}\n')                 # bytes that are no UTF-8
    assert main(["compare", str(root), "--metrics", "turns"]) == 0
    assert "2.5 ± 0.707 (n=2)" in capsys.readouterr().out
    page = tmp_path / "sweep.html"
    assert main(["report", str(root), "--html", str(page)]) == 0
    from promptdesk.core.experiments.sweep_plan import read_results
    assert [row["run"] for row in read_results(root)] == ["a-C-seed1", "a-C-seed2", "b-C-seed1", "b-C-seed2"]


def test_a_damaged_sweep_run_is_named_by_compare_and_report_never_a_traceback(tmp_path, capsys):
    """A run of a sweep whose folder is gone, or whose log is empty (killed before its first event),
    cannot be compared: both commands say which run and why (exit 2), not "2 different scenes (None,
    tea)" and not a traceback."""
    gone = make_sweep(tmp_path / "gone")
    shutil.rmtree(gone / "a-C-seed1")
    empty = make_sweep(tmp_path / "empty")
    (empty / "a-C-seed1" / "events.jsonl").write_text("")
    page = tmp_path / "page.html"
    for root, says in ((gone, "a-C-seed1 is not a run folder (no events.jsonl in it)"),
                       (empty, "a-C-seed1 recorded no event (an empty events.jsonl: a run killed before its first "
                               "event), so it has no scene, choices or seed to compare by; leave it out")):
        for command in (["compare", str(root)], ["report", str(root), "--html", str(page)]):
            assert main(command) == 2, command
            err = capsys.readouterr().err
            assert says in err and "Traceback" not in err and "different scenes" not in err


@pytest.mark.parametrize("plan, says", [("[1, 2]\n", "a sweep plan is a mapping of keys"),
                                         ("{}\n", "scene is missing"),
                                         ("scene: tea.yaml\nisolations: [a]\ncoordinators: [C]\nseeds: 5\n",
                                          "seeds is not a list of whole numbers"),
                                         ("scene: tea.yaml\nisolations: a\ncoordinators: [C]\nseeds: [1]\n",
                                          "isolations is not a list of names")])
def test_a_damaged_sweep_plan_is_named_with_what_is_wrong_never_a_traceback(tmp_path, capsys, plan, says):
    root = make_sweep(tmp_path / "sweep")
    (root / "sweep.yaml").write_text(plan)
    for command in (["compare", str(root)], ["report", str(root), "--html", str(tmp_path / "p.html")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"{root / 'sweep.yaml'}: " in err and says in err and "Traceback" not in err


def test_a_run_that_failed_before_recording_anything_drops_its_seed_and_is_named(tmp_path, capsys):
    """A sweep's run that could not start (a character file broken mid-sweep) has a result line, close
    `error`, and no folder. The sweep is still compared and reported: that run is named with its error,
    and its seed is dropped from the pairs it would have made."""
    root = make_sweep(tmp_path / "sweep")
    plan = yaml.safe_load((root / "sweep.yaml").read_text())
    (root / "sweep.yaml").write_text(yaml.safe_dump({**plan, "seeds": [1, 2, 3]}))
    with open(root / "results.jsonl", "a") as handle:
        handle.write(json.dumps({"run": "b-C-seed3"}) + "\n")
        handle.write(json.dumps({"run": "a-C-seed3", "close_reason": "error", "success": False,
                                 "error": "CharacterLoadError: bob's profile is not valid YAML"}) + "\n")
    assert main(["compare", str(root), "--metrics", "turns"]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert (f"{root}: failed before recording anything, so not compared: a-C-seed3 (CharacterLoadError: bob's "
            "profile is not valid YAML)." in prose)
    assert "Seeds dropped from pairs (no run, or an unknown value, on one side): a-C vs b-C: 3" in prose
    assert main(["compare", str(root), "--metrics", "turns", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["left_out"][0]["unrecorded"] == {
        "a-C-seed3": "CharacterLoadError: bob's profile is not valid YAML"}
    page = tmp_path / "sweep.html"
    assert main(["report", str(root), "--html", str(page)]) == 0
    assert "failed before recording anything, so not compared: a-C-seed3" in " ".join(page.read_text().split())


def test_a_single_condition_claims_no_design_and_no_test(tmp_path, capsys):
    """One condition has nothing to compare it with: no 'unpaired (the conditions share no seed)', no
    adjustment over 0 tests, no power note; the output says there is one condition."""
    root = make_sweep(tmp_path / "sweep")
    plan = yaml.safe_load((root / "sweep.yaml").read_text())
    (root / "sweep.yaml").write_text(yaml.safe_dump({**plan, "isolations": ["a"]}))
    (root / "results.jsonl").write_text("".join(json.dumps({"run": f"a-C-seed{s}"}) + "\n" for s in (1, 2)))
    assert main(["compare", str(root)]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert "One condition (a-C): nothing to compare it with, so no test" in prose
    for claim in ("Unpaired", "share no seed", "across the 0 tests", "Seeds for 80% power", "significant"):
        assert claim not in prose


def test_compare_json_and_csv_give_every_difference(tmp_path, capsys):
    sweep = str(make_stats_sweep(tmp_path / "sweep"))
    assert main(["compare", sweep, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["differences"]) == 3 * 16  # three pairs of conditions, sixteen metrics
    assert {d["metric"] for d in data["differences"]} >= {"failures", "corrections", "salvaged"}
    row = next(d for d in data["differences"] if (d["metric"], d["a"], d["b"]) == ("turns", "a-C", "b-C"))
    assert {k: row[k] for k in ("diff", "pairs", "p_value", "significant", "design")} == \
        {"diff": 4.4, "pairs": 5, "p_value": 0.0625, "significant": False, "design": "paired"}
    assert {"metric", "a", "b", "diff", "ci_low", "ci_high", "effect", "effect_low", "p_value", "p_adjusted"} <= set(row)
    unknown = next(d for d in data["differences"] if d["metric"] == "success")
    assert [unknown[k] for k in ("ci_low", "ci_high", "p_value", "p_adjusted")] == [None] * 4
    assert unknown["untested"] == "too few pairs"
    assert data["metrics"]["success"]["b-C"] == {"mean": None, "sd": None, "n": 0, "unknown": 5}
    assert data["statistics"]["adjustment"] == "holm" and data["statistics"]["unit"] == "seed"
    assert main(["compare", sweep, "--csv-differences"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3 * 16
    turns = next(r for r in rows if (r["metric"], r["a"], r["b"]) == ("turns", "a-C", "b-C"))
    assert (turns["diff"], float(turns["p_value"]), turns["significant"], turns["pairs"]) == \
        ("4.4", 0.0625, "no", "5")     # yes/no, as the tables say it (issue 34)
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
        [("r1", "a-A", "2", "no", ""), ("r2", "b-B", "5", "yes", "")]   # yes/no, never True/False (issue 34)
    assert main(["compare", str(first), str(second), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "run" and data["columns"] == ["r1", "r2"]
    assert data["metrics"]["turns"]["r2"] == {"mean": 5.0, "sd": 0.0, "n": 1, "unknown": 0}
    turns = next(d for d in data["differences"] if d["metric"] == "turns")
    assert (turns["diff"], turns["ci_low"], turns["p_value"], turns["p_adjusted"]) == (3.0, None, None, None)
    assert main(["compare", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "no seed-to-seed spread to test a difference against" in out
    # a run's goal verdict reads as `metrics` prints it: yes or no, never 1 or 0 (issue 34)
    assert next(line for line in out.splitlines() if line.startswith("goal_achieved")).split() == ["goal_achieved", "no", "yes"]


def test_two_runs_whose_folders_share_a_name_get_a_column_each(tmp_path, capsys):
    """`compare a/kitchen b/kitchen` (two places, two runs, one folder name: two sweeps' `retake-seed1`, a run
    and its copy): one column each, named with its parent folder (the whole path when that is shared too). They were one column, `kitchen`, with a mean of
    the two, under a line that said "One run per column"."""
    first = write_log(tmp_path / "a" / "kitchen", "a", "A", 1, 2)
    second = write_log(tmp_path / "b" / "kitchen", "b", "B", 9, 5)
    assert main(["compare", str(first), str(second), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "run" and data["columns"] == ["a/kitchen", "b/kitchen"]
    assert data["metrics"]["turns"]["b/kitchen"] == {"mean": 5.0, "sd": 0.0, "n": 1, "unknown": 0}
    third = write_log(tmp_path / "c" / "a" / "kitchen", "c", "C", 4, 3)  # the same two levels: the whole path
    assert main(["compare", str(first), str(third), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["columns"] == [str(first), str(third)]
    assert main(["compare", str(first), str(second)]) == 0
    assert "± " not in capsys.readouterr().out


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


@pytest.mark.parametrize("named", [lambda s: [s / "a-C-seed1", s / "a-C-seed1"],
                                   lambda s: [s / "a-C-seed1", s / ".." / s.name / "a-C-seed1"],
                                   lambda s: [s, s]])
def test_a_run_named_twice_is_refused_not_counted_twice(tmp_path, capsys, named):
    sweep = make_sweep(tmp_path / "sweep")
    assert main(["compare", *map(str, named(sweep))]) == 2
    err = capsys.readouterr().err
    assert "a-C-seed1" in err and "twice" in err and "Traceback" not in err


def test_a_sweep_folder_and_a_run_folder_together_are_refused_naming_both(tmp_path, capsys):
    sweep = make_sweep(tmp_path / "sweep")
    run = write_log(tmp_path / "run", "a", "C", 9, 3)
    assert main(["compare", str(sweep), str(run)]) == 2
    err = capsys.readouterr().err
    assert str(run) in err and str(sweep) in err and "sweep folders together" in err


def test_two_runs_with_one_folder_name_in_two_folders_are_two_columns(tmp_path, capsys):
    """`first/run-1` and `second/run-1` (two sweeps' `change-seed1`, say) made one column `run-1` of both, with
    n = 2 under a note that says "one run per column"; each is its own column, named with its folder."""
    first = write_log(tmp_path / "first" / "run-1", "a", "C", 1, 4)
    second = write_log(tmp_path / "second" / "run-1", "b", "C", 1, 9)
    other = write_log(tmp_path / "first" / "run-2", "a", "C", 2, 6)
    assert main(["compare", str(first), str(second), str(other), "--json", "--metrics", "turns"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["columns"] == ["first/run-1", "second/run-1", "run-2"]
    assert [data["metrics"]["turns"][c]["n"] for c in data["columns"]] == [1, 1, 1]
