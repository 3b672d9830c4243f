"""The roundtable through a real provider (the OpenAI-compatible SDK) against the loopback server:
scripted facilitators and participants drive phase gating, each escalation trigger and each
fallback on invalid YAML. Nothing is mocked above the HTTP boundary."""

from __future__ import annotations

import argparse
import io
import json

import yaml

from promptdesk.core.cli.batch import run_batch
from promptdesk.core.cli.main import parser
from helpers import CHARACTERS, make_scene
from loopback import Recorded, Reply, loopback  # noqa: F401 - fixture

ANSWER = "```yaml\nposition: {p}\nrationale: {r}\nconfidence: {c}\n```"
QUESTION = "```yaml\naction: question\nquestion: What now?\nparticipants: all\nfocus: next steps\n```"
SYNTHESIS = ("```yaml\naction: synthesis\nsynthesis: Round done.\nconsensus: []\nconflicts: {conflicts}\n"
             "resolved: []\nnext_action: {action}\nnext_focus: more\nrecommendation: Ship it in steps\n```")


def script(question=QUESTION, synthesis=None, answer=None, conclude=None):
    """A reply function: who is asking (facilitator task, or which participant) picks the reply."""
    def reply(recorded: Recorded) -> Reply:
        messages = recorded.body["messages"]
        system, user = messages[0]["content"], messages[-1]["content"]
        if system.startswith("You are the facilitator"):
            if user.startswith("TASK: question"):
                return Reply(text=question)
            if user.startswith("TASK: conclude") and conclude is not None:
                return Reply(text=conclude)
            return Reply(text=synthesis(user) if callable(synthesis) else synthesis or
                         SYNTHESIS.format(conflicts="[]", action="continue"))
        name = system.split("You are ", 1)[1].split(",", 1)[0]
        return Reply(text=answer(name) if answer else ANSWER.format(p=f"{name}'s plan", r=f"{name} reasons", c=0.8))
    return reply


def scene(server, **settings):
    return make_scene(format="roundtable", characters=["alice", "bob"],
                      provider={"name": "openai-compatible", "model": "m", "base_url": server.url("/v1"),
                                "max_retries": 0},
                      roundtable={"topic": "pricing", **settings})


def data(run):
    return yaml.safe_load((run.dir / "session.yaml").read_text())


async def test_the_facilitator_cannot_advance_before_min_rounds(run_scene, loopback, tmp_path):
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "gated.yaml").write_text(
        "phases:\n  - {name: one, goal: g1, min_rounds: 1}\n  - {name: two, goal: g2, min_rounds: 3}\n"
        "  - {name: three, goal: g3, min_rounds: 1}\n")
    loopback.default = script(synthesis=SYNTHESIS.format(conflicts="[]", action="phase"))
    run = await run_scene(scene(loopback, strategy="gated"), isolation="a", coordinator="B")
    assert [r["phase"] for r in data(run)["rounds"]] == ["one", "two", "two", "two", "three"]
    gated = [r for r in run.records() if r["type"] == "phase" and r.get("reason") == "gated"]
    assert [g["beat"] for g in gated] == [2, 3]
    assert run.result.close_reason == "concluded"


async def test_participants_requests_hold_no_other_answer_through_a_real_provider(run_scene, loopback):
    loopback.default = script(synthesis=SYNTHESIS.format(conflicts="[]", action="continue"))
    run = await run_scene(scene(loopback, max_rounds=3), isolation="b", coordinator="B")
    participant_bodies = [r.body for r in loopback.requests
                          if not r.body["messages"][0]["content"].startswith("You are the facilitator")]
    rounds = [b for b in participant_bodies if b["messages"][-1]["content"].startswith("ROUND")]
    assert len(rounds) == 6 and len(participant_bodies) == 6, "3 rounds of 2 answers, and no journals"
    for body in participant_bodies:
        me = body["messages"][0]["content"].split("You are ", 1)[1].split(",", 1)[0]
        other = "Bob" if me == "Alice" else "Alice"
        assert f"{other}'s plan" not in json.dumps(body) and f"{other} reasons" not in json.dumps(body)
    assert run.result.close_reason == "max-rounds"


