"""`compare` knows the design from the runs: paired by seed when conditions share seeds, the factorial
view of a sweep over both choices, several sweep folders at once, and the designs it refuses."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.compare import compare, load
from promptdesk.core.experiments.stats.factorial import factorial
from test_compare import write_log
from helpers import ROOT


def write_sweep(root: Path, turns: dict[str, list[int | None]], scene: str = "tea") -> Path:
    """A sweep folder whose run `<condition>-seed<k>` speaks `turns[condition][k-1]` times (None: the run
    failed and has no result line)."""
    conditions = list(turns)
    plan = {"scene": f"{scene}.yaml", "isolations": sorted({c.split("-")[0] for c in conditions}),
            "coordinators": sorted({c.split("-")[1] for c in conditions}),
            "seeds": list(range(1, 1 + max(len(v) for v in turns.values())))}
    root.mkdir(parents=True)
    (root / "sweep.yaml").write_text(yaml.safe_dump(plan))
    rows = []
    for condition, counts in turns.items():
        iso, coordinator = condition.split("-")
        for seed, n in enumerate(counts, start=1):
            if n is None:
                continue
            folder = write_log(root / f"{condition}-seed{seed}", iso, coordinator, seed, n)
            if scene != "tea":
                records = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
                records[0]["scene"] = {"name": scene}
                (folder / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
            rows.append({"run": folder.name})
    (root / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


SPREAD = [3, 30, 8, 22, 14, 27, 5, 18, 11, 25]
"""Ten seeds whose turns vary widely."""


def test_a_sweep_is_paired_by_seed_and_finds_a_planted_effect_the_unpaired_test_cannot(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [n + 1 for n in SPREAD], "b-C": SPREAD})
    assert main(["compare", str(sweep), "--json", "--metrics", "turns"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = data["differences"][0]
    assert data["design"] == "paired" and data["statistics"]["unit"] == "seed"
    assert (row["design"], row["pairs"], row["diff"], row["ci_low"], row["ci_high"]) == ("paired", 10, -1.0, -1.0, -1.0)
    assert row["p_value"] == pytest.approx(2 / 1024, rel=1e-5) and row["significant"]
    assert "sign-flip" in data["statistics"]["test"] and "Holm" in data["statistics"]["p_adjusted"]
    assert main(["compare", str(sweep), "--json", "--metrics", "turns", "--unpaired"]) == 0
    unpaired = json.loads(capsys.readouterr().out)
    assert unpaired["design"] == "unpaired" and unpaired["differences"][0]["p_value"] > 0.8
    assert unpaired["differences"][0]["effect"] is not None and "Hedges" in unpaired["statistics"]["effect"]


def test_the_text_says_which_test_n_the_interval_and_the_adjustment(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [n + 1 for n in SPREAD], "b-C": SPREAD})
    assert main(["compare", str(sweep), "--metrics", "turns,beats", "--adjust", "bh"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^metric +a +b +n +b − a +95% CI +d_z \(95% CI\) +p +p \(BH\) +seeds for 80% power$", out, re.M)
    assert re.search(r"^turns +a-C +b-C +10 +-1 +-1 to -1 +— +0\.002 +0\.002 \* +7$", out, re.M)
    prose = " ".join(out.split("\n\n")[-1].split())
    for words in ("Paired by seed", "n counts the pairs", "sign-flip permutation test", "exact over all 2^n",
                  "the 95% CI is the shifts that test does not reject", "Benjamini–Hochberg",
                  "across the 2 tests of this table", "--adjust bh"):
        assert words in prose, words


def test_json_says_what_its_diff_is_under_each_test(tmp_path, capsys):
    """Under --test wilcoxon a row's diff is the Hodges–Lehmann shift, not the mean of the differences:
    `statistics.diff` must say which, as the text's `b − a (HL)` does."""
    sweep = write_sweep(tmp_path / "sweep", {"a-C": SPREAD, "b-C": [n + (9 if n == 30 else 1) for n in SPREAD]})
    found = {}
    for flags in ([], ["--test", "wilcoxon"]):
        assert main(["compare", str(sweep), "--json", "--metrics", "turns", *flags]) == 0
        data = json.loads(capsys.readouterr().out)
        found[bool(flags)] = (data["statistics"]["diff"], data["differences"][0]["diff"])
    assert found[False] == ("b minus a (mean of the per-seed differences over the pairs)", 1.8)
    assert found[True] == ("b minus a (the Hodges–Lehmann shift: the median of the Walsh averages of the per-seed "
                           "differences over the pairs)", 1.0)


