"""The operator's lines in a roundtable reach every participant (docs/guide/roundtable.md: "Your world
events ... reach every participant and the facilitator at the next round; a note to one participant
reaches only that participant"), also one the facilitator leaves out of a round: its lines wait for
the round it is next asked in, never dropped. Real SDK against the loopback server."""

from __future__ import annotations

import json

from loopback import Recorded, Reply, loopback  # noqa: F401 - fixture
from test_roundtable_loopback import ANSWER, SYNTHESIS, scene

ONLY_ALICE = "```yaml\naction: question\nquestion: Alice, what now?\nparticipants: [alice]\nfocus: her plan\n```"
EVERYONE = "```yaml\naction: question\nquestion: What now?\nparticipants: all\nfocus: next steps\n```"


def table_script(questions: list[str]):
    asked = iter(questions)

    def reply(recorded: Recorded) -> Reply:
        system, user = recorded.body["messages"][0]["content"], recorded.body["messages"][-1]["content"]
        if system.startswith("You are the facilitator"):
            if user.startswith("TASK: question"):
                return Reply(text=next(asked))
            return Reply(text=SYNTHESIS.format(conflicts="[]", action="continue"))
        name = system.split("You are ", 1)[1].split(",", 1)[0]
        return Reply(text=ANSWER.format(p=f"{name}'s plan", r="reasons", c=0.8))
    return reply


async def test_a_participant_left_out_of_a_round_gets_its_note_and_the_event_when_next_asked(run_scene, loopback):
    loopback.default = table_script([ONLY_ALICE, EVERYONE])

    def operator(session):
        session.add_note("Bob: cost it in euros, not dollars", to="bob")
        session.inject_event("The harbour board cut the budget by a third")
    run = await run_scene(scene(loopback, max_rounds=2), isolation="a", coordinator="B", on_escalate="continue",
                          before_run=operator)
    to_bob = [json.dumps(p["request"]) for p in run.prompts() if p["to"] == "bob"]
    assert len(to_bob) == 1, "bob is asked in round 2 only"
    assert "cost it in euros, not dollars" in to_bob[0]
    assert "cut the budget by a third" in to_bob[0]
    to_alice = [json.dumps(p["request"]) for p in run.prompts() if p["to"] == "alice"]
    assert "cut the budget by a third" in to_alice[0] and not any("euros" in r for r in to_alice)


async def test_a_question_naming_no_one_at_the_table_is_kept_and_the_record_says_who_it_went_to(run_scene, loopback):
    nobody = "```yaml\naction: question\nquestion: What does the harbour master think?\nparticipants: [harbour-master]\nfocus: x\n```"
    loopback.default = table_script([nobody])
    run = await run_scene(scene(loopback, max_rounds=1), isolation="a", coordinator="B", on_escalate="continue")
    [question] = [r for r in run.records() if r["type"] == "question"]
    assert question["text"] == "What does the harbour master think?"
    [line] = [r for r in run.records() if r["type"] == "system" and r.get("reason") == "fallback"]
    assert "fallback question" not in line["text"], "the facilitator's own question was asked, not spec 002's"
    assert line["text"].endswith("used the fallback participants (all)")


async def test_a_facilitator_model_the_scene_names_is_said_unused_under_role_c(run_scene):
    from helpers import make_scene
    scene = make_scene(format="roundtable", characters=["alice", "bob"], provider={"name": "offline"},
                       roundtable={"topic": "pricing", "max_rounds": 1,
                                   "facilitator": {"name": "openai", "model": "gpt-4o-mini"}})
    run = await run_scene(scene, isolation="a", coordinator="C", on_escalate="continue")
    said = "roundtable.facilitator (openai:gpt-4o-mini) unused: coordinator role C plays the facilitator in pure code"
    assert any(n.startswith(said) for n in run.session.notices)
    assert said in (run.dir / "notes.md").read_text()
