"""The improviser read as a writer reads, on genres no pass had written (issue 37): a goal that asks someone
never to do something, a crowd's blind beats, events and goals in other shapes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from drama import last_beat, turns
from helpers import make_scene, run_session
from promptdesk.core.improv.directions import read_event
from promptdesk.core.improv.judge import assess
from promptdesk.core.protocol.goal_acts import does_act, read_goal

SECRET = "What you have not told anyone is that you sold the company van in March."


def _play(tmp: Path, seed: int, turns_: str = "sequential", **data) -> Path:
    coordinator = data.pop("coordinator", "C")
    scene = make_scene(provider={"name": "offline"}, turns=turns_, limits={"max_beats": 14}, **data)
    return asyncio.run(run_session(tmp / f"s{seed}-{turns_}", scene, seed=seed, isolation="b",
                                   coordinator=coordinator)).dir


def batch_seeds(scene: Path, chars: Path, tmp_path: Path, coordinator: str, beats: int):
    """(seed, run folder) of `scene` played headless, isolation b, over seeds 1-6."""
    from promptdesk.core.cli.main import main

    for seed in range(1, 7):
        out = tmp_path / f"run-{seed}"
        assert main(["--batch", str(scene), "--isolation", "b", "--coordinator", coordinator, "--seed", str(seed),
                     "--max-beats", str(beats), "--characters-dir", str(chars), "--journals", "none", "--out", str(out),
                     "--quiet"]) == 0
        yield seed, out


@pytest.mark.parametrize("goal", [
    "Bob never admits he sold the van, and Alice and Charlie agree on a new budget.",
    "Alice and Charlie agree on a new budget; Bob does not confess.",
    "Bob won't admit anything.",
])
def test_a_goal_that_asks_someone_never_to_admit_is_kept_by_them(tmp_path, goal):
    """The person a goal asks never to admit something keeps it: no admission of theirs, and nothing of
    the secret their perspective holds, in any seed, sequential or parallel."""
    for seed in range(1, 5):
        for order in ("sequential", "parallel"):
            run = _play(tmp_path, seed, order, goal=goal, perspectives={"bob": SECRET},
                        prompt="Alice and Bob go through the depot's accounts with Charlie.")
            said = [t.text for t in turns(run) if t.spoke and t.actor == "bob"]
            assert said, run
            assert not [s for s in said if does_act(s, "admit") or "sold" in s.lower()], (seed, order, said)


@pytest.mark.parametrize("goal, lines, met", [
    ("Mara never admits the affair", [("Mara", "The truth is, I slept with Dev.")], False),
    ("Mara never admits the affair", [("Dev", "I admit it: it was me."), ("Mara", "Nothing happened.")], True),
    ("Lena does not confess, and they agree to leave", [("Lena", "Agreed, we leave."), ("Vik", "Agreed.")], True),
    ("Lena does not confess, and they agree to leave", [("Lena", "I confess: I changed the codes."),
                                                        ("Vik", "Agreed, we leave.")], False),
])
def test_the_offline_judge_counts_a_negated_clause_as_kept_until_its_person_does_it(goal, lines, met):
    """A clause asking that someone never do an act is met while they have not done it, and broken when they
    have: the act is not what the goal asks for."""
    assert assess(goal, lines, ("Mara", "Dev", "Lena", "Vik"))[0] is met
    assert all(c.negated == ("never" in c.text or "not" in c.text) for c in read_goal(goal, ("Mara", "Dev", "Lena")))


@pytest.mark.parametrize("goal", ["Bob can't wait to apologise", "Bob cannot help apologising", "Bob can't stop laughing"])
def test_a_clause_that_only_sounds_negated_is_not(goal):
    """`can't wait to apologise` asks for the apology: no negation of the act."""
    assert not read_goal(goal, ("Bob",))[0].negated


@pytest.mark.parametrize("text", [
    "The fire goes out",
    "Three slow knocks come at the back door and the fire goes out",
    "The candles gutter out and the fire dies down to embers",
])
def test_a_fire_going_out_is_no_evacuation(tmp_path, text):
    """A fire that goes out or dies down makes the room dark, not a fire to flee: the scene goes on after
    it in every seed, where a fire that breaks out ends it."""
    for seed in range(1, 5):
        run = _play(tmp_path, seed, "parallel", events=[{"at_beat": 2, "text": text}],
                    prompt="Alice, Bob and Charlie sit up late in a mountain hut, arguing about the route.")
        leaving = [t for t in turns(run) if t.beat <= 3 and t.spoke
                   and re.search(r"\b(?:out|outside|go|going|leave|off)\b", t.text) and "fire" in t.text.lower()]
        assert last_beat(run) > 4 and not leaving, (seed, last_beat(run), leaving)


@pytest.mark.parametrize("text, thing", [
    ("Three slow knocks come at the back door", "knocks"),
    ("Two shots ring out in the valley", "shots"),
    ("12 bells sound from the tower", "bells"),
])
def test_a_counted_noun_is_the_events_object_not_its_verb(text, thing):
    """`Three slow knocks come ...`: the knocks are what happened (not `Three slow`), and no one is named."""
    event = read_event(text)
    assert event.thing.endswith(thing) and not event.person, event


CREW = [("Ada Moss", "Baker"), ("Ben Okoro", "Baker"), ("Cleo Vance", "Driver"), ("Dev Rao", "Driver"),
        ("Edie Fox", "Cashier"), ("Finn Hale", "Cashier"), ("Gus Lind", "Porter"), ("Hana Sato", "Porter"),
        ("Ivo Petrov", "Cleaner"), ("Jade Kerr", "Cleaner"), ("Kit Barros", "Manager"), ("Lou Adams", "Apprentice")]


@pytest.mark.parametrize("size, turns_", [(12, "parallel"), (9, "parallel"), (12, "sequential")])
def test_a_crowd_of_near_identical_people_never_says_one_line_twice_in_a_beat(tmp_path, capsys, size, turns_):
    """A crowd answering blind, whose profiles give them the same concern: every move they all make at once
    (a world event, its aftermath, the close) has fewer lines than they are; no two say the same line in
    one beat, and they still take the event up (its words in their lines or business)."""
    from drama import same_beat_duplicates, uptake
    from promptdesk.core.cli.main import main

    slugs = []
    for name, job in CREW[:size]:
        slug = name.split()[0].lower()
        (tmp_path / "characters" / slug).mkdir(parents=True)
        (tmp_path / "characters" / slug / "profile.md").write_text(
            f"# {name} - {job}\n\n## Background\n- Works the night shift at the Harbour Street bakery as a {job.lower()}\n")
        slugs.append(slug)
    scene = tmp_path / "bakery.yaml"
    scene.write_text(f"name: bakery\nturns: {turns_}\nsetting: The Harbour Street bakery, four in the morning\n"
                     "prompt: The ovens have failed and the wedding order is due at nine.\n"
                     f"characters: [{', '.join(slugs)}]\nevents:\n  - at_beat: 3\n"
                     "    text: A delivery van crashes into the loading bay\n")
    for seed in range(1, 5):
        out = tmp_path / f"run-{seed}"
        assert main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", str(seed),
                     "--max-beats", "8", "--characters-dir", str(tmp_path / "characters"), "--journals", "none",
                     "--out", str(out), "--quiet"]) == 0
        assert not same_beat_duplicates(out), (seed, same_beat_duplicates(out))
        assert uptake(out, 3, "A delivery van crashes into the loading bay", within=1) >= 0.5, seed


def _titled(tmp: Path, people: list[tuple[str, str]]) -> Path:
    chars = tmp / "characters"
    for slug, profile in people:
        (chars / slug).mkdir(parents=True, exist_ok=True)
        (chars / slug / "profile.md").write_text(profile)
    return chars


@pytest.mark.parametrize("people, goal, role, doer, deed", [
    ([("osei", "# Captain Efua Osei\n- Calm under fire\n"), ("kaur", "# Dr Simran Kaur\n- Counts the injured\n"),
      ("adeyemi", "# Dr Tunde Adeyemi\n- Loves anomalies\n"), ("ribeiro", "# Ensign Leo Ribeiro\n- Stammers\n"),
      ("nakamura", "# Ensign Kenji Nakamura\n- Reports numbers\n")],
     "The captain orders the evacuation of deck 9.", "captain", "Captain Efua Osei", ("order", "evacu")),
    ([("boateng", "# Judge Ama Boateng\n- Dry, rules in one sentence\n"), ("reyes", "# Dana Reyes\n- Defence counsel\n"),
      ("pike", "# Walter Pike\n- Retired postman\n")],
     "Walter admits he lost his glasses, and the judge strikes the identification.", "judge", "Judge Ama Boateng",
     ("strik", "ident")),
])
def test_a_role_a_name_s_title_gives_is_played_by_that_person_and_is_no_topic(tmp_path, capsys, people, goal, role,
                                                                                doer, deed):
    """`the captain` of a goal is the cast member titled Captain (`the judge`, Judge Boateng): they do the
    clause's deed, no one talks *about* the captain, and two people sharing a title are each called by
    title and surname (`Dr Kaur`), never by their whole names."""
    from drama import turns

    chars = _titled(tmp_path, people)
    slugs = [slug for slug, _ in people]
    scene = tmp_path / "scene.yaml"
    scene.write_text(f"name: titled\nturns: parallel\nsetting: The bridge, red alert\n"
                     f"prompt: Coolant is flooding deck 9 and the reactor is running hot.\ngoal: {goal}\n"
                     f"characters: [{', '.join(slugs)}]\n")
    done = 0
    for seed, out in batch_seeds(scene, chars, tmp_path, "B", 16):
        said = [t for t in turns(out) if t.spoke]
        names = {json.loads(line)["from"]: json.loads(line)["cast"] for line in
                 (out / "events.jsonl").read_text().splitlines()[:1]}["coordinator"]
        assert not [t.text for t in said if re.search(rf"\bthe {role}\b", t.text, re.I)], seed
        assert not [t.text for t in said if "Dr Simran Kaur" in t.text or "Ensign Leo Ribeiro" in t.text], seed
        done += any(names[t.actor] == doer and all(w in t.text.lower() for w in deed) for t in said)
    assert done >= 4, done


@pytest.mark.parametrize("lines, met", [
    ([("Lt Ann Voss", "I order the slingshot now.")], False),
    ([("Captain Efua Osei", "I order the slingshot now.")], True),
    ([("Lt Ann Voss", "Captain, the slingshot? Who orders that?"), ("Captain Efua Osei", "Captain's log.")], False),
])
def test_the_offline_judge_reads_a_role_from_a_title_and_never_counts_the_roles_own_name(lines, met):
    """`The captain orders the slingshot`: the deed is the captain's (the cast member titled Captain), and
    saying `captain` is no part of doing it."""
    assert assess("The captain orders the slingshot.", lines, ("Captain Efua Osei", "Lt Ann Voss"))[0] is met


@pytest.mark.parametrize("text", [
    "You phoned the engineer's office this morning and they had no booking.",
    "The camera loop only holds for twelve more minutes.",
    "The Meridian has drifted into a gravitational anomaly.",
    "She signed the rental agreement that spring, and the deposit even cleared.",
    "The emotional toll of the annual audit is what worries you.",
])
def test_a_topic_never_ends_on_an_adverb_a_demonstrative_or_an_adjective(text):
    """A noun phrase a slot takes ends on its noun: never `the engineer's office this`, `the camera loop
    only` or `the gravitational` (its noun, `anomaly`, taken for an adverb)."""
    from promptdesk.core.improv.material import topics

    found = topics(text)
    assert found, text
    for phrase in found:
        last = phrase.split()[-1].lower()
        assert last not in {"this", "that", "only", "even", "really", "always"}, phrase
        assert not last.endswith(("ional", "ical", "ual")), phrase


@pytest.mark.parametrize("goal, who, verb", [
    ("Bob falls asleep at the table.", "bob", "fall"),
    ("Alice raises her glass to Charlie, and Bob laughs at both of them.", "alice", "raise"),
    ("Charlie persuades Alice that a lie can be kind.", "charlie", "persuade"),
])
def test_a_goal_deed_that_is_no_speech_act_is_done_not_announced(tmp_path, goal, who, verb):
    """A deed the goal names (`falls asleep`, `raises her glass`) is done in the person's business, in most
    seeds, and never announced in the first person (`I fall asleep. That's my word on it.`); the offline
    judge counts the business; no line reads a modal's verb as the deed (`I be kind`)."""
    done = 0
    for seed in range(1, 7):
        run = _play(tmp_path, seed, "parallel", goal=goal, coordinator="B",
                    prompt="Alice, Bob and Charlie linger over dinner at Alice's flat.")
        mine = [t for t in turns(run) if t.actor == who]
        assert not [t.text for t in turns(run) if re.search(rf"\bI (?:{verb}|be)\b", t.text)], seed
        done += any(t.business.startswith(verb[:4]) for t in mine)
        if any(t.business.startswith(verb[:4]) for t in mine) and goal.count(",") == 0:
            assert json.loads((run / "metadata.json").read_text())["goalAchieved"] is True, seed
    assert done >= 4, done


