"""The roundtable format end to end on the offline improviser: blind answers (audited on every
recorded request), phases, escalation and the operator's answer, limits, and the run folder."""

from __future__ import annotations

import asyncio
import json

import pytest
import yaml

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.experiments.metrics import metrics_of
from helpers import CHARACTERS, example_scene, make_scene

TOPIC = "Should the team adopt four-day sprints for the Henderson replacement?"


def table(**settings):
    return make_scene(format="roundtable", roundtable={"topic": TOPIC, "context": "Two-week sprints today.", **settings})


def session_file(run) -> dict:
    return yaml.safe_load((run.dir / "session.yaml").read_text())


def syntheses_before(run, beat: int) -> str:
    """Every synthesis of the rounds before `beat`: what a participant may legitimately have seen."""
    return json.dumps([r["synthesis"] for r in session_file(run)["rounds"][:beat - 1]], ensure_ascii=False)


def assert_blind(run) -> int:
    """No participant's request ever holds another participant's answer of the same round (raw text,
    position, rationale), nor another's raw answer or rationale of any round. Returns requests checked."""
    answers = {}
    for record in run.records():
        if record["type"] == "answer":
            answers.setdefault(record["beat"], {})[record["from"]] = (record["text"], record.get("rationale", ""))
    prompts = run.prompts()
    checked = 0
    for prompt in prompts:
        if prompt["purpose"] != "participant":
            continue
        text = json.dumps(prompt["request"], ensure_ascii=False)
        me, beat = prompt["to"], prompt["beat"]
        for round_no, by in answers.items():
            for other, (position, rationale) in by.items():
                if other == me:
                    continue
                if rationale:
                    assert json.dumps(rationale)[1:-1] not in text, f"{other}'s rationale reached {me}"
                if round_no == beat:
                    if position not in syntheses_before(run, beat):
                        assert json.dumps(position)[1:-1] not in text, f"{other}'s position reached {me}"
        assert "ANSWERS GIVEN BEFORE YOURS" not in text
        checked += 1
    return checked


@pytest.mark.parametrize("isolation", ["a", "b"])
async def test_participants_answer_blind_on_every_recorded_request(run_scene, isolation):
    run = await run_scene(table(strategy="disney"), isolation=isolation, coordinator="C", on_escalate="continue")
    assert assert_blind(run) >= 9
    data = session_file(run)
    assert data["blind_answers"] is True and data["participation"] == "parallel"


async def test_sequential_participation_shows_earlier_answers_and_is_recorded_as_not_blind(run_scene):
    run = await run_scene(table(participation="sequential", max_rounds=2), isolation="a", coordinator="C",
                          on_escalate="continue")
    firsts = [p for p in run.prompts() if p["purpose"] == "participant" and p["to"] == "alice"]
    lasts = [p for p in run.prompts() if p["purpose"] == "participant" and p["to"] == "charlie"]
    assert all("ANSWERS GIVEN BEFORE YOURS" not in json.dumps(p) for p in firsts)
    assert all("ANSWERS GIVEN BEFORE YOURS" in json.dumps(p) for p in lasts)
    data = session_file(run)
    assert data["blind_answers"] is False and "not blind" in data["note"]
    assert any(r["type"] == "system" and r.get("reason") == "not-blind" for r in run.records())


async def test_the_run_folder_holds_session_yaml_and_summary_md(run_scene):
    run = await run_scene(table(strategy="disney"), isolation="b", coordinator="C", on_escalate="continue")
    for name in ("notes.md", "events.jsonl", "transcript.md", "metadata.json", "prompts.jsonl",
                 "session.yaml", "summary.md"):
        assert (run.dir / name).is_file(), name
    data = session_file(run)
    assert data["topic"] == TOPIC and data["strategy"] == "disney" and data["status"] == "concluded"
    assert data["current_phase"] == data["rounds"][-1]["phase"] and "phase" not in data
    assert data["output_type"] == "summary"
    assert data["total_rounds"] == len(data["rounds"]) == run.session.format_state.discussion.round
    first = data["rounds"][0]
    assert set(first) >= {"round", "phase", "question", "answers", "synthesis"}
    assert set(first["answers"]["alice"]) >= {"position", "rationale", "confidence"}
    summary = (run.dir / "summary.md").read_text()
    for heading in ("## Recommendation", "## Consensus", "## Open conflicts", "## Decisions"):
        assert heading in summary
    assert "**FACILITATOR:**" in (run.dir / "transcript.md").read_text()
    assert "Facilitator: rule-based" in (run.dir / "notes.md").read_text()
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["rounds"] == data["total_rounds"] and meta["phase"] == data["rounds"][-1]["phase"]
    assert meta["totalBeats"] == data["total_rounds"], "beat 0 is the table's setup, not a round played"
    assert f"- Duration: {data['total_rounds']} beats" in (run.dir / "transcript.txt").read_text()
    assert metrics_of(run.dir).beats == data["total_rounds"]
    assert meta["conflictCount"] == len(data["rounds"][-1]["synthesis"]["conflicts"])


