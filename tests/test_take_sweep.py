"""`promptdesk sweep --branch-from RUN_DIR --at-beat K --event TEXT --seeds 1-10`: one run taken again from
beat K over many seeds, with the change (`change`) and without it (`retake`), compared with the
statistics of `compare`. A take's inherited beats are never sent again nor counted against the budget."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.spend import logged_spend
from promptdesk.core.experiments.sweep import read_results
from promptdesk.core.record.prompt_log import read_prompts
from promptdesk.core.record.recorder import read_events
from helpers import example_scene, make_scene
from test_branch import batch, from_beat, own_part, scene_file
from test_scene_faults import keys, remote_cast, turn  # noqa: F401  (fixture)


def sweep(parent: Path, out: Path, *extra: str, seeds: str = "1-3") -> int:
    return main(["sweep", "--branch-from", str(parent), "--at-beat", "4", "--seeds", seeds, "--out", str(out), *extra])


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("take-sweep")
    batch(scene_file(folder), folder / "parent", seed=2)
    assert sweep(folder / "parent", folder / "sweep", "--event", "The fire alarm goes off") == 0
    return folder


def test_a_sweep_of_takes_runs_a_retake_and_a_take_with_the_change_per_seed(swept):
    out, parent = swept / "sweep", swept / "parent"
    names = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert names == [f"{c}-seed{s}" for c in ("change", "retake") for s in (1, 2, 3)]
    rows = {r["run"]: r for r in read_results(out)}
    assert {r["condition"] for r in rows.values()} == {"retake", "change"} and len(rows) == 6
    for name in names:
        event = next(e for e in read_events(out / name) if e.type == "branch")
        seed = int(name.rsplit("seed", 1)[1])
        change = {"seed": seed} if name.startswith("retake") else {"event": "The fire alarm goes off", "seed": seed}
        assert (event.beat, event.model_extra["change"]) == (4, change)
        assert rows[name]["audit"] == "clean"
    assert own_part(out / "retake-seed2") == from_beat(parent, 4), "the parent's own seed plays the parent again"
    whole = json.loads((parent / "metadata.json").read_text())["totalBeats"]
    assert rows["retake-seed2"]["beats"] == whole - 4, "results are measured from the branch beat"


def test_compare_and_report_of_a_sweep_of_takes_give_the_statistics_by_condition(swept, tmp_path, capsys):
    out = swept / "sweep"
    assert main(["compare", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["by"] == "condition" and result["columns"] == ["retake", "change"]
    assert result["metrics"]["turns"]["retake"]["n"] == 3
    assert {(d["a"], d["b"]) for d in result["differences"]} == {("retake", "change")}
    assert result["design"] == "paired"                # retake-seedN and change-seedN share seed N
    assert {d["pairs"] for d in result["differences"] if d["untested"] is None} == {3}
    page = tmp_path / "sweep.html"
    assert main(["report", str(out), "--html", str(page)]) == 0
    html = page.read_text()
    assert "Sweep of takes" in html and 'world event &quot;The fire alarm goes off&quot;' in html
    assert html.count("<td>retake-seed") == 3 and "Differences between conditions" in html
    assert "What was run" in html and "How to cite these numbers" in html and "paired by seed" in html
    assert "<dt>Seeds</dt><dd>1-3</dd>" in html        # the seeds the takes played with, not the parent's (2)
    import html as markup                              # "Run with" is a command that runs it again, flags and all
    assert ("<code>promptdesk sweep --branch-from parent --at-beat 4 --event 'The fire alarm goes off' --seeds 1-3"
            "</code>") in markup.unescape(html)
    assert not re.search(r"<td>(True|False)</td>", html)


def test_an_unfinished_sweep_of_takes_says_what_is_left_out_and_one_with_none_done_is_refused(swept, tmp_path, capsys):
    import shutil
    out = tmp_path / "sweep"
    shutil.copytree(swept / "sweep", out)
    rows = read_results(out)
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows if r["run"] != "change-seed3"))
    page = tmp_path / "sweep.html"
    assert main(["report", str(out), "--html", str(page)]) == 0
    text = " ".join(page.read_text().split())
    assert "5 of 6 planned runs have a result; left out, with no result yet: change seed 3" in text
    assert main(["compare", str(out)]) == 0
    assert "left out, with no result yet: change seed 3" in " ".join(capsys.readouterr().out.split())
    (out / "results.jsonl").write_text("")
    for command in (["report", str(out), "--html", str(page)], ["compare", str(out)]):
        assert main(command) == 2
        assert "a sweep of takes with no finished take yet; run the sweep first" in capsys.readouterr().err


def test_sweeps_of_takes_of_other_parents_or_beats_do_not_pair_with_it_unless_unpaired(swept, tmp_path, capsys):
    """A seed of a take draws the continuation from its parent's beat K: takes from another beat (or
    another parent), or whole runs of a sweep, draw other lines with the same seed, so pairing them by
    seed would claim a design that is not there. Two sweeps of takes of one parent from one beat (two
    changes) do pair."""
    from test_compare import make_sweep
    out = swept / "sweep"
    assert main(["sweep", "--branch-from", str(swept / "parent"), "--at-beat", "3", "--seeds", "1-3", "--out",
                 str(tmp_path / "beat3"), "--event", "The fire alarm goes off"]) == 0
    whole = make_sweep(tmp_path / "whole")
    capsys.readouterr()
    for other, says in ((tmp_path / "beat3", "takes of parent from beat 3"), (whole, "a sweep of whole runs")):
        assert main(["compare", str(out), str(other), "--metrics", "turns"]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "takes of parent from beat 4" in err and says in err and "--unpaired" in err
    assert main(["compare", str(out), str(tmp_path / "beat3"), "--metrics", "turns", "--unpaired"]) == 0
    assert main(["compare", str(out), str(tmp_path / "beat3"), "--metrics", "turns", "--tui"]) == 2
    capsys.readouterr()
    again = tmp_path / "again"
    assert sweep(swept / "parent", again, "--note", "Slow down", seeds="1-3") == 0
    assert main(["compare", str(out), str(again), "--metrics", "turns", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["design"] == "paired"


@pytest.mark.parametrize("plan, says", [("[1, 2]\n", "a sweep of takes' plan is a mapping of keys"),
                                         ("seeds: [1]\n", "parent is missing"),
                                         ("parent: p\nat_beat: four\nseeds: [1]\n", "at_beat is not a whole number"),
                                         ("at_beat: [\n", "invalid YAML")])
def test_a_damaged_plan_of_takes_is_named_with_what_is_wrong_never_a_traceback(swept, tmp_path, capsys, plan, says):
    import shutil
    out = tmp_path / "sweep"
    shutil.copytree(swept / "sweep", out)
    (out / "takes.yaml").write_text(plan)
    for command in (["compare", str(out)], ["report", str(out), "--html", str(tmp_path / "p.html")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert str(out / "takes.yaml") in err and says in err and "Traceback" not in err


def test_a_take_stopped_before_its_first_beat_resumes_with_its_change(swept, tmp_path, capsys):
    """A take stopped (a signal, the budget) after its `branch` and its change were recorded but before
    its first beat began: run again, it must continue as that take, the change delivered, its own seed
    kept, and play what the take played uninterrupted; not as a copy of the parent without the change."""
    import shutil
    out = tmp_path / "sweep"
    shutil.copytree(swept / "sweep", out)
    take = out / "change-seed1"
    whole = read_events(take)
    lines = (take / "events.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "beat" and json.loads(line)["beat"] == 4)
    assert [json.loads(line)["type"] for line in lines[at - 2:at]] == ["branch", "event"]
    stop = {"t": json.loads(lines[at - 1])["t"], "from": "coordinator", "text": "Scene stopped by the operator",
            "beat": 4, "type": "close", "reason": "stop", "goal_achieved": None}
    (take / "events.jsonl").write_text("\n".join(lines[:at] + [json.dumps(stop)]) + "\n")
    assert_swept_again_as_before(swept, out, take, whole, capsys)
    assert next(r for r in read_results(out) if r["run"] == "change-seed1")["seed"] == 1


def test_the_same_sweep_again_resumes_and_another_plan_is_refused(swept, capsys):
    out = swept / "sweep"
    before = (out / "results.jsonl").read_text()
    assert sweep(swept / "parent", out, "--event", "The fire alarm goes off") == 0
    assert (out / "results.jsonl").read_text() == before
    assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", "--retry-failed") == 0
    assert (out / "results.jsonl").read_text() == before and not (out / "results.failed.jsonl").exists()
    assert sweep(swept / "parent", out, "--event", "Something else") == 2
    assert "different plan (event differs)" in capsys.readouterr().err


def test_a_sweep_of_takes_refuses_what_it_cannot_run(swept, tmp_path, capsys):
    assert sweep(swept / "parent", tmp_path / "a") == 2
    assert "give --event TEXT or --note TEXT" in capsys.readouterr().err
    assert main(["sweep", "--branch-from", str(swept / "parent"), "--at-beat", "99", "--event", "x", "--seeds", "1",
                 "--out", str(tmp_path / "b")]) == 2
    assert "never began beat 99" in capsys.readouterr().err
    assert sweep(swept / "parent", tmp_path / "c", "--note", "Hush", "--to", "zed") == 2
    assert "--to zed: names no actor" in capsys.readouterr().err
    assert not any((tmp_path / n).exists() for n in "abc")


async def test_takes_on_real_models_never_resend_nor_pay_again_what_they_inherit(run_scene, tmp_path, capsys):
    """Through the real Anthropic SDK: only requests from beat 3 on reach the server, and the budget counts
    the takes' own calls only (a budget below what they would cost with their inherited beats holds)."""
    from loopback import LoopbackServer, Reply

    line = Reply(text=turn('[TO: Bob] "Go on."', "Listen."), usage={"input_tokens": 100_000})
    with LoopbackServer(line) as server:
        scene = example_scene("the-apology", limits={"max_beats": 5}, cast=remote_cast(server, "alice", "bob", "charlie"))
        parent = await run_scene(scene, isolation="b", coordinator="C")
        sent = server.hits
        costs = lambda run, own: sum(e.cost_usd for e in read_events(run)  # noqa: E731
                                     if e.type == "call" and (e.beat >= 3) == own)
        inherited = costs(parent.dir, False)
        out = tmp_path / "sweep"
        args = ["sweep", "--branch-from", str(parent.dir), "--at-beat", "3", "--event", "The fire alarm", "--seeds", "1-2",
                "--out", str(out), "--concurrency", "1"]
        own = 4 * costs(parent.dir, True)
        budget = own + inherited  # below what four takes would cost if what they inherit were paid again
        assert inherited > 0 and own + 4 * inherited > budget
        assert await asyncio.to_thread(main, [*args, "--budget-usd", f"{budget:.4f}"]) == 0
        takes = [p for p in out.iterdir() if p.is_dir()]
        assert len(takes) == 4
        assert server.hits - sent == sum(1 for t in takes for r in read_prompts(t) if r.beat >= 3)
        spent = json.loads((out / "spend.json").read_text())["spent_usd"]
        paid = sum(costs(t, True) for t in takes)
        assert spent == pytest.approx(paid, abs=1e-5) and paid == pytest.approx(own, rel=0.01) and spent < budget
        assert await asyncio.to_thread(main, [*args, "--budget-usd", f"{budget:.4f}"]) == 0
        assert server.hits - sent == sum(1 for t in takes for r in read_prompts(t) if r.beat >= 3)
        assert logged_spend(out) == pytest.approx(paid), "an invocation reading the logs counts own calls only"
        assert json.loads((out / "spend.json").read_text())["spent_usd"] == pytest.approx(paid, abs=1e-5)