async def test_a_conflict_that_persists_max_rounds_per_conflict_rounds_escalates(run_scene, loopback):
    loopback.default = script(synthesis=SYNTHESIS.format(conflicts="[{topic: 'Price: high or low?'}]", action="continue"))
    run = await run_scene(scene(loopback, max_rounds_per_conflict=2), isolation="a", coordinator="B",
                          on_escalate="accept")
    escalate = next(r for r in run.records() if r["type"] == "escalate")
    assert escalate["round"] == 2 and escalate["reason"] == "conflict"
    assert escalate["recommendation"] == "Ship it in steps"
    assert data(run)["decisions"][0]["text"] == "Ship it in steps"


async def test_the_facilitator_is_told_an_open_conflict_keeps_its_topic(run_scene, loopback):
    """Spec 002 counts the rounds a conflict persists by its topic: a model that words it anew each round
    ("Price: high or low?", then "Pricing level") would never be escalated, so the facilitator is told."""
    loopback.default = script(synthesis=SYNTHESIS.format(conflicts="[{topic: 'Price: high or low?'}]", action="continue"))
    await run_scene(scene(loopback, max_rounds=2), isolation="a", coordinator="B", on_escalate="continue")
    second = next(r.body["messages"][-1]["content"] for r in loopback.requests
                  if r.body["messages"][-1]["content"].startswith("TASK: synthesis (round 2)"))
    assert "Price: high or low?" in second, "the previous synthesis, its conflict's topic as written"
    assert "A conflict still open keeps its `topic` word for word from the previous synthesis" in " ".join(second.split())


async def test_the_facilitator_can_ask_for_an_escalation(run_scene, loopback):
    loopback.default = script(synthesis=SYNTHESIS.format(conflicts="[]", action="escalate"))
    run = await run_scene(scene(loopback), isolation="a", coordinator="B", on_escalate="conclude")
    escalate = next(r for r in run.records() if r["type"] == "escalate")
    assert escalate["reason"] == "facilitator" and escalate["round"] == 1
    assert run.result.close_reason == "escalation"


async def test_a_critical_keyword_in_an_answer_escalates(run_scene, loopback):
    answer = lambda name: ANSWER.format(p="Wait", r="the legal review is not done" if name == "Bob" else "ok", c=0.9)  # noqa: E731
    loopback.default = script(answer=answer)
    run = await run_scene(scene(loopback), isolation="a", coordinator="B", on_escalate="conclude")
    assert next(r for r in run.records() if r["type"] == "escalate")["reason"] == "keyword"


async def test_invalid_facilitator_yaml_gets_spec_002s_fallbacks_each_logged(run_scene, loopback):
    loopback.default = script(question="question: [broken", synthesis="synthesis: {nope", conclude="not: [yaml")
    run = await run_scene(scene(loopback, max_rounds=2), isolation="a", coordinator="B")
    rounds = data(run)["rounds"]
    assert rounds[0]["question"]["question"] == "What are the key considerations for pricing?"
    assert rounds[0]["synthesis"]["synthesis"] == "Discussion on pricing requires further exploration."
    assert {f["fallback"] for f in rounds[0]["fallbacks"]} == {"question", "synthesis"}
    conclusion = data(run)["conclusion"]
    assert conclusion["synthesis"] == "Discussion reached maximum rounds without full consensus."
    assert conclusion["recommendation"] == "Review consensus points and address unresolved items separately."
    debug = (run.dir / "debug.log").read_text()
    assert debug.count("roundtable fallback") == 5


async def test_an_invalid_participant_answer_is_salvaged_and_logged(run_scene, loopback):
    answer = lambda name: "We should: raise prices\nbecause costs rose" if name == "Bob" else \
        ANSWER.format(p="Hold", r="r", c="sure")  # noqa: E731
    loopback.default = script(answer=answer)
    run = await run_scene(scene(loopback, max_rounds=1), isolation="a", coordinator="B")
    answers = data(run)["rounds"][0]["answers"]
    assert answers["bob"] == {"position": "We should: raise prices", "rationale": "because costs rose",
                              "confidence": None, "fallback": True}
    assert answers["alice"]["confidence"] is None
    assert {f["who"] for f in data(run)["rounds"][0]["fallbacks"]} == {"alice", "bob"}


