"""No two actors say the same line in one beat, in casts the project does not ship: thin profiles of a
line or two, names in other scripts, a crowd of near-identical residents. Actors in a parallel beat do
not hear each other, so the improviser shares each rule's alternatives out among the cast, turned every
beat (`speech.beat_share`, `grammar.shared_out`). Measured from the run folders, as `test_drama` does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from promptdesk.core.casting.scene_file import scene_from_dict
from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.grammar import Grammar, shared_out
from promptdesk.core.improv.speech import beat_share
from drama import same_beat_duplicates, turns
from helpers import run_session

THIN = {"wen-li": "# 文丽 - Baker\n\n## Personality\n- Patient\n",
        "oskar": "# Oskar Brandt - Landlord\n\n## Personality\n- Wants the rent on time\n",
        "amara": "# Amara Nwosu - Tenant\n\n## Personality\n- Organised the petition\n",
        "jules": "# Jules Marchetti - Tenant\n\n## Personality\n- New in the building\n",
        "dee": "# Dee Harlan - Caretaker\n\n## Personality\n- Knows every pipe\n"}


def cast(folder: Path, profiles: dict[str, str]) -> list[str]:
    for slug, text in profiles.items():
        (folder / "characters" / slug).mkdir(parents=True, exist_ok=True)
        (folder / "characters" / slug / "profile.md").write_text(text)
    return list(profiles)


def play(folder: Path, slugs: list[str], seed: int, beats: int) -> Path:
    scene = scene_from_dict({
        "name": "stairwell", "turns": "parallel", "characters": slugs, "setting": "The stairwell of an old building",
        "prompt": "The tenants and their landlord argue about the broken boiler.", "goal": "They agree who pays.",
        "limits": {"max_beats": beats}})
    run = asyncio.run(run_session(folder, scene, seed=seed, isolation="b", coordinator="C"))
    return run.dir


def test_shares_are_disjoint_and_cover_every_alternative():
    rules = Grammar({"s": tuple(f"line {n} #topic#" for n in range(7))}).rules["s"]
    for count in (2, 3, 7):
        shares = [shared_out(rules, (i, count)) for i in range(count)]
        assert sorted(a.pieces for share in shares for a in share) == sorted(a.pieces for a in rules)
    assert [shared_out(rules, (i, 9))[0] for i in range(7)] == list(rules), "fewer than the cast: one each"


def test_each_actor_of_a_beat_has_its_own_share_and_it_turns_with_the_beat():
    names = ["Oskar Brandt", "文丽", "Amara Nwosu"]
    for beat in range(4):
        shares = [beat_share(Briefing(name=n, others=[o for o in names if o != n], beat=beat)) for n in names]
        assert sorted(i for i, _ in shares) == [0, 1, 2] and {n for _, n in shares} == {3}
    first = beat_share(Briefing(name="文丽", others=["Oskar Brandt", "Amara Nwosu"], beat=1))
    assert first != beat_share(Briefing(name="文丽", others=["Oskar Brandt", "Amara Nwosu"], beat=2))
    assert beat_share(Briefing(name="Solo", beat=3)) is None


@pytest.mark.parametrize("size", [3, 5])
def test_a_small_cast_of_thin_profiles_never_says_one_line_twice_in_a_beat(tmp_path, size):
    slugs = cast(tmp_path, dict(list(THIN.items())[:size]))
    for seed in range(1, 7):
        run = play(tmp_path, slugs, seed, 12)
        assert len([t for t in turns(run) if t.spoke]) >= 12
        assert not same_beat_duplicates(run), (seed, same_beat_duplicates(run))


def test_a_crowd_of_near_identical_residents_rarely_does(tmp_path):
    """Twelve residents with the same two-line profile: every rule has fewer alternatives than the
    cast can use, so the odd repeat is left (it was 44% of the beats before the shares)."""
    profiles = {f"resident-{n:02d}": f"# Resident {n}\n\n## Personality\n- Pays rent here\n- Cold all winter\n"
                for n in range(1, 13)}
    slugs = cast(tmp_path, profiles)
    beats = duplicated = 0
    for seed in range(1, 5):
        run = play(tmp_path, slugs, seed, 10)
        beats += len({t.beat for t in turns(run) if t.spoke})
        duplicated += len({beat for beat, _ in same_beat_duplicates(run)})
    assert beats >= 30 and duplicated / beats <= 0.2, (duplicated, beats)
