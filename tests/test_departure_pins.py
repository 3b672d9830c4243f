"""What Promptdesk does where it departs from the documents and no other test pins it yet (each is a
row of `docs/departures.md`, and `tests/test_readme_departures.py` names the test that pins it)."""

from __future__ import annotations

from helpers import example_scene, make_scene


async def test_an_unset_max_beats_is_the_hard_cap_times_the_cast(run_scene):
    """Spec 004's default of 50 beats is declined: unset, `max_beats` is the hard cap times the cast."""
    scene = make_scene(limits={"hard_cap_per_character": 7, "soft_cap_per_character": 5})
    assert scene.limits.max_beats is None and scene.limits.beats_for(3) == 21
    limits = {"max_beats": None, "hard_cap_per_character": 4, "soft_cap_per_character": 2}
    run = await run_scene(example_scene("the-apology", limits=limits), isolation="a", coordinator="C")
    start = next(r for r in run.records() if r["type"] == "start")
    assert start["max_beats"] == 4 * 3 != 50
