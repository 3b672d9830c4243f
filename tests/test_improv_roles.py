"""A goal that names a person by role (`The landlord agrees ...`): the improviser reads who plays it
from the actor's own request (`core/improv/roles.py`), so that person does the act; a role someone
plays is never talked about as a topic; a profile bullet's pronouns are the character's only when the
profile speaks of them so; a verb before a plural topic agrees with it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from promptdesk.core.improv.grammar import Grammar
from promptdesk.core.improv.material import read_material
from promptdesk.core.improv.roles import goal_roles, person_roles
from promptdesk.core.improv.temperament import read_temperament
from promptdesk.core.improv.voice import self_trait
from promptdesk.core.protocol.goal_acts import does_act, read_goal
from drama import turns
from helpers import played_offline, titled_cast

ROLE_SCENES = [
    # (role of the one who must act, their title, the other's title, goal, act)
    ("landlord", "Landlord", "Tenant", "The landlord agrees to fix the boiler before the weekend.", "agree"),
    ("ferry captain", "Ferry Captain", "Harbour Clerk", "The ferry captain finally admits the engine was never serviced.",
     "admit"),
    ("shopkeeper", "Shopkeeper", "Customer", "The shopkeeper apologises for the mix-up.", "apologise"),
]


@pytest.mark.parametrize("goal, roles", [
    ("The landlord agrees to fix the heating before Friday.", ("landlord",)),
    ("The night shift manager sincerely apologises, and the nurse accepts.", ("night shift manager", "nurse")),
    ("The deal is agreed by Friday.", ()),
    ("Mara agrees to fix the heating.", ()),
    ("They agree on a date.", ()),
])
def test_a_goal_names_a_role_only_as_a_clauses_subject_before_its_act(goal, roles):
    assert goal_roles(goal) == roles


def test_who_plays_a_role_is_read_from_the_prompt_then_the_title_then_by_elimination():
    goal = "The manager apologises, and the auditor accepts."
    prompt = "Ines, the auditor, has found a gap in the books. The manager asked for this meeting."
    others = ("Ines Moreau", "Pavel Ostrov")
    read = dict(person_roles("Dana Kerr", others, prompt, goal, "", "# Dana Kerr - Store Manager\n"))
    assert read == {"auditor": "Ines Moreau", "manager": "Dana Kerr"}
    # a role that is not mine, with two others present and no word of whose it is, names no one
    assert dict(person_roles("Pavel Ostrov", ("Dana Kerr", "Ines Moreau"), "", goal, "", "# Pavel - Clerk\n")) == {}
    # with one other present it is theirs
    assert dict(person_roles("Pavel Ostrov", ("Dana Kerr",), "", goal, "", "# Pavel - Clerk\n")) == \
        {"manager": "Dana Kerr", "auditor": "Dana Kerr"}
    # the perspective may say it
    assert dict(person_roles("Dana Kerr", others, "", goal, "You are the shop's manager.", "")) == {"manager": "Dana Kerr"}


def test_a_clause_opening_with_a_played_role_names_its_player():
    clause = read_goal("The landlord agrees to fix the heating.", ("Mara Quint", "Theo Brandt"),
                       (("landlord", "Mara Quint"),))[0]
    assert clause.who == ("Mara Quint",) and clause.act == "agree" and "landl" not in clause.words
    assert read_goal("The landlord agrees to fix the heating.", ("Mara Quint", "Theo Brandt"))[0].who == ()


def test_a_role_the_goal_gives_someone_is_no_topic():
    material = read_material("Theo Brandt", ("Mara Quint",), "A stairwell", "The heating has failed again.",
                             "The landlord agrees to fix the heating.", "", "# Theo Brandt - Tenant\n")
    assert material.topics and not any("landlord" in t for t in material.topics + material.mine)


def write_cast(folder: Path, titles: tuple[str, str]) -> list[str]:
    return titled_cast(folder, (("Ilse Varga", titles[0]), ("Kofi Mensah", titles[1])))


@pytest.mark.parametrize("role, title, other, goal, act", ROLE_SCENES)
def test_the_player_of_a_goals_role_does_its_act_and_no_one_talks_about_the_role(tmp_path, role, title, other, goal, act):
    """Offline, in scenes whose goals name the one who must act by role: that character does the act in
    half the seeds or more (before, no one did: the clause named no one), and no speech line speaks of the role as
    a topic (`We're here because of the landlord`, said to the landlord)."""
    slugs = write_cast(tmp_path, (title, other))
    done = 0
    for run in played_offline(tmp_path, slugs, goal, range(1, 7)):
        spoken = [t for t in turns(run) if t.spoke]
        done += any(t.actor == "p0" and does_act(t.text, act) for t in spoken)
        head = role.split()[-1]
        assert not any(re.search(rf"\b(?:the|a) (?:\w+ )?{head}\b", t.text, re.I) for t in spoken), \
            [t.text for t in spoken if head in t.text.lower()]
    assert done >= 3, done


def test_a_profiles_own_pronoun_is_the_character_and_another_persons_stays_theirs():
    profile = "# Bob - Engineer\n\n## Personality\n- Quiet; he rarely raises his voice\n- Loyal to Alice\n"
    pronoun = read_temperament(profile).pronoun
    assert pronoun == "he"
    said = self_trait("Loyal to Alice, who hired and mentored him, which makes letting her down worse", pronoun)
    assert "mentored me" in said and "letting her down" in said
    assert self_trait("Raises a hand slightly when he wants to interject", pronoun) == \
        "I raise a hand slightly when I want to interject."
    she = self_trait("Keeps her promises, and lets her brother down when she is tired", "she")
    assert "my promises" in she and "when I am tired" in she and " she " not in she
    assert read_temperament("# Sam - Clerk\n\n## Personality\n- Careful\n").pronoun == ""


@pytest.mark.parametrize("topic, verb", [("the stairs", "Are"), ("the heating", "Is"), ("Thomas", "Is"),
                                         ("the accounts", "Are")])
def test_a_verb_before_a_slot_agrees_with_the_noun_phrase_that_fills_it(topic, verb):
    said = Grammar({"s": ("#x# aside, is #topic# really the point? Was #topic# ever?",)}).expand(
        "s", random.Random(0), {"topic": [topic], "x": ["that"]})
    assert said == f"That aside, {verb.lower()} {topic} really the point? {'Were' if verb == 'Are' else 'Was'} {topic} ever?"


@pytest.mark.parametrize("bullet, said", [
    ("Asks a question when she already knows the answer", "when I already know the answer"),
    ("Goes quiet when she really is angry", "when I really am angry"),
    ("Laughs when she often has no reason to", "when I often have no reason to"),
])
def test_an_adverb_between_the_characters_pronoun_and_its_verb_leaves_the_verb_agreeing_with_i(bullet, said):
    assert said in self_trait(bullet, "she")


@pytest.mark.parametrize("setting, where, objects", [
    ("The bakery's back room, 5 a.m., before opening", "the bakery's back room", ()),
    ("Maria's small kitchen, after dinner", "Maria's small kitchen", ()),
    ("The harbour office, an hour before dawn, kettle on", "this harbour office", ("the kettle",)),
])
def test_a_place_owned_by_a_thing_keeps_its_article_and_a_stretch_of_time_is_no_object(setting, where, objects):
    from promptdesk.core.improv.material import _props
    from promptdesk.core.improv.scene_words import place

    assert place(setting) == where and _props(setting, "") == objects