def test_the_offline_judge_reads_a_goal_naming_someone_by_surname_and_a_deed_done_in_business():
    """`Nietzsche laughs at both of them` names Friedrich Nietzsche (no one else is a Nietzsche), and his
    business doing it meets it; the same business by another does not."""
    cast = ("Socrates", "Friedrich Nietzsche", "Hypatia of Alexandria")
    done = [("Friedrich Nietzsche", "Ha! *laughs at both of them*.")]
    assert assess("Nietzsche laughs at both of them.", [], cast, done)[0] is True
    assert assess("Nietzsche laughs at both of them.", [], cast, [("Socrates", "*laughs at both of them*.")])[0] is False


def test_a_possessive_whose_noun_was_cut_off_is_no_topic():
    """`the prosecution's only eyewitness`: no topic `the prosecution's`."""
    from promptdesk.core.improv.material import topics

    for text in ("Walter, the prosecution's only eyewitness, saw the car.", "It was the landlord's very last offer."):
        assert not [t for t in topics(text) if t.endswith("'s")], topics(text)


def test_a_sentence_about_keeping_something_unsaid_is_never_said_aloud(tmp_path):
    """`You will not say so unless cornered` is how the character plays, not a line: over several seeds, no
    line of theirs says it (`I should say this plainly: I will not say so unless cornered`)."""
    perspective = ("You burned the letter from the council. You will not mention it unless someone asks. "
                   "You never tell anyone about the fire until you are sure.")
    for seed in range(1, 7):
        run = _play(tmp_path, seed, "parallel", perspectives={"bob": perspective},
                    goal="Alice and Charlie agree on a new budget.",
                    prompt="Alice, Bob and Charlie go through the allotment society's papers.")
        said = [t.text for t in turns(run) if t.actor == "bob" and t.spoke]
        assert not [s for s in said if re.search(r"\bunless\b|\buntil I am sure\b|\bfire until\b", s)], (seed, said)


