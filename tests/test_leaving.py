"""A scene everyone is leaving closes: an actor whose latest line took leave is not waited for by
`limits.min_turns_per_character` (docs/guide/ending.md), and one who speaks again is."""

from __future__ import annotations

import pytest

from helpers import example_scene
from loopback import loopback  # noqa: F401  (fixture)
from test_goal_verdicts import beat_of
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

CHAT = '[TONE: flat] "Let us go over item {beat} of the budget."'
LEAVING = {"alice": '[TONE: urgent] "That is the alarm. Goodbye, everyone."',
           "bob": '[SILENT, *picks up his coat and walks out*]',
           "charlie": '[TO: Alice, TONE: calm, *stands to leave*] "I must be going. Take care."'}
CAST = ["alice", "bob", "charlie"]


def leave_from(beats: dict[str, int], back: dict[str, int] | None = None):
    """Each actor talks until its beat in `beats`, then takes leave every turn; one in `back` comes back
    (talks again) at that beat."""
    def answer(who, recorded):
        beat = beat_of(recorded)
        if (back or {}).get(who) == beat or beat < beats[who]:
            return turn(CHAT.format(beat=beat))
        return turn(LEAVING[who])
    return answer


async def run(run_scene, loopback, beats, back=None):
    loopback.default = scripted(leave_from(beats, back))
    scene = example_scene("the-apology", characters=CAST, initial_speaker="alice", perspectives={}, events=[],
                          turns="parallel", cast=remote_cast(loopback, *CAST), wind_down="off",
                          limits={"max_beats": 12, "min_turns_per_character": 6})
    played = await run_scene(scene, isolation="b", coordinator="C")
    return played, next(r for r in played.records() if r["type"] == "close")


@pytest.mark.parametrize("beats", [{"alice": 2, "bob": 2, "charlie": 2}, {"alice": 1, "bob": 3, "charlie": 2}],
                         ids=["together", "one-by-one"])
async def test_a_scene_everyone_has_left_closes_before_the_least_turns(run_scene, loopback, beats):
    played, close = await run(run_scene, loopback, beats)
    assert close["reason"] == "natural", close
    assert close["beat"] == max(beats.values()), close


async def test_one_who_takes_leave_and_speaks_again_is_waited_for(run_scene, loopback):
    played, close = await run(run_scene, loopback, {"alice": 1, "bob": 2, "charlie": 2}, back={"alice": 2})
    assert close["beat"] == 3, close
    assert "natural close not taken at beat 2: Alice spoke fewer than 6 times" in (played.dir / "debug.log").read_text()