async def test_a_topic_with_markup_quotes_newlines_and_a_code_fence_is_read_whole(run_scene):
    """The facts block of every call stays one block: the rule-based facilitator asks about the
    topic and counts every answer, whatever the topic holds."""
    topic = 'Keep the "old" pier <em>or</em> pull it down?\nIt costs 2.3 M€ & rising:\n```\nrm -rf /\n```'
    run = await run_scene(table(topic=topic, max_rounds=1), isolation="a", coordinator="C", on_escalate="continue")
    question = next(r for r in run.records() if r["type"] == "question")
    assert "rm -rf /" in question["text"] and "the topic" not in question["text"]
    synthesis = next(r for r in run.records() if r["type"] == "synthesis")
    assert "No answers" not in synthesis["text"] and "of 3" in synthesis["text"]


async def test_the_same_seed_plays_the_same_discussion(tmp_path):
    from helpers import run_session

    runs = [await run_session(tmp_path / str(i), table(strategy="six-hats"), isolation="a", coordinator="C",
                              on_escalate="continue", seed=11) for i in range(2)]
    assert [session_file(r)["rounds"] for r in runs][0] == session_file(runs[1])["rounds"]


async def test_each_round_is_written_to_session_yaml_in_one_batch(run_scene):
    seen = []

    def watch(session):
        def on_event(event):
            if event.type in ("round", "question", "answer", "synthesis"):
                data = yaml.safe_load((session.recorder.run_dir / "session.yaml").read_text())
                seen.append((event.type, event.beat, data["total_rounds"]))
        session.subscribe(on_event)

    run = await run_scene(table(strategy="disney"), isolation="a", coordinator="C", on_escalate="continue",
                          before_run=watch)
    for kind, beat, written in seen:
        assert written == beat - 1, f"{kind} of round {beat} saw {written} rounds written"
    assert session_file(run)["total_rounds"] == max(b for _, b, _ in seen)
    assert run.session.format_state.file.writes >= len(session_file(run)["rounds"]) + 2


async def test_max_rounds_forces_a_concluding_synthesis_noted_in_the_session_file(run_scene):
    run = await run_scene(table(strategy="debate", max_rounds=2), isolation="a", coordinator="C",
                          on_escalate="continue")
    data = session_file(run)
    assert run.result.close_reason == "max-rounds" and data["total_rounds"] == 2
    assert data["conclusion"]["reason"] == "max-rounds" and "max_rounds (2) reached" in data["conclusion"]["note"]
    conclude = [p for p in run.prompts() if p["purpose"] == "facilitator" and "TASK: conclude" in json.dumps(p)]
    assert len(conclude) == 1
    assert [r for r in run.records() if r["type"] == "synthesis"][-1]["forced"] == "max-rounds"


async def test_low_confidence_escalates_and_accept_takes_the_recommendation(run_scene):
    run = await run_scene(table(confidence_threshold=0.99), isolation="a", coordinator="C", on_escalate="accept")
    escalate = next(r for r in run.records() if r["type"] == "escalate")
    assert "confidence" in escalate["reason"] and escalate["round"] == 1
    assert {p["slug"] for p in escalate["positions"]} == {"alice", "bob", "charlie"}
    assert all(p["rationale"] and p["position"] for p in escalate["positions"])
    data = session_file(run)
    assert data["decisions"] == [{"round": 1, "decision": "accept", "by": "--on-escalate accept",
                                  "text": escalate["recommendation"]}]
    assert run.result.close_reason == "decided" and data["conclusion"]["recommendation"] == escalate["recommendation"]


async def test_a_critical_keyword_escalates(run_scene):
    run = await run_scene(table(critical_keywords=["henderson"]), isolation="a", coordinator="C",
                          on_escalate="conclude")
    escalate = next(r for r in run.records() if r["type"] == "escalate")
    assert escalate["reason"] == "keyword" and "henderson" in escalate["text"]
    assert run.result.close_reason == "escalation"
    assert session_file(run)["decisions"][0]["decision"] == "conclude"


async def test_continue_acknowledges_a_trigger_so_it_does_not_fire_every_round(run_scene):
    run = await run_scene(table(critical_keywords=["henderson"], max_rounds=4), isolation="a", coordinator="C",
                          on_escalate="continue")
    keyword = [r for r in run.records() if r["type"] == "escalate" and "keyword" in r["reason"]]
    assert len(keyword) == 1