def test_after_everyone_has_to_leave_a_later_event_is_no_reason_to_go(tmp_path):
    """An evacuation at beat 2 and another event at beat 3: whoever still takes leave names the evacuation's
    cause, never the later event (`It's the phone. I'm heading out.`)."""
    events = [{"at_beat": 2, "text": "The fire alarm goes off; everyone has to leave the building"},
              {"at_beat": 3, "text": "A phone buzzes on the windowsill"}]
    for seed in range(1, 7):
        run = _play(tmp_path, seed, "parallel", events=events,
                    prompt="Alice, Bob and Charlie argue about the quarterly figures.")
        late = [t.text for t in turns(run) if t.beat >= 3 and "phone" in t.text.lower()
                and re.search(r"\b(?:out|go|going|leave|off)\b", t.text)]
        assert not late, (seed, late)


@pytest.mark.parametrize("text, arrives", [
    ("A security guard's torch sweeps across the corridor", ""),
    ("A night cleaner walks in pushing a mop bucket", "the night cleaner"),
])
def test_a_person_arrives_only_when_the_event_brings_them_and_is_named_mid_sentence_in_lowercase(tmp_path, text,
                                                                                                   arrives):
    """`A security guard's torch sweeps ...` brings the torch, not the guard; `A night cleaner walks in`
    brings the night cleaner, named so in a sentence's middle (never `in front of A night cleaner`)."""
    for seed in range(1, 4):
        run = _play(tmp_path, seed, "parallel", events=[{"at_beat": 2, "text": text}],
                    prompt="Alice, Bob and Charlie argue about the quarterly figures.")
        business = [t.business for t in turns(run) if t.beat == 2 and t.business]
        words = [t.text for t in turns(run) if t.beat in (2, 3) and t.spoke]
        assert not [b for b in business if "turns toward a security guard" in b], seed
        assert not [w for w in words if re.search(r"\w [AT]he? night cleaner|\w A night cleaner", w)], seed
        if arrives:
            assert [b for b in business if arrives in b], (seed, business)