async def test_a_sweep_of_takes_of_a_roundtable_is_refused(run_scene, capsys):
    run = await run_scene(make_scene(format="roundtable", roundtable={"topic": "Four-day sprints?"}),
                          isolation="a", coordinator="C", on_escalate="continue")
    out = run.dir.parent / "sweep"
    assert await asyncio.to_thread(sweep, run.dir, out, "--event", "x") == 2
    assert "only scene runs can be branched" in capsys.readouterr().err and not out.exists()


def test_a_sweep_of_takes_that_cannot_write_stops_as_a_recording_error_and_resumes(swept, tmp_path, capsys):
    """A sweep of takes keeps every piece of a sweep's state: a failed write stops it cleanly, as a sweep."""
    out = tmp_path / "takes"
    assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", seeds="1") == 0
    (out / "results.jsonl").unlink()
    (out / "results.jsonl").mkdir()                          # a folder where the results file should be
    capsys.readouterr()
    assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", seeds="1") == 1
    err = capsys.readouterr().err
    assert f"RECORDING_ERROR: could not write {out / 'results.jsonl'}" in err and "Traceback" not in err
    (out / "results.jsonl").rmdir()
    assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", seeds="1") == 0
    assert len(read_results(out)) == 2


@pytest.mark.parametrize("limit", [8, 200])
def test_a_sweep_of_takes_on_a_full_disk_before_any_run_exits_1_as_a_sweep_does(swept, tmp_path, limit):
    """A write that fails while the plan is checked or written is a recording error (exit 1, resumable),
    as it is for a sweep of runs, never a refusal of the input (exit 2)."""
    from test_sweep_faults import sweep_under_file_limit

    out = tmp_path / "takes"
    args = ["sweep", "--branch-from", str(swept / "parent"), "--at-beat", "4", "--seeds", "1", "--out", str(out),
            "--event", "The fire alarm goes off"]
    done = sweep_under_file_limit(limit, args, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "RECORDING_ERROR: could not write" in done.stderr and "Traceback" not in done.stderr


def test_a_sweep_of_takes_resumes_from_any_working_folder_and_inherits_a_flag_not_given(swept, tmp_path, monkeypatch,
                                                                                         capsys):
    """The plan knows its parent by its resolved path and identity, not as typed: started with a relative
    `--branch-from`, the same sweep goes on from another folder with another relative path, and a
    `--base-url` given once is no difference when it is not given again."""
    out = tmp_path / "takes"
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(swept)
    args = ["--at-beat", "4", "--event", "The fire alarm goes off", "--out", str(out)]
    assert main(["sweep", "--branch-from", "parent", "--seeds", "1", *args]) == 0
    monkeypatch.chdir(tmp_path / "deep" / "er")
    relative = Path("..") / ".." / Path(*[".."] * len(tmp_path.parts[1:])) / swept.relative_to("/") / "parent"
    assert main(["sweep", "--branch-from", str(relative), "--seeds", "1", *args]) == 0
    assert main(["sweep", "--branch-from", str(relative), "--seeds", "1-2", *args]) == 2
    assert "different plan (seeds differ)" in capsys.readouterr().err
    assert len(read_results(out)) == 2
    (swept / "other").mkdir(exist_ok=True)
    assert main(["sweep", "--branch-from", str(swept / "other" / ".." / "parent"), "--seeds", "1", *args]) == 0


async def test_a_budget_stopped_sweep_of_takes_goes_on_with_a_higher_budget(run_scene, tmp_path, monkeypatch, capsys):
    """Stopped by its budget, started with a relative parent: the same command with a higher budget
    (and without the `--base-url` it was given) continues it."""
    from loopback import LoopbackServer, Reply

    line = Reply(text=turn('[TO: Bob] "Go on."', "Listen."), usage={"input_tokens": 100_000})
    with LoopbackServer(line) as server:
        scene = example_scene("the-apology", limits={"max_beats": 6}, cast=remote_cast(server, "alice", "bob", "charlie"))
        parent = await run_scene(scene, isolation="b", coordinator="C")
        monkeypatch.chdir(parent.dir.parent)
        args = ["sweep", "--branch-from", parent.dir.name, "--at-beat", "3", "--event", "The fire alarm", "--seeds", "1",
                "--out", str(tmp_path / "takes"), "--concurrency", "1"]
        one_beat = sum(e.cost_usd for e in read_events(parent.dir) if e.type == "call" and e.beat == 3)
        given = ["--base-url", server.url()]  # given once: not giving it again is no difference
        assert await asyncio.to_thread(main, [*args, *given, "--budget-usd", f"{one_beat * 1.5:.4f}"]) == 1
        assert "budget" in capsys.readouterr().err.lower()
        assert len(read_results(tmp_path / "takes")) < 2
        assert await asyncio.to_thread(main, [*args, "--budget-usd", "1000"]) == 0
        assert len(read_results(tmp_path / "takes")) == 2
        # What a take paid is its own calls, those of the beat its resume played again (superseded) included.
        from promptdesk.core.record.seams import superseded_calls
        cut = {t: [c for c in superseded_calls(tmp_path / "takes" / t) if c.beat >= 3] for t in ("retake-seed1", "change-seed1")}
        assert any(cut.values())
        for row in read_results(tmp_path / "takes"):
            own = [e for e in read_events(tmp_path / "takes" / row["run"]) if e.type == "call" and e.beat >= 3]
            paid = own + cut[row["run"]]
            if any(e.cost_usd is None for e in paid):  # a call the budget's stop cut off: what it was billed is unknown
                assert row["cost_usd"] is None and row["run"] == "retake-seed1"
            else:
                assert row["cost_usd"] == pytest.approx(sum(e.cost_usd for e in paid), abs=1e-6)


def test_a_take_killed_before_it_began_is_taken_again_with_its_change(swept, tmp_path, capsys):
    """A take of the sweep killed while it was being set up (its log holds only what it copied from the
    parent, no `branch` event): the sweep run again sets it aside and takes it afresh, change and all,
    and plays what the take played uninterrupted; never the parent again without the change."""
    import shutil
    out = tmp_path / "sweep"
    shutil.copytree(swept / "sweep", out)
    take = out / "change-seed2"
    whole = read_events(take)
    lines = (take / "events.jsonl").read_text().splitlines()
    opened = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "branch")
    (take / "events.jsonl").write_text("\n".join(lines[:opened]) + "\n")
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json"):
        (take / name).unlink()
    assert_swept_again_as_before(swept, out, take, whole, capsys)
    assert any(p.name.startswith("change-seed2") and p != take for p in out.iterdir()), "the cut folder is set aside"


