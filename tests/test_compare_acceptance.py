"""Acceptance checks of `compare` and the reports on inputs a researcher's folders hold: a cost that
is not a number in a record, and the commands a report gives to run the experiment again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from test_compare_design import write_sweep


def test_a_cost_that_is_not_a_number_is_unknown_not_a_crash(tmp_path, capsys):
    """A call whose recorded cost is NaN (a damaged or hand-edited record): that run's cost is unknown,
    left out of the mean and of its pair, and the rest of the comparison stands."""
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [3, 4, 5], "b-C": [6, 8, 7]})
    log = sweep / "a-C-seed2" / "events.jsonl"
    lines = log.read_text().splitlines()
    call = {"t": 1.0, "from": "coordinator", "target": "alice", "type": "call", "text": "turn call", "beat": 0,
            "provider": "offline", "model": "improviser", "input_tokens": 10, "output_tokens": 5, "cost_usd": float("nan")}
    log.write_text("\n".join([lines[0], json.dumps(call), *lines[1:]]) + "\n")
    assert main(["compare", str(sweep), "--json", "--metrics", "cost_usd,turns"]) == 0
    data = json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    assert next(r for r in data["runs"] if r["run"] == "a-C-seed2")["cost_usd"] is None
    assert data["metrics"]["cost_usd"]["a-C"] == {"mean": 0.0, "sd": 0.0, "n": 2, "unknown": 1}
    cost = next(d for d in data["differences"] if d["metric"] == "cost_usd")
    assert cost["pairs"] == 2 and cost["dropped"] == [2]
    turns = next(d for d in data["differences"] if d["metric"] == "turns")
    assert turns["pairs"] == 3 and turns["diff"] == 3.0


def test_a_runs_run_with_keeps_the_beat_limit_and_suggestions_it_played_under():
    """`--max-beats 3 --suggested-events inject` changed what the run did: the command that plays it again
    names them (the start records both), and a pace."""
    from promptdesk.core.experiments.report_header import run_command
    from promptdesk.core.record.events import parse_event_json
    start = {"t": 0.0, "from": "coordinator", "type": "start", "text": "start", "beat": 0, "isolation": "b",
             "coordinator": "B", "seed": 4, "scene": {"name": "ferry", "file": "ferry.yaml"},
             "providers": {"rosa": "offline:improviser"}, "suggested_events": "inject", "max_beats": 3, "pace_s": 0.5}
    assert run_command([parse_event_json(json.dumps(start))]) == (
        "promptdesk --batch ferry.yaml --isolation b --coordinator B --provider offline --seed 4 --max-beats 3 "
        "--suggested-events inject --pace 0.5")
    start.update(coordinator="C", pace_s=0.0)        # coordinator C suggests nothing: no flag for it
    assert run_command([parse_event_json(json.dumps(start))]).endswith("--seed 4 --max-beats 3")
    start["scene"]["format"] = "roundtable"          # counted in rounds: `--max-beats` would be refused
    assert run_command([parse_event_json(json.dumps(start))]).endswith("--seed 4")


def test_a_sweeps_run_with_keeps_every_flag_its_plan_holds(tmp_path):
    """The characters folder, the server, the protocol and the provider settings are the plan's (a rerun
    without them plays other runs, or is refused as another plan): the command names them."""
    from promptdesk.core.experiments.report_header import sweep_command
    from promptdesk.core.experiments.sweep_plan import SweepPlan
    plan = SweepPlan(scene="scenes/ferry.yaml", isolations=["a", "b"], coordinators=["A"], seeds=[1, 2, 3],
                     provider="openai-compatible", model="qwen", base_url="http://127.0.0.1:8080/v1", max_beats=5,
                     characters_dirs=["my cast"], protocol="json",
                     provider_settings={"timeout_s": 30.0, "send_ahead": True, "schema_format": "json_object"})
    assert sweep_command(plan) == (
        "promptdesk sweep scenes/ferry.yaml --isolation a,b --coordinator A --seeds 1-3 --provider openai-compatible "
        "--model qwen --base-url http://127.0.0.1:8080/v1 --protocol json --max-beats 5 --characters-dir 'my cast' "
        "--timeout 30.0 --send-ahead --schema-format json_object")
    # A budget stops runs (and keeps others from starting): the command that runs the sweep again gives it, as a
    # run's "Run with" gives its own `--budget-usd`.
    budgeted = SweepPlan(scene="scenes/ferry.yaml", isolations=["a"], coordinators=["C"], seeds=[1, 2],
                         provider="openai", model="gpt-4o-mini", budget_usd=0.25)
    assert sweep_command(budgeted).endswith("--seeds 1-2 --provider openai --model gpt-4o-mini --budget-usd 0.25")


def test_the_cite_box_writes_a_small_p_as_p_below_not_p_equals_below(tmp_path, capsys):
    """Twelve seeds, b lower in every one: the example row's p is under 0.001, cited `p < 0.001`."""
    from promptdesk.core.experiments.compare import compare, load
    from promptdesk.core.experiments.compare_text import cite
    spread = [3, 30, 8, 22, 14, 27, 5, 18, 11, 25, 9, 16]
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [n + 2 for n in spread], "b-C": spread})
    runs, by = load([sweep], audit=False)
    text = cite(compare(runs, by, ("turns",)))
    assert "p < 0.001, Holm-adjusted p < 0.001" in text and "= <" not in text