def test_a_failed_run_drops_its_seed_and_says_which(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [4, 5, 6, 7, 8, 9, 10], "b-C": [5, 6, None, 8, 9, 10, 11]})
    assert main(["compare", str(sweep), "--metrics", "turns"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Seeds dropped from pairs (no run, or an unknown value, on one side): a-C vs b-C: 3 (every metric)." in out
    assert main(["compare", str(sweep), "--json", "--metrics", "turns"]) == 0
    row = json.loads(capsys.readouterr().out)["differences"][0]
    assert (row["pairs"], row["n_a"], row["n_b"], row["dropped"]) == (6, 7, 6, [3])


def test_too_few_pairs_never_give_a_p_value(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [4, None, None], "b-C": [5, 6, 7]})
    assert main(["compare", str(sweep), "--json", "--metrics", "turns"]) == 0
    row = json.loads(capsys.readouterr().out)["differences"][0]
    assert (row["pairs"], row["untested"], row["p_value"], row["ci_low"]) == (1, "too few pairs", None, None)
    assert main(["compare", str(sweep), "--metrics", "turns"]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert "No test (too few pairs: fewer than 2 seeds known on both sides), so no p-value: turns" in prose
    # the row shows n = 1: the notes name the seeds it could not use, as they do for a tested row
    assert "Seeds dropped from pairs (no run, or an unknown value, on one side): a-C vs b-C: 2-3 (every metric)." in prose
    # Nothing was tested: no adjustment "across the 0 tests", no power note at "0.05 / 1".
    assert ("No row could reject (each untested, or with every difference 0), so nothing was adjusted and no "
            "difference is significant." in prose)
    for claim in ("across the 0 tests", "0.05 / 1", "Seeds for 80% power", "after adjustment"):
        assert claim not in prose


def test_the_unpaired_notes_say_what_an_unpaired_row_left_out_had(tmp_path, capsys):
    """Unpaired, a row is left out when every run of both conditions had one value (not "every difference
    was 0": runs are not paired), a row with too few values was named twice over ("fewer than 2 known
    values on a side: fewer than 2 known values on a side"), and a factorial term without an F was put
    down to "the same difference in every seed", which a two-way ANOVA of the runs does not look at."""
    sweep = write_sweep(tmp_path / "sweep", {"a-B": [4, 5, 6, 7], "a-C": [5, 7, 6, 9], "b-B": [6, 4, 8, 5],
                                             "b-C": [9, None, None, None]})
    assert main(["compare", str(sweep), "--unpaired", "--metrics", "turns,reactions"]) == 0
    prose = " ".join(capsys.readouterr().out.split("\n\n")[-1].split())
    assert "No test (fewer than 2 known values on a side), so no p-value: turns (3 pairs of conditions)" in prose
    assert "Not shown: 3 where every run of both conditions had the same value (p = 1)." in prose
    assert "A row where every run of both conditions had the same value has p = 1" in prose
    assert "every difference was 0" not in prose and "same difference in every seed" not in prose
    assert "or no spread of the runs within its cells" in prose


def test_runs_of_different_scenes_are_refused_unless_unpaired(tmp_path, capsys):
    tea = write_sweep(tmp_path / "tea", {"a-C": SPREAD[:4], "b-C": SPREAD[:4]})
    coffee = write_sweep(tmp_path / "coffee", {"a-B": SPREAD[:4], "b-B": SPREAD[:4]}, scene="coffee")
    assert main(["compare", str(tea), str(coffee)]) == 2
    err = capsys.readouterr().err
    assert "2 different scenes (coffee, tea)" in err and "--unpaired" in err
    assert main(["compare", str(tea), str(coffee), "--tui"]) == 2          # refused before any screen opens
    assert "2 different scenes (coffee, tea)" in capsys.readouterr().err
    assert main(["compare", str(tea), str(coffee), "--unpaired", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["design"] == "unpaired" and data["columns"] == ["a-C", "b-C", "a-B", "b-B"]


def test_several_sweep_folders_are_compared_together(tmp_path, capsys):
    first = write_sweep(tmp_path / "first", {"a-C": [n + 2 for n in SPREAD[:6]]})
    second = write_sweep(tmp_path / "second", {"b-C": SPREAD[:6]})
    assert main(["compare", str(first), str(second), "--json", "--metrics", "turns"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "condition" and data["columns"] == ["a-C", "b-C"] and data["design"] == "paired"
    assert data["differences"][0]["diff"] == -2.0 and data["differences"][0]["pairs"] == 6
    again = write_sweep(tmp_path / "again", {"a-C": SPREAD[:6]})      # the same condition in two sweeps
    assert main(["compare", str(first), str(again), "--json", "--metrics", "turns"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["columns"] == ["first:a-C", "again:a-C"] and data["differences"][0]["diff"] == -2.0


def test_conditions_that_share_no_seed_in_a_paired_table_say_so_and_how_to_test_them(tmp_path, capsys):
    """Two sweeps of one scene over other seeds: within each the conditions pair by seed, across them no
    seed is shared. Such a row is not "too few pairs" (no run failed): it says the conditions share no
    seed, and the notes say --unpaired compares them."""
    first = write_sweep(tmp_path / "first", {"a-C": SPREAD[:4], "b-C": SPREAD[:4]})
    later = write_sweep(tmp_path / "later", {"a-C": SPREAD[:8], "b-C": SPREAD[:8]})
    for name in ("a-C", "b-C"):                          # keep only seeds 5-8 in the later sweep
        for seed in range(1, 5):
            shutil.rmtree(later / f"{name}-seed{seed}")
    plan = yaml.safe_load((later / "sweep.yaml").read_text())
    (later / "sweep.yaml").write_text(yaml.safe_dump({**plan, "seeds": [5, 6, 7, 8]}))
    (later / "results.jsonl").write_text("".join(json.dumps({"run": f"{n}-seed{s}"}) + "\n"
                                                 for n in ("a-C", "b-C") for s in range(5, 9)))
    assert main(["compare", str(first), str(later), "--json", "--metrics", "turns"]) == 0
    rows = {(d["a"], d["b"]): d for d in json.loads(capsys.readouterr().out)["differences"]}
    assert rows["first:a-C", "first:b-C"]["pairs"] == 4
    assert rows["first:a-C", "later:a-C"]["untested"] == "no seed in common"
    assert rows["first:a-C", "later:a-C"]["p_value"] is None
    assert main(["compare", str(first), str(later), "--metrics", "turns"]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert ("No test (no seed in common: the two conditions share no seed, so nothing pairs; --unpaired compares "
            "every pair of conditions as independent samples), so no p-value: turns (4 pairs of conditions)." in prose)
    assert "too few pairs" not in prose


def test_a_paired_test_asked_of_unpaired_data_says_it_was_not_used(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", {"a-C": SPREAD[:6], "b-C": SPREAD[:6]})
    assert main(["compare", str(sweep), "--metrics", "turns", "--unpaired", "--test", "wilcoxon"]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert "--test wilcoxon was not used: the signed-rank test is for paired data only." in prose


def test_a_condition_with_two_runs_of_one_seed_is_refused_when_paired(tmp_path, capsys):
    runs = [write_log(tmp_path / name, iso, "C", seed, n) for name, iso, seed, n in
            (("r1", "a", 1, 3), ("r2", "a", 1, 4), ("r3", "b", 1, 5), ("r4", "b", 2, 6))]
    assert main(["compare", *map(str, runs), "--metrics", "turns"]) == 2
    assert "a-C has more than one run with seed 1 (r1, r2)" in capsys.readouterr().err
    assert main(["compare", *map(str, runs), "--metrics", "turns", "--unpaired", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "condition" and data["differences"][0]["n_a"] == 2


def fixture_table() -> dict[tuple[str, str], list[tuple[int, float]]]:
    """A 2 × 3 design over 8 seeds with a seed level, both main effects, an interaction and noise."""
    rng = np.random.default_rng(34)
    seeds = rng.normal(40, 12, size=8)
    effect = {("a", "A"): 0, ("a", "B"): -2, ("a", "C"): -6, ("b", "A"): 9, ("b", "B"): 8, ("b", "C"): 0}
    return {cell: [(s + 1, float(round(seeds[s] + shift + rng.normal(0, 2.5), 3))) for s in range(8)]
            for cell, shift in effect.items()}


def test_the_factorial_view_is_statsmodels_repeated_measures_anova():
    import pandas as pd
    from statsmodels.stats.anova import AnovaRM
    cells = fixture_table()
    found = factorial("tokens", cells, paired=True)
    frame = pd.DataFrame([(seed, i, c, v) for (i, c), sample in cells.items() for seed, v in sample],
                         columns=["seed", "isolation", "coordinator", "tokens"])
    expected = AnovaRM(frame, "tokens", "seed", within=["isolation", "coordinator"]).fit().anova_table
    assert [t.term for t in found.terms] == ["isolation", "coordinator", "isolation × coordinator"]
    for term, name in zip(found.terms, ("isolation", "coordinator", "isolation:coordinator")):
        assert term.f == pytest.approx(expected.loc[name, "F Value"], rel=1e-5)
        assert term.p_value == pytest.approx(expected.loc[name, "Pr > F"], rel=1e-5, abs=1e-12)
        assert (term.df_num, term.df_den) == (expected.loc[name, "Num DF"], expected.loc[name, "Den DF"])
        f, df1, df2 = term.f, term.df_num, term.df_den
        assert term.partial_eta_sq == pytest.approx(f * df1 / (f * df1 + df2), rel=1e-4)
    assert found.units == 8 and found.means["isolation"]["a"] < found.means["isolation"]["b"]


def test_the_unpaired_factorial_view_is_statsmodels_two_way_anova():
    import pandas as pd
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm
    cells = fixture_table()
    found = factorial("tokens", cells, paired=False)
    frame = pd.DataFrame([(i, c, v) for (i, c), sample in cells.items() for _, v in sample],
                         columns=["isolation", "coordinator", "y"])
    expected = anova_lm(ols("y ~ C(isolation) * C(coordinator)", data=frame).fit(), typ=2)
    for term, name in zip(found.terms, ("C(isolation)", "C(coordinator)", "C(isolation):C(coordinator)")):
        assert term.f == pytest.approx(expected.loc[name, "F"], rel=1e-5)
        assert term.p_value == pytest.approx(expected.loc[name, "PR(>F)"], rel=1e-5, abs=1e-12)


def test_a_term_with_no_difference_has_no_f_instead_of_rounding_noise():
    # Turns that differ by isolation only, the same under every coordinator in every seed.
    cells = {(i, c): [(s, float(s * 3 + (2 if i == "b" else 0) + (s % 2 if i == "b" else 0))) for s in range(1, 7)]
             for i in ("a", "b") for c in ("A", "B", "C")}
    found = factorial("turns", cells, paired=True)
    terms = {t.term: t for t in found.terms}
    assert terms["isolation"].f is not None and terms["isolation"].f > 0
    assert (terms["coordinator"].f, terms["coordinator"].p_value) == (None, None)
    assert terms["coordinator"].untested.startswith("no difference at all")


@pytest.fixture(scope="module")
def real_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real offline sweep of The Apology: both isolations, all three roles, six seeds."""
    folder = tmp_path_factory.mktemp("apology")
    (folder / "scenes").mkdir()
    shutil.copy(ROOT / "scenes" / "the-apology.yaml", folder / "scenes")
    shutil.copytree(ROOT / "characters", folder / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
    import os
    here = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["sweep", "scenes/the-apology.yaml", "--isolation", "a,b", "--coordinator", "A,B,C",
                     "--seeds", "1-6", "--out", "sweep", "--concurrency", "8"]) == 0
    finally:
        os.chdir(here)
    return folder / "sweep"


@pytest.mark.parametrize("flags", [[], ["--unpaired"], ["--test", "wilcoxon"]])
def test_on_a_real_sweep_every_interval_agrees_with_its_test(real_sweep, flags, capsys):
    runs, by = load([real_sweep], audit=False)
    assert main(["compare", str(real_sweep), "--json", *flags]) == 0
    data = json.loads(capsys.readouterr().out)
    tested = [d for d in data["differences"] if d["p_value"] is not None and not d["all_equal"]]
    assert len(tested) > 20
    for d in tested:
        assert d["ci_excludes_zero"] == (d["p_value"] <= 0.05), d
        if flags == ["--test", "wilcoxon"] and 0 in (d["ci_low"], d["ci_high"]):
            continue   # an end on a Walsh average: whether it is inside is the test's own verdict there
        assert (d["ci_unbounded"] or d["ci_low"] <= 0 <= d["ci_high"]) == (d["p_value"] > 0.05), d
    assert {f["metric"] for f in data["factorial"] if f["terms"]} >= {"tokens"}
    assert len(runs) == 36 and by == "condition"


def test_compare_of_a_real_sweep_reads_the_seeds_design(real_sweep):
    runs, by = load([real_sweep], audit=False)
    found = compare(runs, by, ("tokens",))
    assert found.paired and all(d.pairs == 6 and not d.dropped for d in found.differences)
    tokens = next(d for d in found.differences if (d.a, d.b) == ("a-A", "a-B"))
    assert tokens.p_value == pytest.approx(2 / 64, rel=1e-5) and tokens.diff < 0   # lower in every seed


def test_a_caller_can_pair_by_scene_and_seed_and_add_its_own_metrics(tmp_path):
    """Scenarios run under every condition (as a benchmark's are): pairs are (scene, seed), and a
    metric of the caller's own is read by its own function, through the same statistics."""
    from promptdesk.core.experiments.compare import BY_SCENE_AND_SEED
    tea = write_sweep(tmp_path / "tea", {"a-C": [4, 9, 14], "b-C": [5, 10, 15]})
    coffee = write_sweep(tmp_path / "coffee", {"a-C": [20, 30, 40], "b-C": [21, 31, 41]}, scene="coffee")
    runs = load([tea], audit=False)[0] + load([coffee], audit=False)[0]
    scores = {run.run + str(run.scene): float(run.turns) / 2 for run in runs}   # e.g. a judge's score per run

    def measure(run, metric):
        return scores[run.run + str(run.scene)] if metric == "believability" else float(getattr(run, metric))
    found = compare(runs, "condition", ("turns", "believability"), unit=BY_SCENE_AND_SEED, measure=measure)
    turns, believability = found.differences
    assert found.paired and turns.pairs == 6 and turns.diff == 1.0 and turns.p_value == pytest.approx(2 / 64, rel=1e-5)
    assert believability.pairs == 6 and believability.diff == 0.5
    assert found.to_dict()["statistics"]["unit"] == "scene and seed"
    with pytest.raises(Exception, match="different scenes"):
        compare(runs, "condition", ("turns",))                         # by seed alone: refused