def assert_swept_again_as_before(swept, out, take, whole, capsys):
    """With its result line gone, the same take sweep plays `take` again: the same change at the same
    beat, and the same lines from beat 4 on as the whole take `whole` had."""
    rows = [r for r in read_results(out) if r["run"] != take.name]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert sweep(swept / "parent", out, "--event", "The fire alarm goes off") == 0
    capsys.readouterr()
    again = read_events(take)
    changes = lambda events: [(e.type, e.beat, e.text) for e in events if e.type in ("branch", "event", "note")]  # noqa: E731
    assert changes(again) == changes(whole) and changes(whole)[0][0] == "branch"
    spoken = lambda events: [(e.beat, e.from_, e.text) for e in events if e.type == "speak" and e.beat >= 4]  # noqa: E731
    assert spoken(again) == spoken(whole)


def test_a_sweep_of_takes_takes_the_provider_flags_branch_takes(swept, tmp_path, capsys):
    """As `branch` and `sweep` do, a sweep of takes accepts `--provider`, `--model` and the provider
    settings (`--timeout`, `--max-concurrency`, `--schema-format`, `--journal-timeout`, `--send-ahead`):
    every take, with the change and without it, plays from beat K on that server, through the real SDK,
    with those settings; the same command without them resumes, and another model is another plan."""
    from loopback import LoopbackServer, Reply

    out = tmp_path / "moved"
    with LoopbackServer(Reply(text=turn('"Go on."', "Listen."))) as server:
        args = ["--event", "The fire alarm goes off", "--provider", "openai-compatible", "--model", "local-model",
                "--base-url", server.url("/v1"), "--timeout", "30", "--max-concurrency", "1"]
        assert sweep(swept / "parent", out, *args, seeds="1") == 0, capsys.readouterr().err
        assert server.hits > 0 and {r.body["model"] for r in server.requests} == {"local-model"}
        for name in ("retake-seed1", "change-seed1"):
            change = next(e for e in read_events(out / name) if e.type == "branch").model_extra["change"]
            assert (change["provider"], change["model"]) == ("openai-compatible", "local-model"), change
            assert change["settings"] == {"timeout_s": 30.0, "max_concurrency": 1}, change
        hits = server.hits
        assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", seeds="1") == 0
        assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", "--model", "local-model", seeds="1") == 0
        assert server.hits == hits, "resumed: every take has its result"
        assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", "--provider", "openai-compatible",
                     "--model", "another", "--base-url", server.url("/v1"), seeds="1") == 2
        assert "different plan (model differs)" in capsys.readouterr().err