async def test_headless_without_on_escalate_concludes_and_says_so(run_scene):
    run = await run_scene(table(confidence_threshold=0.99), isolation="a", coordinator="C", headless=True)
    assert run.result.close_reason == "escalation"
    assert any(r["type"] == "system" and "--on-escalate" in r["text"] for r in run.records())
    assert session_file(run)["decisions"][0]["by"] == "batch default"


async def test_the_operator_answers_an_escalation_through_the_control_channel(run_scene):
    def watch(session):
        def on_event(event):
            if event.type == "escalate":
                session.direct("answer_escalation", decision="own", text="Pilot it with one squad for a month.")
        session.subscribe(on_event)

    run = await run_scene(table(confidence_threshold=0.99), isolation="a", coordinator="C", before_run=watch)
    data = session_file(run)
    assert data["decisions"] == [{"round": 1, "decision": "own", "by": "operator",
                                  "text": "Pilot it with one squad for a month."}]
    assert data["conclusion"]["recommendation"] == "Pilot it with one squad for a month."
    assert run.result.close_reason == "decided" and run.result.goal_achieved


async def test_an_escalation_waits_for_the_operator_and_a_stop_ends_it_cleanly(run_scene):
    def watch(session):
        def on_event(event):
            if event.type == "escalate":
                asyncio.get_running_loop().call_soon(session.stop)
        session.subscribe(on_event)

    run = await run_scene(table(confidence_threshold=0.99), isolation="a", coordinator="C", before_run=watch)
    assert run.result.close_reason == "stop"
    assert session_file(run)["status"] == "stopped" and (run.dir / "summary.md").is_file()
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert (run.result.goal_achieved, meta["goalAchieved"]) == (False, False), "a stopped table did not conclude"


async def test_a_sequential_table_is_recorded_as_taking_sequential_turns(run_scene):
    run = await run_scene(table(participation="sequential", max_rounds=1), isolation="a", coordinator="C",
                          on_escalate="continue")
    assert "(roundtable, sequential turns)" in (run.dir / "notes.md").read_text()
    assert json.loads((run.dir / "metadata.json").read_text())["turns"] == "sequential"
    assert run.records()[0]["scene"]["turns"] == "sequential"


@pytest.mark.parametrize("scene_says", [None, "parallel"])
async def test_a_strategy_that_builds_on_each_answer_is_sequential_unless_the_scene_says_otherwise(
        run_scene, tmp_path, scene_says):
    """Spec 002: sequential participation is "for strategies requiring iterative building": a strategy file
    says so (`participation: sequential`); a scene's own `roundtable.participation` wins."""
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "chain.yaml").write_text(
        "participation: sequential\nphases:\n  - {name: build, goal: Each answer extends the last.}\n")
    settings = {"participation": scene_says} if scene_says else {}
    run = await run_scene(table(strategy="chain", max_rounds=1, **settings), isolation="a", coordinator="C",
                          on_escalate="continue")
    sequential = scene_says is None
    lasts = [p for p in run.prompts() if p["purpose"] == "participant" and p["to"] == "charlie"]
    assert lasts and all(("ANSWERS GIVEN BEFORE YOURS" in json.dumps(p)) is sequential for p in lasts)
    turns = "sequential" if sequential else "parallel"
    assert f"(roundtable, {turns} turns)" in (run.dir / "notes.md").read_text()
    assert json.loads((run.dir / "metadata.json").read_text())["turns"] == turns
    assert run.records()[0]["scene"]["turns"] == turns
    assert session_file(run)["blind_answers"] is not sequential


def test_the_console_summary_says_the_strategys_participation(tmp_path, monkeypatch):
    from promptdesk.tui.formats.roundtable import RoundtableFormat

    monkeypatch.chdir(tmp_path)
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "chain.yaml").write_text("participation: sequential\nphases:\n  - {name: build, goal: g}\n")
    rows = dict(RoundtableFormat().summary_rows(table(strategy="chain")))
    assert rows["Strategy"] == "chain (sequential answers)"
    assert dict(RoundtableFormat().summary_rows(table(strategy="chain", participation="parallel")))["Strategy"] \
        == "chain (parallel answers)"


def test_the_participation_decides_the_recorded_turns_whatever_turns_says():
    """A scene turned into a roundtable (the console's wizard) keeps its `turns:`: the participation wins."""
    assert make_scene(format="roundtable", turns="sequential", roundtable={"topic": TOPIC}).turns == "parallel"