def bob_fails(recorded):
    """The server's answer: a 400 to every call for Bob, the scripted table's answer to the others."""
    if "You are Bob," in recorded.body["messages"][0]["content"]:
        return Reply(status=400, error_message="bad request")
    return script()(recorded)


async def test_a_participant_whose_provider_fails_is_a_system_line_not_a_lost_round(run_scene, loopback):
    loopback.default = bob_fails
    run = await run_scene(scene(loopback, max_rounds=1), isolation="a", coordinator="B")
    assert list(data(run)["rounds"][0]["answers"]) == ["alice"]
    assert any(r["type"] == "system" and r.get("target") == "bob" for r in run.records())


def test_batch_on_escalate_flag_reaches_the_session(tmp_path, loopback):
    loopback.default = script(synthesis=SYNTHESIS.format(conflicts="[]", action="escalate"))
    path = tmp_path / "rt.yaml"
    path.write_text(yaml.safe_dump(scene(loopback).model_dump(exclude_none=True)))
    outputs = {}
    for flag in ([], ["--on-escalate", "accept"]):
        ns = parser().parse_args(["--batch", str(path), "--isolation", "a", "--coordinator", "B",
                                  "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / f"run{len(flag)}"),
                                  "--seed", "1", *flag])
        stream = io.StringIO()
        assert run_batch(ns, stream) == 0
        outputs[len(flag)] = stream.getvalue()
    assert "without --on-escalate: concluding" in outputs[0] and "Scene closed: escalation" in outputs[0]
    assert "Scene closed: decided" in outputs[2]
    assert isinstance(parser().parse_args(["--on-escalate", "continue"]), argparse.Namespace)


async def test_a_participant_with_no_answer_is_named_in_the_session_file_summary_and_counts(run_scene, loopback):
    """Nothing dropped silently: the round says who was asked and gave no answer, the summary says
    it, and the transcript's and metadata's turn counts count the answers that were given."""
    loopback.default = bob_fails
    run = await run_scene(scene(loopback, max_rounds=2), isolation="b", coordinator="B")
    rounds = data(run)["rounds"]
    assert [r.get("no_answer") for r in rounds] == [["bob"], ["bob"]]
    assert "- Participants: Alice, Bob (no answer in rounds 1, 2)" in (run.dir / "summary.md").read_text()
    assert "Improvised offline" not in (run.dir / "summary.md").read_text()  # models played this table
    assert "- Turn count: 2 (Alice: 2, Bob: 0)" in (run.dir / "transcript.md").read_text()
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["actors"]["alice"]["turns"] == 2 and meta["actors"]["bob"].get("turns", 0) == 0


async def test_a_table_whose_calls_all_fail_says_so_in_its_files_not_stopped(run_scene, loopback):
    """A run the engine aborts because no call succeeds is no operator's stop: session.yaml and
    summary.md name the provider error."""
    loopback.default = Reply(status=400, error_message="bad request")
    run = await run_scene(scene(loopback, max_rounds=3), isolation="a", coordinator="B")
    assert run.result.close_reason == "provider-error"
    end = data(run)
    assert end["status"] == "error" and end["conclusion"]["reason"] == "provider-error"
    assert "SceneStopped" not in end["conclusion"]["note"] and "bad request" in end["conclusion"]["note"]
    assert "- Ended: provider-error - " in (run.dir / "summary.md").read_text()


def bob_down(recorded):
    """The server's answer: a 500 to every call for Bob (a server down for him alone), the scripted table's to the others."""
    if "You are Bob," in recorded.body["messages"][0]["content"]:
        return Reply(status=500, error_message="internal error")
    return script()(recorded)


