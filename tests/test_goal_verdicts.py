"""Goal verdicts whose truth is known: hand-written scenes (every actor's lines scripted on the loopback
server) judged by role C's markers, the offline judge and an LLM judge, over several goal wordings."""

from __future__ import annotations

import json
import re

import pytest

from promptdesk.core.protocol.goal_acts import does_act
from promptdesk.core.improv.judge import assess
from helpers import example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

CHATTER = ('[TO: {to}, TONE: flat] "Let us go over beat {beat} of the timeline again."')


def beat_of(recorded) -> int:
    found = re.findall(r"BEAT (\d+)", json.dumps(recorded.body["messages"][-1]))
    return int(found[-1]) if found else 0


def early_then_chatter(acts: dict[str, str]):
    """Each actor does its act at beat 1, then talks about the timeline until the scene runs out."""
    def answer(who, recorded):
        beat = beat_of(recorded)
        if beat <= 1 and who in acts:
            return turn(acts[who])
        return turn(CHATTER.format(to="Bob" if who == "alice" else "Alice", beat=beat))
    return answer


EARLY = [
    ("Bob apologises and Alice accepts", {"bob": '[TO: Alice, TONE: low] "I am sorry, Alice. It was my fault."',
                                          "alice": '[TO: Bob, TONE: soft] "I accept your apology."'}),
    ("Alice thanks Bob", {"alice": '[TO: Bob, TONE: warm] "Thank you for coming, Bob."'}),
    ("They agree on weekly check-ins", {"bob": '[TO: Alice] "I agree: weekly check-ins, every Monday."',
                                        "alice": '[TO: Bob] "Agreed. Weekly check-ins it is."'}),
]


@pytest.mark.parametrize("goal,acts", EARLY, ids=["apology", "thanks", "agreement"])
async def test_a_goal_met_early_in_a_long_scene_is_met_in_the_verdict(run_scene, loopback, goal, acts):
    """The verdict judges the whole scene, not its last lines: an act done at beat 1 of a scene that
    runs 40 beats (80 lines) still counts."""
    loopback.default = scripted(early_then_chatter(acts))
    scene = example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob", perspectives={},
                          events=[], goal=goal, cast=remote_cast(loopback, "alice", "bob"), judge={"name": "offline"},
                          wind_down="off", limits={"max_beats": 40})
    run = await run_scene(scene, isolation="a", coordinator="B")
    assert run.result.close_reason == "max_beats_exceeded"
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["goalAchieved"] is True, meta.get("goalReason")


async def test_an_llm_judge_is_shown_the_whole_scene_at_the_verdict(run_scene, loopback):
    """A judge that answers from what it is shown (as a real one does) finds an apology made at beat 1
    of a 40-beat scene."""
    acts = EARLY[0][1]
    actors = scripted(early_then_chatter(acts))

    def answer(recorded):
        body = json.dumps(recorded.body)
        if "the scene has ended" in body:
            seen = "I am sorry, Alice" in body and "I accept your apology" in body
            return Reply(text=json.dumps({"goal_achieved": seen, "reason": "Bob apologised" if seen else "no apology"}))
        if "coordinator of a scene" in body:
            return Reply(text='{"decision": "continue", "reason": "go on", "goal_met": false}')
        return actors(recorded)

    loopback.default = answer
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob", perspectives={},
                          events=[], goal=EARLY[0][0], cast=remote_cast(loopback, "alice", "bob"), judge=judge,
                          wind_down="off", limits={"max_beats": 40})
    run = await run_scene(scene, isolation="b", coordinator="B")
    close = next(r for r in run.records() if r["type"] == "close")
    assert close["goal_achieved"] is True and close["goal_reason"] == "Bob apologised"
