"""An imported Sotopia scene played offline in both isolations, audited clean, evaluated; and the proof Sotopia
lacks: an audit that catches a goal or a secret planted in the other actor's request, whatever the
evaluator's reasoning quotes, with the per-actor line the reports show."""

from __future__ import annotations

import asyncio
import re
import json
from pathlib import Path

import pytest

from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.casting.scene_file import load_scene
from promptdesk.core.cli.main import main
from promptdesk.core.clock import VirtualClock
from promptdesk.core.experiments.evaluation_view import PROVEN, isolation_line
from promptdesk.core.record.audit import audit_run
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys  # noqa: F401  (fixture: canary keys)
from test_sotopia_import import C, P, SECRETS, agent, fixture_export, write

GOAL = "Get the last slot for your cargo"


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    out = tmp_path / "sotopia"
    assert main(["import", "sotopia", str(write(tmp_path, fixture_export())), "--to", str(out)]) == 1
    return out


async def play(tmp_path: Path, imported: Path, isolation: str, seed: int = 5) -> Path:
    scene = load_scene(imported / "scenes" / "ferry-slot-ava-ben.yaml")
    session = build_session(scene, RunOptions(isolation=isolation, coordinator="C", runs_root=tmp_path / "runs",
                                              cwd=tmp_path, clock=VirtualClock(), seed=seed, journals="none",
                                              write_character_journals=False))
    result = await session.run()
    assert result.close_reason != "error"
    return result.run_dir


def plant(run_dir: Path, to: str, text: str) -> None:
    """Append to prompts.jsonl a request to `to` that carries `text` (as a leaking engine would send it)."""
    path = run_dir / "prompts.jsonl"
    lines = path.read_text().splitlines()
    request = {"system": "You are an actor.", "messages": [{"role": "user", "content": f"BEAT 3\n\n{text}"}]}
    path.write_text("\n".join([*lines, json.dumps({"id": len(lines) + 1, "t": 99.0, "to": to, "purpose": "turn",
                                                   "beat": 3, "request": request})]) + "\n")


@pytest.mark.parametrize("isolation", ["a", "b"])
async def test_an_imported_scene_plays_offline_audits_clean_and_is_evaluated(tmp_path, imported, isolation):
    run_dir = await play(tmp_path, imported, isolation)
    report = audit_run(run_dir)
    assert report.clean, [leak.describe() for leak in report.leaks] + report.problems
    prompts = (run_dir / "prompts.jsonl").read_text()
    turns = [json.loads(line) for line in prompts.splitlines()]
    to_ben = "".join(json.dumps(r) for r in turns if r["to"] == "ben-ko")
    assert SECRETS["A1"] not in to_ben and "your cargo spoils" not in to_ben
    private = json.loads((run_dir / "private.json").read_text())
    assert private["cast"]["ava-lee"]["secret"] == SECRETS["A1"]
    assert private["scene"]["benchmark"]["combo"] == "K1"
    evaluation = json.loads((run_dir / "evaluation.json").read_text())["evaluations"][0]
    assert set(evaluation["actors"]) == {"ava-lee", "ben-ko"}
    assert all(isolation_line(report, slug) == PROVEN for slug in ("ava-lee", "ben-ko"))


@pytest.mark.parametrize(("planted", "kinds"), [(SECRETS["A1"], {"secret"}),  # seven words: a profile's shingle is eight
                                                (f"{GOAL} (Extra information: your cargo spoils tomorrow",
                                                 {"perspective"})])
async def test_the_audit_catches_a_goal_or_a_secret_planted_in_the_other_actors_request(tmp_path, imported, planted,
                                                                                       kinds):
    run_dir = await play(tmp_path, imported, "b")
    plant(run_dir, "ben-ko", planted)
    report = audit_run(run_dir)
    leaks = [leak for leak in report.leaks if leak.owner == "ava-lee" and leak.recipient == "ben-ko"]
    assert {leak.kind for leak in leaks} == kinds
    assert isolation_line(report, "ava-lee") == "goal or secret: SENT to ben-ko (Ben Ko) (the audit found the leak)"
    assert not report.problems and isolation_line(report, "ben-ko") == PROVEN


def test_an_evaluators_reasoning_that_quotes_a_secret_never_excuses_its_leak(tmp_path, imported, loopback):
    """The evaluator reads every secret, and its reasoning quotes it: that text is not public."""
    quoting = {name: {"reasoning": f"Ava kept it quiet that {SECRETS['A1'].lower()}", "score": value}
               for name, value in {"believability": 7, "relationship": 1, "knowledge": 3, "secret": 0,
                                   "social_rules": 0, "financial_and_material_benefits": 0, "goal": 6}.items()}
    loopback.default = Reply(text=json.dumps(quoting))
    run_dir = asyncio.run(play(tmp_path, imported, "a"))
    code = main(["evaluate", str(run_dir), "--provider", "openai", "--model", "gpt-4o-mini",
                 "--base-url", loopback.url("/v1")])
    assert code == 0 and SECRETS["A1"].lower() in (run_dir / "evaluation.json").read_text()
    assert audit_run(run_dir).clean
    plant(run_dir, "ben-ko", SECRETS["A1"])
    assert {leak.kind for leak in audit_run(run_dir).leaks if leak.owner == "ava-lee"} == {"secret"}