async def test_a_scheduled_world_event_reaches_the_table_at_its_round_and_one_too_late_is_said_never_to(run_scene):
    scene = make_scene(format="roundtable", roundtable={"topic": TOPIC, "max_rounds": 3},
                       events=[{"at_beat": 2, "text": "The client cancels the contract."},
                               {"at_beat": 30, "text": "The office floods."}])
    run = await run_scene(scene, isolation="a", coordinator="C", on_escalate="continue")
    fired = [r for r in run.records() if r["type"] == "event"]
    assert [(r["text"], r["beat"]) for r in fired] == [("The client cancels the contract.", 2)]
    seen = {(p["purpose"], p["beat"]) for p in run.prompts() if "The client cancels the contract." in json.dumps(p)}
    assert ("participant", 2) in seen and ("facilitator", 2) in seen and min(b for _, b in seen) == 2
    never = [r for r in run.records() if r["type"] == "system" and r.get("reason") == "unplayed-event"]
    assert len(never) == 1 and "The office floods." in never[0]["text"]


async def test_a_participants_private_perspective_reaches_that_participant_alone(run_scene):
    secret = "You quietly hold shares in the sprint-tooling vendor."
    scene = make_scene(format="roundtable", roundtable={"topic": TOPIC, "max_rounds": 1}, perspectives={"bob": secret})
    run = await run_scene(scene, isolation="b", coordinator="C", on_escalate="continue")
    holders = {p["to"] for p in run.prompts() if secret in json.dumps(p)}
    assert holders == {"bob"}


async def test_the_scenes_setting_reaches_every_participant_and_the_facilitator(run_scene):
    """`setting:` is where the table sits: every actor is told, as in a scene (it was dropped)."""
    where = "A lighthouse keeper's kitchen on a stormy night"
    scene = make_scene(format="roundtable", roundtable={"topic": TOPIC, "max_rounds": 1}, setting=where)
    run = await run_scene(scene, isolation="b", coordinator="C", on_escalate="continue")
    told = {p["to"] for p in run.prompts() if where in json.dumps(p, ensure_ascii=False)}
    assert told == {p["to"] for p in run.prompts()} and {"alice", "bob", "facilitator"} <= told


def test_a_participant_called_all_is_refused():
    with pytest.raises(InvalidConfig, match="characters: 'all' is the word a roundtable keeps for every participant"):
        make_scene(format="roundtable", characters=["alice", "all"], roundtable={"topic": TOPIC})


def test_a_table_of_one_is_refused_naming_the_field():
    """One participant has no one to agree or disagree with: its answer is no consensus."""
    with pytest.raises(InvalidConfig, match="characters: a roundtable needs at least 2 characters, got 1"):
        make_scene(format="roundtable", characters=["alice"], roundtable={"topic": TOPIC})


@pytest.mark.parametrize("field,value", [("max_rounds", True), ("max_rounds_per_conflict", True),
                                         ("confidence_threshold", True), ("max_rounds", 2.5)])
def test_a_number_written_as_yes_or_a_fraction_is_refused(field, value):
    """YAML reads `yes` and `on` as true: a count of true is a mistake to name, never 1 round."""
    with pytest.raises(InvalidConfig, match=rf"roundtable\.{field}: Input should be a valid (integer|number)"):
        table(**{field: value})


async def test_a_missing_strategy_fails_before_anything_runs(run_scene):
    with pytest.raises(InvalidConfig, match="no strategy 'nope'"):
        await run_scene(table(strategy="nope"), isolation="a", coordinator="C")


def test_a_missing_strategy_names_the_scene_file_its_line_and_its_field(tmp_path, capsys, monkeypatch):
    from promptdesk.core.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "table.yaml").write_text(yaml.safe_dump({"name": "table", "format": "roundtable",
                                                         "characters": ["alice", "bob"],
                                                         "roundtable": {"topic": TOPIC, "strategy": "sixhats"}}))
    code = main(["--batch", "table.yaml", "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"),
                 "--characters-dir", str(CHARACTERS)])
    err = capsys.readouterr().err
    assert code == 2 and f"{tmp_path / 'table.yaml'}:7: roundtable.strategy: no strategy 'sixhats' (did you mean 'six-hats'?)" in err


@pytest.mark.parametrize("name", ["roundtable-disney", "roundtable-six-hats", "roundtable-debate", "roundtable-free"])
async def test_every_example_roundtable_runs_to_a_conclusion(run_scene, name):
    run = await run_scene(example_scene(name), isolation="b", coordinator="C", on_escalate="continue")
    data = session_file(run)
    assert data["status"] == "concluded" and data["rounds"]
    phases = {r["phase"] for r in data["rounds"]}
    assert phases <= set(data["phases"])
    if data["blind_answers"]:
        assert_blind(run)


