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


@pytest.mark.parametrize("profile, pronoun", [
    ("# Jonas Berg - Ship's Cook\n\n## Personality\n- Cheerful, feeds people when he is frightened\n", "he"),
    ("# Mira Osei - Navigator\n\n## Background\n- Trained in Alexandria; she is the only one who has done it\n", "she"),
    ("---\nname: Ana Ruiz\ndescription: A locksmith. She/her pronouns.\n---\n# Ana Ruiz\n\n## Personality\n- Patient\n",
     "she"),
    ("# Tove Lund - Clerk\n\n## Background\n- Worked for Tom until he retired\n- Goes quiet when she is tired\n", "she"),
    ("# Eli Park - Porter\n\n## Background\n- Her uncle says he will sell the shop\n- Keeps the ledgers\n", ""),
    ("# Noor Aziz - Baker\n\n## Background\n- Her brother Sami lends him money\n- Bakes at four\n", ""),
])
def test_a_profile_names_its_characters_pronoun_once_in_a_sentence_of_its_own(profile, pronoun):
    """A pronoun the character is the subject of (a bullet or sentence about them, before anyone else is
    named), or a declared one, is theirs even said once; one that follows another person is not."""
    from promptdesk.core.improv.temperament import read_temperament
    from promptdesk.core.improv.voice import self_trait

    assert read_temperament(profile).pronoun == pronoun
    if pronoun == "he":
        assert " he " not in self_trait("Feeds people when he is frightened", read_temperament(profile).pronoun)


GOING = re.compile(r"\b(?:head(?:ing)? (?:out|home|off)|get going|be going|be off|i'?m off|walk(?:s|ing)? out|"
                   r"(?:time|have|need|got) (?:i was |for me )?(?:to )?go(?:ing)?\b|let you go|on my way)", re.I)
"""A leave-taking by going away, in words."""


@pytest.mark.parametrize("setting", ["The wheelhouse of a fishing trawler, far out at sea in a gale, night",
                                     "A cable car stuck halfway up the mountain, swaying in the wind",
                                     "The bridge of the starship Meridian, red alert lighting"])
def test_where_nobody_can_leave_the_scene_closes_without_anyone_walking_out(tmp_path, setting):
    """A close in a place nobody can leave ends the talk (the scene still closes on it), but no one exits
    or says they are going; the same scene in an office does."""
    from promptdesk.core.protocol.leave_taking import is_exit

    def closing(place: str, where: Path) -> tuple[list[str], list[str], int]:
        said, done, natural = [], [], 0
        for seed in range(1, 6):
            run = _play(where, seed, setting=place, goal="Alice, Bob and Charlie agree on who takes the next shift.",
                        prompt="Alice, Bob and Charlie argue over the rota while the weather worsens.")
            last = max(t.beat for t in turns(run))
            said += [t.text for t in turns(run) if t.beat >= last - 1 and t.spoke]
            done += [t.business for t in turns(run) if t.business]
            natural += '"reason": "natural"' in (run / "events.jsonl").read_text()
        return said, done, natural

    said, done, natural = closing(setting, tmp_path / "confined")
    assert natural >= 3
    assert not [b for b in done if is_exit(b)]
    assert not [s for s in said if GOING.search(s)]
    said, done, _ = closing("A small office on the second floor, afternoon", tmp_path / "office")
    assert [s for s in said if GOING.search(s)] or [b for b in done if is_exit(b)]


BARE = re.compile(r"\b(?:at|of|in|into|with|up|gathers|lowers|relaxes)\s+(?:hands?|neck|shoulders?|voice|chair|coat|"
                  r"things|eyes|arms|head|face)\b", re.I)
"""A body part or belonging in a stage direction without whose it is (`rubs the back of neck`)."""


def test_a_stock_gesture_says_whose_hands_neck_or_chair_it_is(tmp_path):
    """Every stage direction over several seeds names its body parts and belongings with a possessive, and
    the possessive is the character's own (`his` for a character the profile calls `he`)."""
    from promptdesk.core.improv.temperament import read_temperament

    pronouns = {slug: read_temperament((Path(__file__).parent.parent / "characters" / path).read_text()).pronoun
                for slug, path in (("alice", "alice/profile.md"), ("bob", "bob/profile.md"), ("charlie", "charlie.md"))}
    done = []
    for seed in range(1, 9):
        run = _play(tmp_path, seed, setting="A cramped site office, late afternoon",
                    goal="Bob apologises for the delay, and they agree on a new schedule.",
                    prompt="Alice, Bob and Charlie go over the delayed schedule.")
        done += [(t.actor, t.business) for t in turns(run) if t.business]
    assert len(done) >= 20
    assert not [b for _, b in done if BARE.search(b)], [b for _, b in done if BARE.search(b)]
    wrong = {"he": " her ", "she": " his "}
    assert not [(a, b) for a, b in done if pronouns[a] in wrong and wrong[pronouns[a]] in f" {b} "]