@pytest.mark.parametrize("goal, hero", [
    ("Write a 3-paragraph bedtime story about a badger who names the stars", "badger"),
    ("Write a short fable about a fox that steals the moon", "fox"),
    ("Write a fairy tale about a girl with a glass key", "girl"),
])
def test_a_tales_hero_is_its_subjects_own_noun_not_the_last_word_of_its_clause(goal, hero):
    """`a badger who names the stars` sets out as *the badger*, never *the stars*, and is never
    `... who names the stars who wanted ...`."""
    import random

    from promptdesk.core.formats.collaborate.drafts import first_draft, read_ask

    for seed in range(1, 6):
        draft = first_draft(read_ask(goal), random.Random(seed))
        assert f"the {hero} set out" in draft, draft
        assert not re.search(r"\bwho \w+ [^.]* who\b", draft), draft


@pytest.mark.parametrize("cast", [2, 3])
def test_a_role_the_prompt_gives_only_by_a_verb_is_read(tmp_path, capsys, cast):
    """`Kofi rents the top flat from Mara`: Kofi is the tenant and Mara the landlord; a goal naming them by
    those roles is done by them (the tenant's apology is Kofi's, the landlord's acceptance Mara's), and no
    one talks *about* the tenant or the landlord."""

    people = [("kofi", "# Kofi Mensah\n- Nurse on night shifts\n"), ("mara", "# Mara Quint\n- Smiles while refusing\n"),
              ("ines", "# Ines Duarte\n- Lives downstairs, hears everything\n")][:cast]
    chars = _titled(tmp_path, people)
    scene = tmp_path / "scene.yaml"
    scene.write_text("name: boiler\nturns: sequential\nsetting: The hallway of 14 Elm Street\n"
                     "prompt: Kofi rents the top flat from Mara. His music kept the house awake until three.\n"
                     "goal: The tenant apologises for the music, and the landlord accepts.\n"
                     f"characters: [{', '.join(slug for slug, _ in people)}]\n")
    both = 0
    for seed, out in batch_seeds(scene, chars, tmp_path, "C", 14):
        said = [t for t in turns(out) if t.spoke]
        assert not [t.text for t in said if re.search(r"\bthe (?:tenant|landlord)\b", t.text, re.I)], seed
        apologised = {t.actor for t in said if does_act(t.text, "apologise")}
        accepted = {t.actor for t in said if does_act(t.text, "accept")}
        assert apologised <= {"kofi"} and accepted <= {"mara"}, (seed, apologised, accepted)
        both += apologised == {"kofi"} and accepted == {"mara"}
    assert both >= 2, both


