"""Offline roundtables argue: participants' positions are worded for the topic, differ between
participants in most opening rounds, and each rationale is the participant's own (no two alike in a
round). Measured on the recorded answers of the shipped roundtable scenes over several seeds."""

from __future__ import annotations

import re

import pytest

from drama import words_of
from helpers import example_scene, run_session

SCENES = ("roundtable-disney", "roundtable-debate", "roundtable-free", "roundtable-six-hats")


def rounds(run) -> dict[int, list[dict]]:
    """The answers of each round, by round number."""
    by_round: dict[int, list[dict]] = {}
    current = 0
    for record in run.records():
        if record["type"] == "round":
            current = int(record.get("round") or record["beat"])
        elif record["type"] == "answer":
            by_round.setdefault(current, []).append(record)
    return by_round


@pytest.mark.parametrize("name", SCENES)
async def test_positions_speak_of_the_topic_and_differ_between_participants(tmp_path, name):
    split_openings = 0
    seeds = range(1, 6)
    for seed in seeds:
        scene = example_scene(name)
        run = await run_session(tmp_path / str(seed), scene, seed=seed, isolation="b", coordinator="C",
                                headless=True)
        topic = words_of(scene.model_dump().get("roundtable", {}).get("topic", "") or "")
        answered = rounds(run)
        assert answered
        for answers in answered.values():
            assert all(len(words_of(a["text"]) & topic) >= 2 for a in answers), [a["text"] for a in answers]
            closing = [[s for s in re.split(r"(?<=[.!?)])\s+", a.get("rationale") or "") if not s.startswith("(")][-1]
                       for a in answers]
            assert len(set(closing)) == len(answers), closing
        first = answered[min(answered)]
        split_openings += len({a["text"] for a in first}) > 1
    assert split_openings >= 3
