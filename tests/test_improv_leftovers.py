"""The improviser pass's leftovers (issue 37): a goal deed of telling is done by telling, a profile's
pronoun read from its own title line, leave-takings that fit a place nobody can leave."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from drama import turns
from helpers import make_scene, run_session


def _play(tmp: Path, seed: int, **data) -> Path:
    scene = make_scene(provider={"name": "offline"}, turns="sequential", limits={"max_beats": 14}, **data)
    return asyncio.run(run_session(tmp / f"s{seed}", scene, seed=seed, isolation="b", coordinator="C")).dir


@pytest.mark.parametrize("goal, who, perspective", [
    ("Bob explains why the shipment was late", "bob",
     "You missed the shipment because your van broke down on the bypass near Harlow."),
    ("Alice describes the damage to the ceiling", "alice",
     "Your bathroom pipe burst on Sunday night and soaked the plaster below for hours."),
])
def test_a_goal_deed_of_telling_is_done_by_telling_what_the_perspective_holds(tmp_path, goal, who, perspective):
    """`X explains Y` is met by X giving an explanation of their own (words of their perspective the goal
    does not hold), not by reciting the clause in the first person."""
    verb = goal.split()[1][:5].lower()
    goal_words = set(re.findall(r"\w+", goal.lower()))
    own = {w for w in re.findall(r"[a-z]{5,}", perspective.lower())} - goal_words - {"because", "night", "below"}
    deeds = []
    for seed in range(1, 7):
        run = _play(tmp_path, seed, goal=goal, perspectives={who: perspective},
                    prompt="Alice, Bob and Charlie meet in the site office to sort out the week.")
        deeds += [t.text for t in turns(run) if t.spoke and t.actor == who and verb in t.text.lower()]
    assert deeds, "the deed was never done"
    for text in deeds:
        assert own & set(re.findall(r"[a-z]+", text.lower())), text