async def test_a_participant_whose_server_answers_500_every_time_leaves_the_table_after_3_failed_calls(run_scene, loopback):
    """A 500 may be mended by a retry, so one failure does not end Bob's part; but a server that
    fails every call for him is not asked again every round (each time its retries and waits, for the
    same failure): after his last 3 calls failed he leaves the table, as a participant on a rejected
    key does, said once, recorded in `unavailable`, and the others play to the table's own close."""
    loopback.default = bob_down
    run = await run_scene(scene(loopback, max_rounds=6), isolation="a", coordinator="B")
    records = run.records()
    bob_calls = [r for r in records if r["type"] == "call" and r["target"] == "bob"]
    assert len(bob_calls) == 3 and not any(c["ok"] for c in bob_calls)
    left = [r for r in records if r["type"] == "system" and r.get("reason") == "unavailable"]
    assert len(left) == 1 and left[0]["about"] == "bob" and "last 3 calls failed" in left[0]["text"]
    assert "500" in left[0]["text"] and "goes on without Bob" in left[0]["text"]
    asked = [r["participants"] for r in records if r["type"] == "question"]
    assert len(asked) == 6 and asked[:3] == [["alice", "bob"]] * 3 and asked[3:] == [["alice"]] * 3
    assert run.result.close_reason != "provider-error"
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert [u["character"] for u in meta["unavailable"]] == ["bob"] and meta["success"] is not False


def facilitator_down(recorded):
    """The server's answer: a 500 to every facilitator call, the scripted table's to the participants."""
    if recorded.body["messages"][0]["content"].startswith("You are the facilitator"):
        return Reply(status=500, error_message="internal error")
    return script()(recorded)


def test_a_table_whose_facilitator_always_fails_says_so_when_it_ends(tmp_path, loopback):
    """The participants answer and spec 002's fallbacks stand in for every question and synthesis, so
    the table plays to its close; but the director is told, as for a judge that gave no usable answer:
    a NOTICE on stderr and a line of notes.md naming how many facilitator calls failed."""
    loopback.default = facilitator_down
    path = tmp_path / "rt.yaml"
    path.write_text(yaml.safe_dump(scene(loopback, max_rounds=2).model_dump(exclude_none=True)))
    ns = parser().parse_args(["--batch", str(path), "--isolation", "a", "--coordinator", "B",
                              "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run"), "--seed", "1"])
    stream = io.StringIO()
    run_batch(ns, stream)
    failed = sum(1 for line in (tmp_path / "run" / "events.jsonl").read_text().splitlines()
                 if (e := json.loads(line))["type"] == "call" and e["target"] == "facilitator" and not e["ok"])
    assert failed >= 2
    notice = f"the facilitator's call failed {failed} times: spec 002's fallback question or synthesis"
    assert f"NOTICE: {notice}" in stream.getvalue()
    assert notice in (tmp_path / "run" / "notes.md").read_text()


async def test_answers_shaped_as_real_models_write_them_are_read_not_salvaged(run_scene, loopback):
    """A JSON block with prose around it, unfenced YAML between two lines of prose, capitalised keys and
    a facilitator's synthesis in a ```json block: each is the answer it holds, never its first line."""
    answers = {
        "Alice": 'Here is my answer:\n```json\n{"position": "Raise prices by 5%", "rationale": "Costs rose.", '
                 '"confidence": 0.7}\n```\nLet me know if you need more.',
        "Bob": "Sure, here is my view.\n\nPosition: Preise halten\nRationale: Kunden sind preisempfindlich.\n"
               "Confidence: 80%\n\nHappy to discuss.",
    }
    synthesis = ('Summary of the round:\n```json\n{"action": "synthesis", "synthesis": "Two views.", '
                 '"consensus": [], "conflicts": ["price level"], "next_action": "conclude"}\n```')
    loopback.default = script(answer=answers.get, synthesis=synthesis)
    run = await run_scene(scene(loopback, max_rounds=3), isolation="a", coordinator="B")
    first = data(run)["rounds"][0]
    assert first["answers"]["alice"] == {"position": "Raise prices by 5%", "rationale": "Costs rose.", "confidence": 0.7}
    assert first["answers"]["bob"] == {"position": "Preise halten", "rationale": "Kunden sind preisempfindlich.",
                                       "confidence": 0.8}
    assert first["synthesis"]["synthesis"] == "Two views."
    assert first["synthesis"]["conflicts"] == [{"topic": "price level"}]
    assert "fallbacks" not in first
    assert run.result.close_reason == "concluded"


