"""A benchmark sweep: 3 imported Sotopia scenes × 2 models (two "models" on the loopback server, through the
real OpenAI SDK) × 2 seeds, each run scored by one evaluator, within a budget, resumable; then `compare`'s
seven dimensions per model, paired by scene and seed, with Sotopia's mean over agents and episodes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.benchmark import model_labels, parse_model, run_name
from promptdesk.core.errors import InvalidConfig
from loopback import Recorded, Reply, loopback  # noqa: F401  (fixture)
from test_evaluation import IN_RANGE, answer
from test_scene_faults import keys, turn  # noqa: F401  (fixture: canary keys)
from test_sotopia_import import fixture_export, write

SCORES = {"gpt-5-mini": 8, "gpt-5-nano": 3}
"""The goal each model's runs are given by the scripted evaluator (it reads which model spoke)."""


def served(recorded: Recorded) -> Reply:
    body = recorded.body
    if "response_format" in body:
        model = "gpt-5-mini" if "the harbour plan" in json.dumps(body["messages"]) else "gpt-5-nano"
        return Reply(text=answer(**{**IN_RANGE, "goal": SCORES[model]}))
    words = "Let us try the harbour plan." if body["model"] == "gpt-5-mini" else "I would rather wait and see."
    return Reply(text=turn(f'[TONE: calm] "{words}"'))