def test_the_factorial_view_says_how_many_seeds_it_used_and_which_it_left_out(tmp_path, capsys):
    """A 2 × 2 sweep whose b-C run of seed 3 failed: the repeated-measures ANOVA runs on the seeds known in
    every cell, and the text says n and the seed left out (the JSON already did)."""
    sweep = write_sweep(tmp_path / "sweep", {"a-B": [3, 9, 4, 12, 6], "a-C": [4, 11, 4, 13, 8],
                                             "b-B": [5, 10, 7, 15, 9], "b-C": [6, 13, None, 15, 12]})
    assert main(["compare", str(sweep), "--metrics", "turns"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Seeds not known in every cell are left out of it (n = 4 seeds, 3 dropped)." in text
    assert main(["compare", str(sweep), "--metrics", "turns", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["factorial"][0]["dropped"] == [3]


def test_a_run_stopped_before_its_second_beat_played_one_beat():
    """Every actor's provider refused the key in beat 0: the run stops at the safe point before beat 1, and
    its close is numbered 1. It played one beat (as the console counts it), not two: `beats` in `compare`
    and `totalBeats` in `metadata.json` say 1. A run that closes in its last beat is counted as before."""
    from promptdesk.core.experiments.metrics import run_metrics
    from promptdesk.core.record import outputs
    from promptdesk.core.record.events import parse_event_json
    start = {"t": 0.0, "from": "coordinator", "type": "start", "text": "start", "beat": 0, "scene": {"name": "tea"},
             "cast": {"rosa": "Rosa"}, "isolation": "b", "coordinator": "C", "seed": 1}
    played = [start, {"t": 0.0, "from": "coordinator", "type": "beat", "text": "Turn 0: Rosa", "beat": 0, "target": "rosa"},
              {"t": 0.1, "from": "coordinator", "type": "call", "text": "turn call", "beat": 0, "target": "rosa",
               "provider": "openai", "ok": False},
              {"t": 0.1, "from": "coordinator", "type": "system", "text": "Rosa unable to respond", "beat": 0, "target": "rosa"},
              {"t": 0.1, "from": "coordinator", "type": "beat_end", "text": "Beat 0 played", "beat": 0}]
    stopped = [parse_event_json(json.dumps(e)) for e in played + [
        {"t": 0.2, "from": "coordinator", "type": "close", "text": "Run stopped", "beat": 1, "reason": "provider-error"}]]
    assert outputs.beats_played(stopped) == 1 and run_metrics(stopped).beats == 1
    assert outputs.metadata(stopped)["totalBeats"] == 1
    closed = [parse_event_json(json.dumps(e)) for e in played + [
        {"t": 0.2, "from": "coordinator", "type": "close", "text": "Max", "beat": 0, "reason": "max_beats_exceeded"}]]
    assert outputs.beats_played(closed) == 1


def test_a_runs_run_with_says_it_ran_without_journals_and_under_a_budget(tmp_path):
    """`--journals none` and `--budget-usd` are in the run's start record, not its log: the report reads
    them there, so that its command plays the run again with the same memories (none) and limit."""
    from helpers import CHARACTERS, SCENES
    out = tmp_path / "run"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C", "--seed", "2",
                 "--max-beats", "3", "--journals", "none", "--budget-usd", "0.5", "--characters-dir", str(CHARACTERS),
                 "--out", str(out), "--quiet"]) == 0
    page = tmp_path / "run.html"
    assert main(["report", str(out), "--html", str(page)]) == 0
    assert ("<code>promptdesk --batch the-apology.yaml --isolation a --coordinator C --provider offline --seed 2 "
            "--max-beats 3 --journals none --budget-usd 0.5</code>") in page.read_text()


def test_the_readme_says_how_the_offline_judge_decides_a_goal():
    """Issue 34: offline results must not read as a model's judgement; the README says how the judge decides."""
    from helpers import ROOT
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "decides a goal by matching words, not by understanding" in readme
    assert "docs/guide/offline-improviser.md#how-the-offline-judge-decides-a-goal" in readme