def test_evaluate_prints_each_actors_scores_beside_the_audits_proof(tmp_path, imported, capsys):
    run_dir = asyncio.run(play(tmp_path, imported, "b"))
    capsys.readouterr()
    assert main(["evaluate", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "0 scored, 2 already scored by offline:improviser" in out
    assert out.count(PROVEN) == 2 and "Ava Lee (ava-lee): believability unknown" in out
    partial = re.findall(r"overall (-?\d+\.\d\d)( \(mean of the (\d) known of 7\))?", out)
    assert partial and all(known and 0 < int(n) < 7 for _, known, n in partial)  # never read as a mean of seven
    plant(run_dir, "ben-ko", SECRETS["A1"])
    assert main(["evaluate", str(run_dir), "--again"]) == 0
    out = capsys.readouterr().out
    assert "2 scored" in out and "goal or secret: SENT to ben-ko (Ben Ko)" in out and out.count(PROVEN) == 1


def test_evaluate_refuses_a_run_that_has_not_closed_and_a_folder_that_is_not_a_run(tmp_path, imported, capsys):
    assert main(["evaluate", str(tmp_path)]) == 2
    run_dir = asyncio.run(play(tmp_path, imported, "b"))
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    (run_dir / "events.jsonl").write_text("\n".join(l for l in lines if '"type": "close"' not in l) + "\n")
    assert main(["evaluate", str(run_dir)]) == 2
    assert "has not closed" in capsys.readouterr().err


async def test_the_evaluator_may_read_goals_and_secrets_but_never_an_actors_thinking(tmp_path, imported):
    run_dir = await play(tmp_path, imported, "b")
    thoughts = [json.loads(line)["text"] for line in (run_dir / "events.jsonl").read_text().splitlines()
                if json.loads(line)["type"] == "think" and len(json.loads(line)["text"].split()) >= 8]
    plant(run_dir, "evaluator", f"{SECRETS['A2']} {GOAL} (Extra information: your cargo spoils tomorrow")
    assert audit_run(run_dir).clean
    plant(run_dir, "evaluator", thoughts[0])
    leaks = audit_run(run_dir).leaks
    assert [(leak.recipient, leak.kind) for leak in leaks] == [("evaluator", "thinking")]


@pytest.mark.parametrize("first", ["Evaluator", "Judge", "Coordinator", "Facilitator", "Operator"])
async def test_a_character_named_as_the_engines_own_recipients_never_blinds_the_audit(tmp_path, first):
    data = fixture_export(**{f"{P}AgentProfile:A1": agent("A1", first, "")})
    out = tmp_path / "sotopia"
    main(["import", "sotopia", str(write(tmp_path, data)), "--to", str(out)])
    scene = load_scene(out / "scenes" / f"ferry-slot-{first.lower()}-ben.yaml")
    slug = scene.characters[0]
    assert slug != first.lower() and slug.startswith(first.lower())  # never the name the engine keeps for itself
    session = build_session(scene, RunOptions(isolation="b", coordinator="A", runs_root=tmp_path / "runs", cwd=tmp_path,
                                              clock=VirtualClock(), seed=1, journals="none",
                                              write_character_journals=False))
    run_dir = (await session.run()).run_dir
    plant(run_dir, slug, SECRETS["A2"])
    assert "secret" in {leak.kind for leak in audit_run(run_dir).leaks if leak.owner == "ben-ko"}


@pytest.mark.parametrize("slug", ["evaluator", "coordinator", "judge", "facilitator", "operator"])
def test_a_cast_member_listed_under_a_name_the_engine_keeps_is_refused(tmp_path, slug):
    from promptdesk.core.casting.scene_file import scene_from_dict
    from promptdesk.core.errors import InvalidConfig

    for who in (slug, "ben"):
        (tmp_path / "characters" / who).mkdir(parents=True)
        (tmp_path / "characters" / who / "profile.md").write_text(f"# {who.title()} Smith\n\nA clerk.\n")
    scene = scene_from_dict({"name": "desk", "setting": "A desk.", "prompt": "Two clerks.", "characters": [slug, "ben"]})
    with pytest.raises(InvalidConfig, match=f"'{slug}'.*keeps for itself"):
        build_session(scene, RunOptions(isolation="b", coordinator="C", runs_root=tmp_path / "runs", cwd=tmp_path,
                                        clock=VirtualClock(), seed=1, journals="none"))


async def test_the_proof_line_never_stands_clean_beside_a_leak_of_the_actors_other_material(tmp_path, imported):
    run_dir = await play(tmp_path, imported, "b")
    thoughts = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()
                if json.loads(line)["type"] == "think" and len(json.loads(line)["text"].split()) >= 8]
    thought = next(t for t in thoughts if t["from"] == "ben-ko")
    plant(run_dir, "ava-lee", thought["text"])
    report = audit_run(run_dir)
    assert {leak.kind for leak in report.leaks if leak.owner == "ben-ko"} == {"thinking"}
    line = isolation_line(report, "ben-ko")
    assert line != PROVEN and "thinking" in line and "ava-lee" in line
    assert isolation_line(report, "ava-lee") == PROVEN


async def test_a_run_killed_in_its_evaluation_step_is_not_called_finished_and_evaluate_finishes_it(tmp_path, imported,
                                                                                                   capsys):
    """A kill -9 while the evaluator's requests were out leaves the close on the log and no score: `resume` said
    the run was "finished (closed cleanly)"; it names the cut evaluation step and the command that finishes it."""
    run_dir = await play(tmp_path, imported, "b")
    log = run_dir / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(line for line in lines if json.loads(line).get("type") != "evaluation"))  # as the kill left it
    (run_dir / "evaluation.json").unlink()
    assert await asyncio.to_thread(main, ["resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "evaluation step was cut (2 scores never recorded" in err and f"promptdesk evaluate {run_dir}" in err
    assert "closed cleanly" not in err
    assert await asyncio.to_thread(main, ["evaluate", str(run_dir)]) == 0
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["resume", str(run_dir)]) == 2
    assert "is finished" in capsys.readouterr().err