@pytest.fixture
def bench(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    assert main(["import", "sotopia", str(write(tmp_path, fixture_export())), "--to", "sotopia"]) == 1
    return tmp_path


def sweep(server, *extra: str) -> int:
    url = server.url("/v1")
    return main(["sweep", "sotopia/scenes", "--models", f"openai:gpt-5-mini@{url},openai:gpt-5-nano@{url}",
                 "--evaluator", f"openai:gpt-5@{url}", "--isolation", "b", "--coordinator", "C", "--seeds", "1-2",
                 "--max-beats", "3", "--out", "sw", "--budget-usd", "5", "--concurrency", "3", *extra])


def test_three_scenes_two_models_two_seeds_in_one_resumable_budgeted_sweep(bench, loopback, capsys):
    loopback.default = served
    assert sweep(loopback) == 0
    rows = [json.loads(line) for line in (bench / "sw" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and {r["condition"] for r in rows} == {"openai:gpt-5-mini b-C", "openai:gpt-5-nano b-C"}
    assert {r["scene"] for r in rows} == {"clock-shop-ava-cyd", "ferry-slot-ava-ben", "ferry-slot-cyd-dee"}
    assert all(r["audit"] == "clean" and r["close_reason"] != "error" for r in rows)
    run = bench / "sw" / "ferry-slot-ava-ben--openai-gpt-5-nano--b-C-seed2"
    calls = [json.loads(l) for l in (run / "events.jsonl").read_text().splitlines() if '"type": "call"' in l]
    assert {c["model"] for c in calls if c["purpose"] == "turn"} == {"gpt-5-nano"}
    assert [c["model"] for c in calls if c["purpose"] == "evaluate"] == ["gpt-5", "gpt-5"]
    assert json.loads((run / "evaluation.json").read_text())["evaluations"][0]["evaluator"] == "openai:gpt-5"
    spent = json.loads((bench / "sw" / "spend.json").read_text())
    assert 0 < spent["spent_usd"] < 5
    hits = loopback.hits
    assert sweep(loopback) == 0 and loopback.hits == hits  # resumed: every run has its result, nothing is sent

    capsys.readouterr()
    assert main(["compare", "sw", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    mini, nano = "openai:gpt-5-mini b-C", "openai:gpt-5-nano b-C"
    assert found["statistics"]["unit"] == "scene and seed"
    assert found["metrics"]["sotopia.goal"][mini]["mean"] == 8 and found["metrics"]["sotopia.goal"][nano]["mean"] == 3
    goal = next(d for d in found["differences"] if d["metric"] == "sotopia.goal")
    assert goal["design"] == "paired" and goal["pairs"] == 6 and goal["diff"] == -5 and goal["p_value"] < 0.05
    means = found["evaluation"]["sotopia@openai:gpt-5"]
    assert means["goal"][mini] == {"mean": 8.0, "n": 12, "unknown": 0, "sd": 0.0, "ci95": 0.0}
    assert means["secret"][nano]["mean"] == -3.0
    assert means["overall"][mini]["mean"] == round((8 + 2 + 5 - 3 + 0 - 1 + 8) / 7, 4)

    assert main(["compare", "sw"]) == 0
    text = capsys.readouterr().out
    assert "SOTOPIA-EVAL by openai:gpt-5: mean over agents and episodes" in text
    assert "sotopia.financial_and_material_benefits" in text and "paired" in text.lower()


def test_a_benchmark_of_remote_models_must_name_its_evaluator(bench, loopback, capsys):
    url = loopback.url("/v1")
    code = main(["sweep", "sotopia/scenes", "--models", f"openai:gpt-5-mini@{url}", "--isolation", "b",
                 "--coordinator", "C", "--seeds", "1", "--out", "sw"])
    assert code == 2 and "--evaluator" in capsys.readouterr().err and loopback.hits == 0


def test_a_plan_names_its_models_and_refuses_a_malformed_one():
    assert model_labels(["openai:gpt-5@http://a/v1", "openai:gpt-5@http://b/v1", "offline"]) == [
        "openai:gpt-5", "openai:gpt-5#2", "offline"]
    assert parse_model("openai-compatible:llama3:8b@http://127.0.0.1:8080/v1") == (
        "openai-compatible", "llama3:8b", "http://127.0.0.1:8080/v1")
    assert run_name("ferry-slot", "openai:gpt-5#2", "b-C-seed1") == "ferry-slot--openai-gpt-5-2--b-C-seed1"
    with pytest.raises(InvalidConfig, match="provider:model"):
        parse_model("gpt5 please", "--models")


def test_the_reports_show_the_dimensions_per_model_and_each_actors_proof(bench, loopback, tmp_path):
    loopback.default = served
    assert sweep(loopback, "--seeds", "1") == 0
    assert main(["report", "sw", "--html", "sweep.html"]) == 0
    page = (bench / "sweep.html").read_text()
    assert "Evaluation: mean over agents and episodes" in page and "sotopia.goal" in page
    assert "openai:gpt-5-mini b-C" in page and "--models" in page and "--evaluator" in page
    assert "Zhou" in page and "ICLR 2024" in page
    run = next(p for p in (bench / "sw").iterdir() if p.is_dir() and "ferry-slot-ava-ben" in p.name)
    assert main(["report", str(run), "--html", "run.html"]) == 0
    page = (bench / "run.html").read_text()
    assert page.count("goal and secret: never sent to the other actor (audited)") == 2
    assert "about believability" in page and "<h3>SOTOPIA-EVAL by openai:gpt-5</h3>" in page


def what_was_run(page: str) -> dict[str, str]:
    """The "What was run" box of a report page, as its rows (name to text, tags dropped)."""
    import html as markup
    box = page[page.index("<h2>What was run</h2>"):page.index("</dl>")]
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", box, re.S)
    return {markup.unescape(re.sub("<[^>]+>", "", k)): markup.unescape(re.sub("<[^>]+>", "", v)) for k, v in pairs}


def test_what_was_run_names_every_scene_of_a_benchmark_and_the_evaluator_that_scored(bench, loopback):
    """A benchmark sweep plays several scenes: naming only the first as "the" scene misreports what was
    run; and the evaluator is a role with its own model, which a reader citing the scores must see."""
    loopback.default = served
    assert sweep(loopback, "--seeds", "1") == 0
    assert main(["report", "sw", "--html", "sweep.html"]) == 0
    rows = what_was_run((bench / "sweep.html").read_text())
    assert "Scene" not in rows and rows["Scenes"].startswith("3 scenes (sotopia/scenes): ")
    for title in ("Clock shop: Ava Lee and Cyd Moss", "Ferry slot: Ava Lee and Ben Ko", "Ferry slot: Cyd Moss and Dee Park"):
        assert title in rows["Scenes"]
    assert rows["Evaluator (SOTOPIA-EVAL)"] == "openai, model gpt-5"
    run = next(p for p in (bench / "sw").iterdir() if p.is_dir() and "ferry-slot-ava-ben" in p.name)
    assert main(["report", str(run), "--html", "run.html"]) == 0
    rows = what_was_run((bench / "run.html").read_text())
    assert rows["Scene"].startswith("Ferry slot: Ava Lee and Ben Ko") and rows["Evaluator (SOTOPIA-EVAL)"] == "openai, model gpt-5"


def test_what_was_run_names_each_file_of_a_benchmark_given_as_files(bench, loopback):
    """Scene files given one by one (not a folder): the report named only the first file, as if it held
    every scene, and titled the page after the first scene alone."""
    loopback.default = served
    url = loopback.url("/v1")
    files = sorted(str(p) for p in (bench / "sotopia" / "scenes").glob("*.yaml"))[:2]
    assert main(["sweep", *files, "--models", f"openai:gpt-5-mini@{url}", "--evaluator", f"openai:gpt-5@{url}",
                 "--isolation", "b", "--coordinator", "C", "--seeds", "1", "--max-beats", "2", "--out", "two"]) == 0
    assert main(["report", "two", "--html", "two.html"]) == 0
    page = (bench / "two.html").read_text()
    rows = what_was_run(page)
    assert rows["Scenes"].startswith(f"2 scenes ({files[0]}, {files[1]}): ")
    assert "<title>2 scenes: sweep two — Promptdesk</title>" in page
    # Its conditions are labelled with the model first: the legend says so with a label of its own.
    assert rows["Condition labels"] == ("model, then isolation-coordinator: openai:gpt-5-mini b-C is isolation b with "
                                        "coordinator C, every actor on openai:gpt-5-mini")


def test_sotopias_mean_counts_the_agents_of_a_run_that_was_never_scored_as_unknown(bench, loopback, capsys):
    """A model whose runs of one scene failed has no scores there: its mean is over fewer episodes than the
    other model's, and the table must say so rather than compare the two as if both were whole."""
    def failing(recorded: Recorded) -> Reply:
        body = json.dumps(recorded.body)
        if recorded.body.get("model") == "gpt-5-nano" and "Cyd Moss and Dee Park" in body:
            return Reply(status=400, error_message="bad request")
        return served(recorded)
    loopback.default = failing
    assert sweep(loopback, "--seeds", "1") == 1   # the failed runs make the sweep exit 1
    capsys.readouterr()
    assert main(["compare", "sw", "--json"]) == 0
    means = json.loads(capsys.readouterr().out)["evaluation"]["sotopia@openai:gpt-5"]
    assert means["goal"]["openai:gpt-5-mini b-C"] == {"mean": 8.0, "n": 6, "unknown": 0, "sd": 0.0, "ci95": 0.0}
    assert means["goal"]["openai:gpt-5-nano b-C"] == {"mean": 3.0, "n": 4, "unknown": 2, "sd": 0.0, "ci95": 0.0}
    assert main(["compare", "sw"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^goal +8 ± 0 \(n=6\) +3 ± 0 \(n=4, 2 unknown\)$", text, re.M)
    why = " ".join(text[text.index("Unknown scores in openai:gpt-5-nano b-C"):].split())
    assert why.startswith("Unknown scores in openai:gpt-5-nano b-C: 14 in agent-episodes never scored (their run "
                          "failed before its evaluation).")
    dropped = " ".join(text[text.index("dropped from pairs"):].replace("-\n", "-").split())  # wrapped at hyphens
    assert dropped.startswith("dropped from pairs (no run, or an unknown value, on one side): openai:gpt-5-mini b-C "
                              "vs openai:gpt-5-nano b-C: ferry-slot-cyd-dee seed 1 (echo, sotopia.believability")


def test_the_factorial_view_of_a_benchmark_says_its_subjects_are_scenes_and_seeds(bench, capsys):
    """Over several scenes the repeated-measures subject is a scene and seed, as the pairs' unit is."""
    assert main(["sweep", "sotopia/scenes", "--isolation", "a,b", "--coordinator", "B,C", "--seeds", "1-2",
                 "--max-beats", "2", "--out", "osw"]) == 0
    capsys.readouterr()
    assert main(["compare", "osw", "--metrics", "tokens", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["statistics"]["factorial"].startswith("repeated measures by scene and seed;")
    assert [f["design"] for f in data["factorial"]] == ["repeated measures by scene and seed"]
    assert main(["compare", "osw", "--metrics", "tokens"]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert ("a two-way repeated-measures ANOVA with each scene and seed as subject (statsmodels AnovaRM), on the "
            "scenes and seeds known in every cell" in prose)
    assert "with the seed as subject" not in prose
    assert "Paired by scene and seed: the conditions share scenes and seeds, so" in prose and "scene and seeds" not in prose
    # A metric it cannot analyse says why of the same subjects (goal is unknown under C: no goal markers).
    assert main(["compare", "osw", "--metrics", "goal_achieved,tokens", "--json"]) == 0
    goal = json.loads(capsys.readouterr().out)["factorial"][0]
    assert goal["untested"] == "fewer than 2 scenes and seeds known in every cell"
    # For pandas, the units a pair dropped are `scene:seed` words, never a Python tuple's repr.
    assert main(["compare", "osw", "--metrics", "goal_achieved", "--csv-differences"]) == 0
    import csv
    import io
    dropped = next(csv.DictReader(io.StringIO(capsys.readouterr().out)))["dropped"].split()
    assert dropped and all(re.fullmatch(r"[a-z0-9-]+:[12]", unit) for unit in dropped), dropped


def test_a_benchmark_over_models_and_both_choices_has_each_models_factorial_view(bench, loopback, capsys):
    """Models × isolation × coordinator: each model's own 2 × 2 is analysed, never none without a word."""
    loopback.default = served
    assert sweep(loopback, "--isolation", "a,b", "--coordinator", "B,C", "--seeds", "1-2", "--max-beats", "2") == 0
    capsys.readouterr()
    assert main(["compare", "sw", "--metrics", "tokens,turns", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(f["metric"], f["label"]) for f in data["factorial"]] == [
        ("tokens", "openai:gpt-5-mini"), ("turns", "openai:gpt-5-mini"),
        ("tokens", "openai:gpt-5-nano"), ("turns", "openai:gpt-5-nano")]
    tokens = data["factorial"][0]
    assert tokens["units"] == 6 and [t["term"] for t in tokens["terms"]] == [
        "isolation", "coordinator", "isolation × coordinator"]
    assert main(["compare", "sw", "--metrics", "tokens,turns"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^tokens \(openai:gpt-5-nano\) +isolation ", text, re.M)
    assert "Factorial view (isolation × coordinator), for each of openai:gpt-5-mini, openai:gpt-5-nano apart" in " ".join(text.split())


def test_offline_actors_are_scored_by_a_remote_evaluator_on_the_wall_clock(bench, loopback):
    """The actors' time is simulated; the evaluator's calls still wait for a real server, for real."""
    loopback.default = Reply(text=answer(**IN_RANGE), delay_s=0.05)
    assert main(["sweep", "sotopia/scenes", "--evaluator", f"openai:gpt-5@{loopback.url('/v1')}", "--isolation", "a",
                 "--coordinator", "C", "--seeds", "1", "--max-beats", "2", "--out", "sw"]) == 0
    for run in (p for p in (bench / "sw").iterdir() if p.is_dir()):
        found = json.loads((run / "evaluation.json").read_text())["evaluations"][0]
        assert all(actor["scores"] == IN_RANGE for actor in found["actors"].values()), run.name
    assert loopback.hits == 6


def test_compare_csv_gives_each_runs_dimensions_for_pandas(bench, loopback, capsys):
    loopback.default = served
    assert sweep(loopback, "--seeds", "1") == 0
    capsys.readouterr()
    assert main(["compare", "sw", "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split(",")
    assert {"sotopia.goal", "sotopia.overall", "condition", "scene"} <= set(header) and len(lines) == 7
    goals = {line.split(",")[header.index("condition")]: line.split(",")[header.index("sotopia.goal")] for line in lines[1:]}
    assert goals == {"openai:gpt-5-mini b-C": "8.0", "openai:gpt-5-nano b-C": "3.0"}


@pytest.mark.parametrize("flag", ["--models", "--evaluator"])
def test_an_offline_model_with_a_model_or_server_is_refused_naming_the_flag_given(bench, capsys, flag):
    for given in ("offline:gpt-4o", "offline@http://127.0.0.1:9/v1"):
        code = main(["sweep", "sotopia/scenes", flag, given, "--isolation", "b", "--coordinator", "C",
                     "--seeds", "1", "--out", "sw"])
        err = capsys.readouterr().err
        assert code == 2 and f"{flag}: {given!r}" in err and "`offline`" in err and "--model " not in err
        assert not (bench / "sw").exists()


def test_the_offline_evaluators_own_label_names_the_offline_model():
    assert parse_model("offline:improviser") == parse_model("offline") == ("offline", None, None)
    assert model_labels(["offline:improviser"]) == ["offline"]


def test_sotopias_overall_mean_is_taken_from_the_scores_not_from_rounded_overalls():
    from types import SimpleNamespace

    from promptdesk.core.experiments.evaluation_compare import means_json, means_text_rows

    def actor(*scores: int) -> dict:  # six known dimensions, one unknown, as evaluation.json records them
        names = ["believability", "relationship", "knowledge", "secret", "social_rules",
                 "financial_and_material_benefits"]
        return {**dict(zip(names, scores)), "goal": None, "overall": round(sum(scores) / 6, 4)}

    run = SimpleNamespace(actors=dict.fromkeys("abc"), evaluation={"sotopia@openai:gpt-5": {"actors": {
        "a": actor(0, -5, 0, -10, -10, -5), "b": actor(4, -5, 0, -10, -5, 0), "c": actor(10, 5, 10, 0, -1, 5)}}})
    comparison = SimpleNamespace(runs=[run], columns={"m b-C": [run]})
    rows = dict((r[0], r[1]) for r in means_text_rows(comparison)[0][1])
    assert rows["overall"].startswith(f"{(-30 - 16 + 29) / 18:.3g} ± ") and "-0.944 ± 5.14 (n=3" in rows["overall"]
    assert rows["overall"].endswith(", each a mean of fewer than 7 dimensions)")  # the goal is unknown for all three
    assert means_json(comparison)["sotopia@openai:gpt-5"]["overall"]["m b-C"]["mean"] == round(-17 / 18, 4)


def test_an_evaluator_that_cannot_be_built_refuses_the_sweep_before_anything_is_written(bench, loopback, capsys,
                                                                                          monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code = main(["sweep", "sotopia/scenes", "--evaluator", f"anthropic:claude-haiku-4-5@{loopback.url()}",
                 "--isolation", "b", "--coordinator", "C", "--seeds", "1", "--max-beats", "2", "--out", "sw"])
    assert code == 2 and "ANTHROPIC_API_KEY" in capsys.readouterr().err
    assert not (bench / "sw").exists() and loopback.hits == 0


def test_a_benchmark_run_that_crashed_counts_as_done_and_failed_when_the_sweep_is_run_again(bench, loopback, capsys):
    loopback.default = served
    assert sweep(loopback, "--seeds", "1") == 0
    results = bench / "sw" / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    crashed = {k: rows[0][k] for k in ("run", "isolation", "coordinator", "seed", "scene", "model")}
    rows[0] = {**crashed, "close_reason": "error", "success": False, "error": "RuntimeError: a crash"}
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))  # as a run that crashed was recorded
    capsys.readouterr()
    assert sweep(loopback, "--seeds", "1") == 1  # a run of the sweep failed: not a clean finish
    err = capsys.readouterr().err
    assert "6 runs, 6 already done (1 of them failed), 0 to run" in err and "6/6 done, 1 failed" in err


def test_an_overall_mean_over_fewer_dimensions_says_so_in_sotopias_table(bench, capsys):
    assert main(["sweep", "sotopia/scenes", "--isolation", "b", "--coordinator", "C", "--seeds", "1", "--max-beats",
                 "4", "--out", "off"]) == 0  # the offline evaluator: a secret at most, never seven dimensions
    capsys.readouterr()
    assert main(["compare", "off", "--json"]) == 0
    overall = json.loads(capsys.readouterr().out)["evaluation"]["sotopia@offline:improviser"]["overall"]["b-C"]
    assert overall["n"] + overall["unknown"] == 6 and overall["partial"] == overall["n"] > 0
    assert main(["compare", "off"]) == 0
    table = capsys.readouterr().out.split("as Sotopia's tables report it)")[1]
    assert re.search(r"^overall .*\(n=\d, .*each a mean of fewer than 7 dimensions\)", table, re.M), table


def test_two_evaluators_the_record_could_not_tell_apart_are_refused():
    from promptdesk.core.experiments.benchmark import parse_models

    with pytest.raises(InvalidConfig, match="--evaluator.*openai:gpt-5.*twice"):
        parse_models("openai:gpt-5@http://127.0.0.1:1/v1,openai:gpt-5@http://127.0.0.1:2/v1", "--evaluator")
    assert parse_models("openai:gpt-5@http://a/v1,openai:gpt-5@http://b/v1", "--models") == [
        "openai:gpt-5@http://a/v1", "openai:gpt-5@http://b/v1"]  # actors' models are told apart (#2)


def test_sotopias_mean_says_its_spread_and_why_each_unknown_score_is_unknown(bench, loopback, capsys):
    """A researcher reading the table as a paper's needs each mean's spread and, for the unknown scores, why:
    an evaluator whose answers could not be read, missing dimensions, scores out of range (kept apart)."""
    def varied(recorded: Recorded) -> Reply:
        body = recorded.body
        if "response_format" in body and "the harbour plan" not in json.dumps(body["messages"]):  # gpt-5-nano's runs
            return Reply(text="I would rate this character fairly well on most dimensions.")
        if "response_format" in body:
            scores = json.loads(answer(**IN_RANGE))
            del scores["knowledge"]
            scores["goal"]["score"] = 11
            return Reply(text=json.dumps(scores))
        return served(recorded)
    loopback.default = varied
    assert sweep(loopback, "--seeds", "1") == 0
    capsys.readouterr()
    assert main(["compare", "sw"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Each cell: the mean ± the standard deviation of the known scores (n)" in text
    assert ("Unknown scores in openai:gpt-5-mini b-C: 6 missing from the answer; 6 out of range (kept apart, never "
            "clamped).") in text
    assert "Unknown scores in openai:gpt-5-nano b-C: 42 the evaluator's answer could not be read at all." in text
    assert main(["compare", "sw", "--json"]) == 0
    means = json.loads(capsys.readouterr().out)["evaluation"]["sotopia@openai:gpt-5"]
    assert means["believability"]["openai:gpt-5-mini b-C"] == {"mean": 8.0, "n": 6, "unknown": 0, "sd": 0.0, "ci95": 0.0}
    assert means["goal"]["openai:gpt-5-nano b-C"] == {"mean": None, "n": 0, "unknown": 6, "sd": None, "ci95": None}
    assert main(["compare", "sw", "--json"]) == 0
    whys = json.loads(capsys.readouterr().out)["evaluation_unknown"]["sotopia@openai:gpt-5"]
    assert whys["openai:gpt-5-mini b-C"] == {"missing from the answer": 6, "out of range (kept apart, never clamped)": 6}
    assert whys["openai:gpt-5-nano b-C"] == {"the evaluator's answer could not be read at all": 42}


def test_an_evaluator_whose_every_call_failed_is_counted_in_sotopias_table_not_left_out(bench, loopback, capsys):
    """Every evaluation call of a sweep failed (the evaluator's server refused them): the runs themselves closed
    well, so nothing else says so; the table of means must still be there, every score unknown, saying why."""
    def refusing(recorded: Recorded) -> Reply:
        if "response_format" in recorded.body:
            return Reply(status=400, error_message="evaluator refused")
        return served(recorded)
    loopback.default = refusing
    assert sweep(loopback, "--seeds", "1") == 0
    said = " ".join(capsys.readouterr().err.split())
    assert "sweep finished — 6/6 done, 0 failed, 12 agents not scored" in said
    assert "12 agent evaluations of these runs could not be recorded" in said and "`promptdesk evaluate`" in said
    assert all(json.loads(line)["unscored"] == 2 for line in (bench / "sw" / "results.jsonl").read_text().splitlines())
    assert main(["compare", "sw"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "SOTOPIA-EVAL by openai:gpt-5: mean over agents and episodes" in text
    assert re.search(r"goal unknown \(6 unknown\) unknown \(6 unknown\)", text), text
    assert "Unknown scores in openai:gpt-5-nano b-C: 42 in agent-episodes whose evaluation call failed (" in text
    assert "evaluator refused" in text


def test_an_unfinished_benchmark_sweep_says_how_many_runs_of_how_many_scenes_are_left_out(bench, capsys):
    """A benchmark's left-out runs per condition are counted with their scenes: the note said `a-C seeds 1-3`
    (each seed listed once per scene in `--json`), which reads as the whole condition missing when most of it
    has a result, and never said that several scenes' runs were left out."""
    assert main(["sweep", "sotopia/scenes", "--isolation", "a", "--coordinator", "C", "--seeds", "1-3",
                 "--max-beats", "2", "--out", "osw"]) == 0
    results = Path("osw/results.jsonl")
    rows = results.read_text().splitlines()
    scenes = sorted({json.loads(row)["scene"] for row in rows})
    assert len(scenes) >= 2
    kept = [row for row in rows if not (json.loads(row)["scene"] == scenes[0] or json.loads(row)["run"].endswith("seed2"))]
    results.write_text("".join(row + "\n" for row in kept))  # as a sweep stopped by its budget leaves it
    left = len(rows) - len(kept)
    capsys.readouterr()
    assert main(["compare", "osw", "--metrics", "tokens"]) == 0
    prose = " ".join(capsys.readouterr().out.split())
    assert f"left out, with no result yet: a-C {left} runs ({len(scenes)} scenes, seeds 1-3) (run" in prose, prose
    assert main(["compare", "osw", "--metrics", "tokens", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["left_out"][0]
    condition = next(iter(out["seeds"]))
    assert out["seeds"][condition] == [1, 2, 3] and sum(out["scenes"][condition].values()) == left


async def test_a_stop_in_a_runs_evaluation_step_leaves_it_unscored_in_its_result_line(bench):
    """A SIGTERM that came after a run's close, while its journal and evaluation steps ran, skipped the
    evaluation: the run's result line said it was done and scored (no `unscored`), so running the sweep again
    skipped it for good and `compare` took its dimensions as never asked for. Now its agents are counted
    unscored, as for a failed evaluation call, and the progress says to run `promptdesk evaluate`."""
    import os
    import signal

    from promptdesk.core.experiments.sweep import Sweep, SweepPlan, read_results, run_with_signals
    from promptdesk.core.record.events import CallEvent

    scene = sorted(Path("sotopia/scenes").glob("*.yaml"))[0]
    plan = SweepPlan(scene=str(scene), scenes=[str(scene)], isolations=["a"], coordinators=["C"], seeds=[1],
                     characters_dirs=["sotopia/characters"], evaluators=["offline"], concurrency=1, max_beats=2)
    sweep = Sweep(plan, Path("sw-stop"))
    todo = sweep.prepare_folder()
    original = sweep._watch

    def watch(event):
        original(event)
        if isinstance(event, CallEvent) and event.purpose == "journal" and not sweep.stopping:
            os.kill(os.getpid(), signal.SIGTERM)  # the operator's Ctrl-C, after the close
    sweep._watch = watch
    await run_with_signals(sweep, todo)
    [row] = read_results(Path("sw-stop"))
    assert row["close_reason"] == "max_beats_exceeded" and row["success"] is True
    assert row["unscored"] == 2, row