async def test_a_note_to_one_participant_reaches_only_that_participant(run_scene):
    def notes(session):
        def on_event(event):
            if event.type == "round" and event.beat == 1:
                session.add_note("Argue for the cautious option", to="bob")
                session.add_note("Keep answers short")
        session.subscribe(on_event)

    run = await run_scene(table(strategy="free"), isolation="a", coordinator="C", on_escalate="continue",
                          before_run=notes)
    text = {p["to"]: json.dumps(p["request"]) for p in run.prompts() if "Keep answers short" in json.dumps(p["request"])}
    assert "bob" in text and "alice" in text and "facilitator" in text, sorted(text)
    assert "Argue for the cautious option" in text["bob"]
    assert "Argue for the cautious option" not in text["alice"] + text["facilitator"]


async def test_role_a_facilitator_never_sees_the_coordinator_notes(run_scene):
    secret = "COORDINATOR-ONLY: expect Bob to fold by round two"
    scene = table(strategy="debate", max_rounds=2).model_copy(update={"coordinator_notes": secret})
    run = await run_scene(scene, isolation="a", coordinator="A", on_escalate="continue")
    facilitator = [p for p in run.prompts() if p["purpose"] == "facilitator"]
    assert facilitator and "Isolation:" in json.dumps(facilitator[0]["request"])
    assert not any(secret in json.dumps(p["request"]) for p in run.prompts())


@pytest.mark.parametrize("phase, goal, lean", [
    ("failure", "Each participant names the most likely cause of failure.", 2),
    ("red-team", "Attack the plan: find its weakest point.", 2),
    ("blue-sky", "Dream: what would the ideal outcome look like?", 0),
    ("safeguards", "Each participant proposes one safeguard.", 1),
    ("critic", "", 2), ("dreamer", "", 0), ("white", "", 1)])
def test_a_phase_of_any_strategy_pulls_the_improvisers_stance_by_what_it_asks(phase, goal, lean):
    """A strategy of the user's own names its phases as it likes: the improviser reads what a phase asks
    (failures and risks hold off, dreams go ahead), and a shipped strategy's phases keep their pull."""
    from promptdesk.core.formats.roundtable.improv_facts import phase_lean

    assert phase_lean({"phase": phase, "phase_goal": goal}) == lean


@pytest.mark.parametrize("topic", ["Should the Skarvik lighthouse be automated next year?",
                                   "Must the city council ban cars from the old town?",
                                   "Is the new design better than the old one?"])
def test_an_offline_stance_on_a_question_about_a_thing_keeps_the_whole_question(topic):
    """A participant's position on a question whose subject is a thing (not `we`) keeps every word
    after the asking word, in order: none of the subject is cut (`lighthouse be automated ...`)."""
    from promptdesk.core.formats.roundtable.improv_facts import stances

    asked = " ".join(topic.rstrip("?").split()[1:])
    for stance in stances(topic):
        assert asked in stance, stance


@pytest.mark.parametrize("own", [False, True])
def test_notes_name_the_strategy_file_of_yours_that_shadows_a_shipped_one(tmp_path, capsys, monkeypatch, own):
    """A `disney.yaml` of yours beside the scene is played instead of the shipped Disney strategy: notes.md
    names the file it was read from, so the record tells the two apart; a shipped one is named alone."""
    from promptdesk.core.cli.main import main

    monkeypatch.chdir(tmp_path)
    if own:
        (tmp_path / "strategies").mkdir()
        (tmp_path / "strategies" / "disney.yaml").write_text(yaml.safe_dump(
            {"name": "disney", "phases": [{"name": "dream", "goal": "Imagine it without limits."},
                                          {"name": "check", "goal": "What would break first?"}]}))
    (tmp_path / "table.yaml").write_text(yaml.safe_dump({"name": "table", "format": "roundtable",
                                                         "characters": ["alice", "bob"],
                                                         "roundtable": {"topic": TOPIC, "strategy": "disney"}}))
    assert main(["--batch", "table.yaml", "--isolation", "a", "--coordinator", "C", "--out", str(tmp_path / "run"),
                 "--characters-dir", str(CHARACTERS), "--on-escalate", "continue"]) == 0
    line = next(line for line in (tmp_path / "run" / "notes.md").read_text().splitlines() if "Roundtable: strategy" in line)
    if own:
        assert "strategy disney from strategies/disney.yaml (dream, check)" in line, line
    else:
        assert "strategy disney (" in line and " from " not in line, line