@pytest.mark.parametrize("perspective", ["You and Dev slept together in Lisbon.", "You and your sister own the house.",
                                         "Last spring you and the captain lied to the crew.", "He saw you and Dev kissing."])
def test_a_pair_with_the_character_in_it_is_said_with_the_other_first(perspective):
    """`You and Dev` in the first person is `Dev and I` (`Dev and me` as an object), never `I and Dev`."""
    from promptdesk.core.improv.voice import first_person

    said = first_person(perspective)
    assert not re.search(r"\b(?:I|me) and\b", said) and re.search(r"\band (?:I|me)\b", said), said


@pytest.mark.parametrize("prompt, role", [
    ("Alice the innkeeper has called Bob and Charlie down to the flooded cellar.", "innkeeper"),
    ("Bob the badger has come to tell Alice and Charlie a story about the star called Pudding.", "badger"),
])
def test_a_role_given_by_apposition_without_a_comma_is_no_topic(tmp_path, prompt, role):
    """`Bob the badger has come ...` gives Bob a role as `Bob, the badger,` does: no one talks *about* the
    badger in front of him."""
    for seed in range(1, 5):
        run = _play(tmp_path, seed, "parallel", prompt=prompt, goal="Alice, Bob and Charlie agree on what to do next.")
        assert not [t.text for t in turns(run) if t.spoke and f"the {role}" in t.text.lower()], seed