def test_a_sweep_of_takes_on_a_model_is_reported_as_played_on_it_not_as_its_offline_parent(swept, tmp_path, capsys):
    """The parent played on the offline improviser; its takes, from beat K, on a model. The report said every
    actor was the "offline improviser (not a model)" with simulated time, compare and metrics labelled the
    takes' durations simulated, and "Run with" left out the provider flags (a rerun played offline)."""
    import html as markup
    from loopback import LoopbackServer, Reply

    out = tmp_path / "on-a-model"
    with LoopbackServer(Reply(text=turn('"Go on."', "Listen."))) as server:
        url = server.url("/v1")
        assert sweep(swept / "parent", out, "--event", "The fire alarm goes off", "--provider", "openai-compatible",
                     "--model", "local-model", "--base-url", url, "--timeout", "30", seeds="1") == 0
    assert main(["report", str(out), "--html", str(tmp_path / "takes.html")]) == 0
    page = markup.unescape(re.sub(r"<[^>]+>", " ", (tmp_path / "takes.html").read_text()))
    box = " ".join(page[page.index("What was run"):page.index("How to cite")].split())
    assert "offline improviser" not in box and "openai-compatible, model local-model" in box
    assert "Time real time" in box
    assert (f"--seeds 1 --provider openai-compatible --model local-model --base-url {url} --timeout 30.0"
            in box)
    capsys.readouterr()
    assert main(["compare", str(out), "--metrics", "duration_s,turns"]) == 0
    assert "simulated" not in capsys.readouterr().out
    assert main(["metrics", str(out / "change-seed1"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["clock"] == "real"
    # One take's own page: its `branch` command keeps the provider settings it was taken with.
    assert main(["report", str(out / "change-seed1"), "--html", str(tmp_path / "one.html")]) == 0
    one = markup.unescape((tmp_path / "one.html").read_text())
    assert "--provider openai-compatible --model local-model --timeout 30.0</code>" in one


def test_a_sweep_of_takes_from_dot_is_named_by_the_run(swept, tmp_path, monkeypatch):
    """`cd runs/kitchen && promptdesk sweep --branch-from . …` made `sweeps/-takes4-<stamp>`: the run's name was
    '' (a folder name starting with a dash, which a later command reads as a flag)."""
    import shutil

    shutil.copytree(swept / "parent", tmp_path / "parent")
    monkeypatch.chdir(tmp_path / "parent")
    assert main(["sweep", "--branch-from", ".", "--at-beat", "4", "--seeds", "1", "--event", "A knock"]) == 0
    made = [p.name for p in (tmp_path / "parent" / "sweeps").iterdir()]
    assert len(made) == 1 and made[0].startswith("parent-takes4-"), made
