"""The offline judge never suggests the same world event twice in a run: the engine tells a judge the
events it already suggested (none withheld), and the improviser picks another that fits, or lets
the scene go on once every one that fits was suggested."""

from __future__ import annotations

import json

from helpers import example_scene
from loopback import loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)


async def test_a_long_stall_never_gets_the_same_suggestion_twice(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn("[SILENT, *stares at the table*]"))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), events=[],
                          judge={"name": "offline"}, limits={"stall_beats": 12, "max_beats": 30})
    run = await run_scene(scene, isolation="b", coordinator="B")
    suggested = [r["text"] for r in run.records() if r["type"] == "decision" and r.get("decision") == "suggest_event"]
    assert len(suggested) >= 2, "the stall went on long enough to suggest several events"
    assert len(set(suggested)) == len(suggested), suggested
    judged = [p["request"]["messages"][-1]["content"] for p in run.prompts() if p["to"] == "judge"]
    judged = [text for text in judged if "Your decision" in text]
    last = judged[-2]
    assert "WORLD EVENTS YOU ALREADY SUGGESTED" in last and all(f"- {s}" in last for s in suggested[:-1])
    assert all(f"- {s}" in judged[-1] for s in suggested), "the judge went on being asked, and suggested no more"
    assert json.loads((run.dir / "metadata.json").read_text())["reason"] == "stall"


def test_the_offline_judge_picks_an_event_not_suggested_before_or_none():
    from promptdesk.core.improv.dice import rng_for
    from promptdesk.core.improv.judge import DEFAULT_EVENTS, EVENTS, judge
    from promptdesk.core.protocol.judging import SUGGESTED
    from promptdesk.core.providers.base import ChatMessage

    kitchen = next(options for keys, options in EVENTS if "kitchen" in keys)
    stalled = "Beat 6 of at most 30. Silent beats in a row: 3.\nCast: Ann, Ben.\n\nSPEECH SO FAR:\n(no speech yet)\n\n"
    system = "Setting: a kitchen at breakfast\n\nScene goal: talk"
    for seed in range(12):
        already = [kitchen[seed % 2], DEFAULT_EVENTS[0]]
        listed = SUGGESTED.format(events="\n".join(f"- {e}" for e in already))
        answer = json.loads(judge(system, [ChatMessage(role="user", content=stalled + listed)], rng_for(seed, "t")))
        assert answer["decision"] == "suggest_event" and answer["text"] not in already
        assert answer["text"] == kitchen[1 - seed % 2], "an event that fits the setting comes first"
    every = SUGGESTED.format(events="\n".join(f"- {e}" for e in [*kitchen, *DEFAULT_EVENTS]))
    answer = json.loads(judge(system, [ChatMessage(role="user", content=stalled + every)], rng_for(1, "t")))
    assert answer["decision"] == "continue" and "suggested already" in answer["reason"]