async def test_a_forced_conclusion_with_open_conflicts_is_counted_in_metadata_as_in_the_summary(run_scene, loopback):
    open_two = SYNTHESIS.format(conflicts="[price level, launch date]", action="continue")
    loopback.default = script(synthesis=open_two, conclude=open_two)
    run = await run_scene(scene(loopback, max_rounds=1), isolation="a", coordinator="B")
    assert run.result.close_reason == "max-rounds"
    forced = [r for r in run.records() if r["type"] == "synthesis" and r.get("forced")]
    assert (forced[0]["consensus_count"], forced[0]["conflict_count"]) == (0, 2)
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert (meta["consensusCount"], meta["conflictCount"]) == (0, 2)
    assert len(data(run)["conclusion"]["open_conflicts"]) == 2
    assert "- price level\n- launch date" in (run.dir / "summary.md").read_text()


async def test_a_question_for_one_participant_by_name_asks_only_that_participant(run_scene, loopback):
    loopback.default = script(question="```yaml\naction: question\nquestion: Bob, why?\nparticipants: Bob\n```")
    run = await run_scene(scene(loopback, max_rounds=1), isolation="a", coordinator="B")
    first = data(run)["rounds"][0]
    assert first["question"]["participants"] == ["bob"] and list(first["answers"]) == ["bob"]
    assert "fallbacks" not in first


async def test_role_cs_facilitator_hears_one_position_written_two_ways_as_agreement(run_scene, loopback):
    positions = {"Alice": "Raise prices gradually.", "Bob": "raise prices — gradually"}
    loopback.default = script(answer=lambda name: ANSWER.format(p=positions[name], r="r", c=0.8))
    run = await run_scene(scene(loopback, max_rounds=3), isolation="a", coordinator="C", on_escalate="conclude")
    first = data(run)["rounds"][0]
    assert first["synthesis"]["consensus"] == ["Raise prices gradually."] and first["synthesis"]["conflicts"] == []
    assert run.result.close_reason == "concluded" and not [r for r in run.records() if r["type"] == "escalate"]


async def test_a_question_for_someone_the_phase_does_not_let_speak_is_recorded_as_the_phase_asks_it(run_scene, loopback,
                                                                                                    tmp_path):
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "solo.yaml").write_text("phases:\n  - {name: one, goal: g1, speakers: [alice]}\n")
    loopback.default = script(question="```yaml\naction: question\nquestion: Bob?\nparticipants: [bob]\n```")
    run = await run_scene(scene(loopback, strategy="solo", max_rounds=1), isolation="a", coordinator="B")
    first = data(run)["rounds"][0]
    asked = next(r for r in run.records() if r["type"] == "question")["participants"]
    assert first["question"]["participants"] == asked == list(first["answers"]) == ["alice"]
    assert first["fallbacks"] == [{"who": "facilitator", "fallback": "participants (alice)",
                                   "problem": "['bob'] may not speak in phase one (its speakers: alice)"}]


async def test_an_escalation_decided_at_once_writes_session_yaml_without_anchors_or_aliases(run_scene, loopback):
    loopback.default = script(synthesis=SYNTHESIS.format(conflicts="[price level]", action="escalate"))
    run = await run_scene(scene(loopback), isolation="a", coordinator="B", on_escalate="accept")
    assert run.result.close_reason == "decided"
    text = (run.dir / "session.yaml").read_text()
    assert "&id" not in text and "*id" not in text
    conclusion, first = data(run)["conclusion"], data(run)["rounds"][0]["synthesis"]
    assert conclusion["open_conflicts"] == first["conflicts"] == [{"topic": "price level"}]