@pytest.mark.parametrize("goal, told", [
    ("The doctor tells Harold the cancer has spread.", "the cancer has spread"),
    ("The doctor tells Harold that the scan was clear.", "the scan was clear"),
])
def test_a_titled_role_in_a_scene_of_two_is_the_titled_person_and_tells_what_is_told(tmp_path, capsys, goal, told):
    """In a scene of two, `the doctor` is Dr Ngozi Okafor (her title), not the other person; she tells what
    the goal says she tells (`the cancer has spread`), not `I tell Harold ...`, in most seeds."""

    chars = _titled(tmp_path, [("okafor", "# Dr Ngozi Okafor - Oncologist\n- Never uses euphemisms\n"),
                               ("harold", "# Harold Finch\n- Retired carpenter, jokes to keep people comfortable\n")])
    scene = tmp_path / "scene.yaml"
    scene.write_text("name: results\nturns: sequential\nsetting: A consulting room, late afternoon\n"
                     f"prompt: Harold has come alone for the results of the liver scan; his daughter waits in the car park.\n"
                     f"goal: {goal}\ncharacters: [okafor, harold]\n")
    done = 0
    for seed, out in batch_seeds(scene, chars, tmp_path, "C", 14):
        said = [t for t in turns(out) if t.spoke]
        assert not [t.text for t in said if t.actor == "harold" and told in t.text.lower()], seed
        assert not [t.text for t in said if re.search(r"\bI tell\b", t.text)], seed
        done += any(t.actor == "okafor" and told in t.text.lower() for t in said)
    assert done >= 4, done


@pytest.mark.parametrize("bullet", ["Retired carpenter, jokes to keep people comfortable",
                                    "Trained nurse, twenty years on the ward", "Married father of three; hates fuss"])
def test_a_description_opening_on_a_participle_is_never_said_as_i_plus_a_noun(bullet):
    """`Retired carpenter, jokes ...` describes the character: it is not a deed to say as `I retired carpenter`."""
    from promptdesk.core.improv.material import _background

    said = _background(f"# Harold Finch\n\n## Background\n- {bullet}\n- Missed the bus by a minute\n")
    assert said == ["I missed the bus by a minute."], said


@pytest.mark.parametrize("goal, roles, who", [
    ("The buyer and the stallholder agree on a price.", (("buyer", "Gus"), ("stallholder", "Fatima")), ("Gus", "Fatima")),
    ("The tenant and the landlord agree to split the bill.", (("tenant", "Kofi"), ("landlord", "Mara")), ("Kofi", "Mara")),
])
def test_a_clause_whose_subject_lists_roles_names_each_of_their_players(goal, roles, who):
    """`The buyer and the stallholder agree`: both roles are read, and the clause is owed by both players (it
    named no one, so no one was led to agree and either role was talked about as a topic)."""
    from promptdesk.core.improv.roles import goal_roles

    assert set(goal_roles(goal)) == {role for role, _ in roles}
    clause = read_goal(goal, ("Gus", "Fatima", "Kofi", "Mara"), roles)[0]
    assert clause.who == who and clause.act == "agree"


@pytest.mark.parametrize("note, told", [
    ("Tell them what you heard on the roof last night", "footsteps"),
    ("Tell them why you sold the van", "debts"),
])
def test_a_note_to_tell_what_something_was_is_told_from_the_characters_own_words(tmp_path, note, told):
    """`Tell them what you heard on the roof` is acted on with what the character's perspective says they heard
    (`I heard footsteps on the roof last night`), never with the question as a fragment (`What I heard ...`)."""
    from drama import next_line
    from promptdesk.core.casting.branch import prepare_branch
    from promptdesk.core.record.takes import Change

    perspective = ("You heard footsteps on the roof last night and said nothing. "
                   "You sold the van in March because your debts had grown too large.")
    parent = _play(tmp_path, 7, "parallel", perspectives={"bob": perspective},
                   prompt="Alice, Bob and Charlie sit up late in the farmhouse kitchen.",
                   goal="Alice, Bob and Charlie agree on who keeps watch tonight.")
    for seed in range(1, 5):
        session = prepare_branch(parent, 3, Change(note=note, to="bob", seed=seed), out=tmp_path / f"take-{seed}")
        asyncio.run(session.run())
        line = next_line(tmp_path / f"take-{seed}", "bob", 3)
        assert line and told in line.text and not re.search(r"\b(?:What|Why) I\b", line.text), (seed, line)
