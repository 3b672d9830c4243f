"""The offline improviser read line by line as a writer reads: what it makes of words a scene file
holds (an event whose subject opens on a word that is also a verb, an abbreviation inside a sentence,
a profile bullet opening on an adverb, a goal naming someone by a family title). Each test states a
property of the reading over several inputs, never one wording."""

from __future__ import annotations

import re

import pytest

from promptdesk.core.improv.directions import read_event

_DETERMINER = r"(?:a|an|the|some|his|her|their)"


@pytest.mark.parametrize("text", ["The crash bell goes off in bay two", "A drop of water falls from the ceiling",
                                  "The cut rope snaps loudly", "The break room door slams shut",
                                  "The stop sign falls over", "Her call button buzzes twice"])
def test_an_event_object_is_a_noun_phrase_of_the_event_even_when_its_noun_is_also_a_verb(text):
    event = read_event(text)
    words = event.thing.split()
    assert len(words) >= 2 and not re.fullmatch(_DETERMINER, words[-1], re.I)
    assert not any(re.fullmatch(_DETERMINER, a, re.I) and re.fullmatch(_DETERMINER, b, re.I)
                   for a, b in zip(words, words[1:]))
    assert " ".join(words[1:]).lower() in text.lower()
    assert event.action and event.action.split()[0] not in event.thing.split()


from promptdesk.core.improv.material import _secrets, _sentences  # noqa: E402
from promptdesk.core.improv.scene_words import split_sentences  # noqa: E402
from promptdesk.core.improv.voice import first_person, self_trait  # noqa: E402


@pytest.mark.parametrize("text, count", [
    ("You missed the 2 a.m. observations on bed 12. You filled nothing in.", 2),
    ("The train leaves at 6 p.m. sharp and you will be on it. Nobody knows.", 2),
    ("You saw Dr. Osei at the door. Mr. Hale was asleep. St. Mary's was quiet.", 3),
    ("You packed the tools, the rope etc. and the lamp. Then you waited.", 2)])
def test_a_full_stop_inside_a_sentence_ends_no_sentence(text, count):
    parts = split_sentences(text)
    assert len(parts) == count
    assert not any(re.search(r"(?:\b[a-zA-Z]\.|\b(?:Dr|Mr|Mrs|St|etc)\.)$", p) for p in parts[:-1])
    said = _sentences(first_person(text)) + _secrets(first_person(text))
    assert not any(re.search(r"\b[a-z]\.$|\b(?:Dr|Mr|St)\.$", s) for s in said)


_THIRD_PERSON_AFTER_I = re.compile(r"\bI (?:(?:[a-z]+ly|never|always|often|sometimes|still|also) )?"
                                   r"(?!always\b|sometimes\b)(?:is|has|does|was not|[a-z]{2,}(?<![su]s)(?<!ss)s)\b|\bI were\b|\bI'm [a-z]+ly [a-z]+s\b"
                                   r"|\b(?:and|when I|then) (?:is|has|does)\b|\bI alway\b|\bI sometime\b")


@pytest.mark.parametrize("bullet, pronoun", [
    ("Rarely raises her voice; when she does, people move", "she"),
    ("Never lets one party speak for the other", ""),
    ('Says "Hm" and waits', "she"),
    ("Gets seasick in heavy weather and is ashamed of it", ""),
    ("Knows the engine is running hot and has been nursing it for two days", "she"),
    ("Always asks one precise question and waits for the whole answer", "he"),
    ("Often forgets his keys", "he"),
    ('When unconvinced: Says "Hm" and waits', "she"),
    ("Sometimes says more than he means", "he"),
    ("Seldom sleeps before midnight and never complains", "")])
def test_a_profile_bullet_said_in_the_first_person_keeps_its_verbs_agreeing_with_i(bullet, pronoun):
    said = self_trait(bullet, pronoun)
    assert said.startswith(("I ", "When I")) and not _THIRD_PERSON_AFTER_I.search(said), said
    kept = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", bullet)} - {"when", "says", "asks", "lets", "raises",
                                                                          "waits", "gets", "knows", "forgets",
                                                                          "sleeps", "complains", "does", "means"}
    assert kept <= {w.lower() for w in re.findall(r"[A-Za-z]{4,}", said)} | {"herself", "himself"}


@pytest.mark.parametrize("perspective", ["You did not report it because you were afraid.",
                                         "You stayed late, and you were the last to leave.",
                                         "You knew you weren't ready."])
def test_a_perspective_in_the_first_person_says_i_was_not_i_were_outside_a_wish_or_a_condition(perspective):
    said = first_person(perspective)
    assert "I was" in said and not re.search(r"\bI were", said)
    assert re.search(r"\bI were\b", first_person("If you were braver you would go. You wish you were home."))


@pytest.mark.parametrize("perspective", ["You came early. Your sister is late. You wait.",
                                         "The door is locked. Yours is the only key. You're sure of it."])
def test_a_perspective_in_the_first_person_keeps_every_sentence_opening_on_a_capital(perspective):
    said = first_person(perspective)
    parts = split_sentences(said)
    assert len(parts) == len(split_sentences(perspective))
    assert all(p[:1].isupper() for p in parts)


from promptdesk.core.improv.story import goal_sentence  # noqa: E402
from promptdesk.core.improv.voice import as_me, mid_sentence  # noqa: E402
from promptdesk.core.protocol.goal_acts import read_goal  # noqa: E402

_GOALS = [("Abuela Rosa Delgado", "she", "Tomas thanks her, and Abuela Rosa gives her blessing to the move"),
          ("Nonna Lucia Ferri", "she", "Nonna Lucia shares her recipe, and Marco tastes it"),
          ("Kwame Mensah", "he", "Kwame explains the gap in his CV, and Priya promises to reply by Friday"),
          ("Sister Aoife Byrne", "she", "Sister Aoife hands over her ward, and Yusuf takes it"),
          ("Tio Ramon Vega", "he", "Tio Ramon returns his brother's car before dark")]


@pytest.mark.parametrize("name, pronoun, goal", _GOALS)
def test_a_goal_said_by_the_person_it_names_is_in_the_first_person_with_their_own_possessives(name, pronoun, goal):
    said = as_me(goal, name, pronoun)
    mine = re.search(r"\bI [a-z]+([^,]*)", said)
    assert mine, said
    assert not re.search(r"\bme\s+[A-Z]|\b[A-Z][a-z]+ I\b", said), said  # no `me Rosa gives`, `Abuela I give`
    assert not re.search(rf"\b(?:{'her' if pronoun == 'she' else 'his'})\s+[a-z]{{3,}}", mine.group(1)), said
    cast = (name, "Tomas Vega", "Marco Ferri", "Priya Raman", "Dr Yusuf Demir")
    clause = next(c for c in read_goal(goal, cast) if name in c.who)
    line = goal_sentence(clause, pronoun)
    assert line.startswith("I ") and not re.search(rf"\b{'her' if pronoun == 'she' else 'his'}\s+[a-z]{{3,}}", line), line


@pytest.mark.parametrize("goal", ["Oleg admits he missed the round", "Anya and Oleg agree on a rota",
                                  "Maximilian apologises to the team"])
def test_a_goal_opening_on_a_name_keeps_its_capital_when_quoted_mid_sentence(goal):
    assert mid_sentence(goal, ()) == goal
    assert mid_sentence("The crew agrees to turn back", ()) == "the crew agrees to turn back"


from promptdesk.core.improv.material import read_material  # noqa: E402

_CASTS = [
    ("Gareth Pryce", ("Harriet Osei", "Mrs Dolores Fitch"),
     "Mrs Fitch, the homeowner on the ground floor, has complained about the noise. Harriet Osei, a volunteer "
     "mediator, has brought them together.", "The tenant apologises for the noise, and the homeowner accepts.",
     "# Gareth Pryce - Tenant\n## Background\n- Worked as a sound engineer for ten years\n- Plays the bass guitar\n",
     {"homeowner", "mediator"}),
    ("Kwame Mensah", ("Priya Raman", "Kenji Watanabe"),
     "Kwame is interviewing for the senior backend role. Priya, the hiring manager, and Kenji, the engineering "
     "lead, are on the panel.", "Kwame explains the gap, and the hiring manager promises to reply by Friday.",
     "# Kwame Mensah - Candidate\n## Background\n- Eight years as a backend engineer in Accra and Manchester\n"
     "- Took eighteen months off to care for the family business\n", {"manager", "lead", "engineer"}),
    ("Rafael Souza", ("Captain Ingrid Haugen", "Ngozi Okafor"),
     "The storm has come in faster than the forecast said.",
     "The crew agrees to turn back, and the captain thanks the chief engineer.",
     "# Rafael Souza - Ship's Doctor\n## Background\n- Used to be a junior surgeon at the big hospital in Porto\n",
     {"engineer", "captain", "surgeon"}),
]


@pytest.mark.parametrize("name, others, prompt, goal, profile, people", _CASTS)
def test_a_role_someone_present_plays_or_the_character_once_played_is_no_topic(name, others, prompt, goal, profile,
                                                                                people):
    m = read_material(name, others, "A side room, evening.", prompt, goal, "", profile)
    spoken_of = {w.lower() for phrase in (*m.topics, *m.mine) for w in phrase.split()}
    assert not spoken_of & people, (m.topics, m.mine)
    assert m.topics or m.mine


import random  # noqa: E402

from promptdesk.core.improv.scene_rules import GRAMMAR  # noqa: E402


@pytest.mark.parametrize("deed", ["turn back for Bergen", "keep quiet hours after ten", "call the consultant"])
def test_a_crew_of_up_to_eight_agreeing_to_a_goal_deed_in_one_blind_beat_says_as_many_lines(deed):
    slots = {"to": ["Ngozi"], "mine": ["the port engine"], "goal_do": [deed], "topic": ["the storm"]}
    for n in range(2, 9):
        for beat in range(3):
            lines = [GRAMMAR.expand("agree_goal_do", random.Random(beat * 10 + i), slots, ((i + beat) % n, n))
                     for i in range(n)]
            assert len(set(lines)) == n, lines
            assert all(deed in line and does_act(line, "agree") for line in lines), lines


import asyncio  # noqa: E402

from promptdesk.core.casting.scene_file import scene_from_dict  # noqa: E402
from promptdesk.core.protocol.goal_acts import does_act  # noqa: E402
from drama import turns  # noqa: E402
from helpers import ROOT, played_offline, run_session, titled_cast  # noqa: E402

APOLOGIES = [("Ilse Varga", "Tenant", "Kofi Mensah", "Homeowner", "Ilse apologises for the late-night noise, and Kofi accepts.",
              "noise"),
             ("Ilse Varga", "Chef", "Kofi Mensah", "Critic", "Ilse apologises for the cold soup, and Kofi accepts.", "soup"),
             ("Ilse Varga", "Driver", "Kofi Mensah", "Cyclist", "Ilse apologises for her dented bumper, and Kofi accepts.",
              "bumper")]


_cast = titled_cast


@pytest.mark.parametrize("name, title, other, other_title, goal, thing", APOLOGIES)
def test_an_apology_the_goal_asks_for_something_is_for_that_thing(tmp_path, name, title, other, other_title, goal,
                                                                   thing):
    slugs = _cast(tmp_path, ((name, title), (other, other_title)))
    apologies = []
    for run in played_offline(tmp_path, slugs, goal, range(1, 5)):
        apologies += [t.text for t in turns(run) if t.spoke and t.actor == "p0" and does_act(t.text, "apologise")]
    assert apologies and all(thing in a for a in apologies), apologies
    assert not any(re.search(r"\b(?:her|his|their) " + thing, a, re.I) for a in apologies if "her" in goal), apologies


def test_a_place_named_before_a_person_is_still_a_topic_and_the_persons_role_is_not():
    m = read_material("Sister Aoife Byrne", ("Dr Yusuf Demir", "Oleg Petrov"), "The nurses' station, 3 a.m.",
                      "Sister Aoife is handing over the ward to Dr Yusuf Demir, the night registrar, before her break.",
                      "", "", "# Sister Aoife Byrne - Charge Nurse\n")
    words = {w for t in (*m.topics, *m.mine) for w in t.split()}
    assert "ward" in words and "registrar" not in words, (m.topics, m.mine)


THANKS = [(("Ilse Varga", "Courier"), ("Kofi Mensah", "Depot Manager"), ("Ana Ruiz", "Clerk"),
           "Ilse admits she lost the van keys, and the manager thanks her for telling him.", "telling me"),
          (("Ilse Varga", "Apprentice"), ("Kofi Mensah", "Head Chef"), ("Ana Ruiz", "Waiter"),
           "Ilse admits she burned the sauce, and Kofi thanks her for her honesty.", "your honesty"),
          # named as the improviser calls her (`Dr Haddad`): the thanks went to whoever spoke last
          (("Dr Amal Haddad", "Ship's Doctor"), ("Kofi Mensah", "Ferry Captain"), ("Ana Ruiz", "Deckhand"),
           "Ana agrees to turn back, and Kofi thanks Dr Haddad for her care.", "your care")]


@pytest.mark.parametrize("first, second, third, goal, said", THANKS)
def test_a_goal_thanks_goes_to_the_person_it_points_back_to_and_says_what_for(tmp_path, first, second, third, goal, said):
    slugs = _cast(tmp_path, (first, second, third))
    thanks = []
    for run in played_offline(tmp_path, slugs, goal, range(1, 7), beats=16, setting="A back office, late evening",
                              prompt="The three of them have stayed behind after closing."):
        events = [e for e in __import__("drama").records(run) if e.get("type") == "speak" and e.get("from") == "p1"]
        thanks += [e for e in events if does_act(e.get("text") or "", "thank") and said in (e.get("text") or "")]
    assert thanks, "the goal's thanks never came"
    assert all(e.get("target") == first[0] for e in thanks), [(e.get("target"), e["text"]) for e in thanks]


from promptdesk.core.improv.judge import assess  # noqa: E402
from promptdesk.core.protocol.goal_acts import person_of  # noqa: E402


@pytest.mark.parametrize("member, written", [("Олег Петров", "Oleg"), ("Στέλιος Παπαδόπουλος", "Stelios"),
                                             ("Ирина Шевченко", "Irina"), ("Γιώργος Νικολάου", "Giorgos")])
def test_a_goal_written_in_english_names_a_cyrillic_or_greek_cast_member_by_the_latin_spelling(member, written):
    cast = (member, "Ngozi Okafor", "Dr Yusuf Demir")
    assert person_of(written, cast) == member
    clauses = read_goal(f"{written} admits he missed the 2 a.m. round, and Ngozi thanks him.", cast)
    assert clauses[0].who == (member,) and clauses[0].act == "admit" and len(clauses) == 2
    assert as_me(f"{written} admits he missed the round", member, "he").startswith("I admit I missed")
    assert person_of("Alice", cast) is None


def test_a_full_stop_inside_a_goal_cuts_no_clause():
    clauses = read_goal("Ann admits she missed the 2 a.m. check, and Bo accepts.", ("Ann Lee", "Bo Park"))
    assert [c.act for c in clauses] == ["admit", "accept"] and [c.who for c in clauses] == [("Ann Lee",), ("Bo Park",)]


def test_the_offline_judge_counts_a_latin_spelled_goal_act_only_from_that_cyrillic_member():
    cast = ("Олег Петров", "Sister Aoife Byrne")
    goal = "Oleg admits he missed the observations, and Aoife accepts."
    done, _ = assess(goal, [("Олег Петров", "I admit it: I missed the observations on bed 12."),
                            ("Sister Aoife Byrne", "I accept that. Thank you for telling me.")], cast)
    wrong, _ = assess(goal, [("Sister Aoife Byrne", "I admit I missed the observations myself."),
                             ("Sister Aoife Byrne", "I accept that.")], cast)
    assert done is True and wrong is False


from promptdesk.core.improv.scene_words import topics  # noqa: E402


@pytest.mark.parametrize("text, subject", [
    ("Three generations of the Delgado family eat together every Sunday.", "the Delgado family"),
    ("You need the hire soon or the routing migration slips again.", "the routing migration"),
    ("You think the ship can make port if the old engines hold.", "the old engines"),
    ("Nobody noticed when the night nurse sat down.", "the night nurse"),
    ("You hope the harbour wall survives the winter.", "the harbour wall")])
def test_a_noun_phrase_that_is_a_clauses_subject_is_read_without_its_verb(text, subject):
    found = topics(text)
    assert subject in found, found
    assert not any(t.startswith(subject + " ") for t in found), found


@pytest.mark.parametrize("bullet", ["Uses numbers when he is scared: rent, fees, covers per night",
                                    "Packs the same things every trip: maps, matches, spare socks",
                                    "Talks about three things only: boats, debts, daughters"])
def test_a_list_after_a_colon_in_a_profile_bullet_keeps_its_words(bullet):
    said = self_trait(bullet, "he")
    assert said.startswith("I ") and said.rstrip(".").endswith(bullet.split(": ", 1)[1]), said


def test_an_evacuation_early_in_a_sequential_scene_of_three_closes_it_soon(tmp_path):
    """After a goodbye the scene may not close on yet (someone has not spoken their turns), the next turn
    goes to the one it waits for: two who had spoken passed goodbyes back and forth for up to sixteen
    beats while the third never had a turn."""
    slugs = _cast(tmp_path, (("Ilse Varga", "Manager"), ("Kofi Mensah", "Candidate"), ("Ana Ruiz", "Engineer")))
    for seed in range(1, 7):
        scene = scene_from_dict({"name": "out", "turns": "sequential", "characters": slugs,
                                 "goal": "Kofi explains his plan, and Ilse promises to reply by Friday.",
                                 "setting": "A meeting room, morning", "prompt": "An interview on the fourth floor.",
                                 "events": [{"at_beat": 2, "text": "A guard walks in and asks everyone to leave the floor"}],
                                 "limits": {"max_beats": 20}})
        run = asyncio.run(run_session(tmp_path, scene, seed=seed, isolation="a", coordinator="C"))
        spoken = [t for t in turns(run.dir) if t.spoke]
        assert spoken[-1].beat <= 2 + 4, [(t.beat, t.actor, t.text) for t in spoken if t.beat >= 2]


def test_a_line_said_to_someone_never_names_what_is_theirs_in_the_third_person(tmp_path):
    """A perspective or background sentence that speaks of the addressee (`I borrowed to pay Alex's
    tuition`) calls it `your ...` when said to them."""
    slugs = _cast(tmp_path, (("Miguel Delgado", "Father"), ("Alex Delgado", "Student")))
    said_to_alex = []
    for seed in range(1, 7):
        scene = scene_from_dict({"name": "theirs", "turns": "sequential", "characters": slugs,
                                 "setting": "A kitchen, Sunday night", "prompt": "A father and his child at dinner.",
                                 "goal": "Miguel admits what he did, and Alex accepts.",
                                 "perspectives": {"p0": "You borrowed against the house to pay Alex's tuition. "
                                                        "You have not told anyone about Alex's debt."},
                                 "limits": {"max_beats": 14}})
        run = asyncio.run(run_session(tmp_path, scene, seed=seed, isolation="b", coordinator="C"))
        said_to_alex += [e["text"] for e in __import__("drama").records(run.dir)
                         if e.get("type") == "speak" and e.get("from") == "p0" and e.get("target") == "Alex Delgado"]
    assert said_to_alex and not any("Alex's" in text for text in said_to_alex), said_to_alex
    assert any("your" in text.lower() for text in said_to_alex), said_to_alex


@pytest.mark.parametrize("goal", ["Bob gives a sincere apology, Alice accepts, and they agree on accountability measures.",
                                  "Mara makes a full confession and Tom offers his forgiveness.",
                                  "The partners reach an agreement on the lease and thank the broker.",
                                  "Lena keeps her promise about the boat."])
def test_the_goals_acts_are_never_topics_talked_about_as_things(goal):
    """`I owe you an apology for the sincere apology`: an act of the goal is done or not, never a topic."""
    from promptdesk.core.improv.material import read_material
    material = read_material.__wrapped__("Mara", ("Tom", "Bob", "Alice", "Lena"), "A boatyard office.",
                                         "They meet about the lease.", goal, "", "")
    assert material.topics, goal
    assert not [t for t in material.topics if re.search(r"apolog|confess|forgiv|agree|thank|promis", t, re.I)], material.topics


@pytest.mark.parametrize("lead,text,ok", [("no", "thank you, Bob.", False), ("no", "I accept your apology.", False),
                                          ("no", "I agree, Fridays.", False), ("no", "I promise I will call.", False),
                                          ("look", "thank you, Bob.", True), ("no", "where were we on the lease?", True),
                                          ("listen", "I am sorry, Alice.", True), ("sorry", "I'm sorry, Alice.", False),
                                          ("okay", "Okay then, the vote.", False)])
def test_a_lead_in_never_turns_what_a_line_does(lead, text, ok):
    """`No, thank you` is a refusal: the improviser's `No,` never opens thanks, an acceptance, an
    agreement or a promise; other lead-ins open any line."""
    from promptdesk.core.improv.speech import _leads_into
    assert _leads_into(lead, text) is ok


def test_no_improvised_scene_opens_an_assent_with_no(tmp_path):
    from promptdesk.core.cli.main import main
    for seed in range(1, 7):
        out = tmp_path / f"s{seed}"
        assert main(["--batch", str(ROOT / "scenes" / "the-apology.yaml"), "--characters-dir", str(ROOT / "characters"),
                     "--journals", "none", "--seed", str(seed), "--out", str(out), "--quiet",
                     "--isolation", "b", "--coordinator", "C"]) == 0
        said = (out / "transcript.txt").read_text()
        assert not re.search(r"\bNo, (?:thank|I accept|I agree|I promise|I forgive)", said), seed


@pytest.mark.parametrize("seed", range(8))
def test_a_line_said_to_someones_face_is_not_said_again_as_drawn(seed):
    """A confidence drawn as `I am Bob's team lead` is said to Bob as `your team lead`: the check that an
    actor never repeats itself compares what was said, so the same confidence is not drawn again."""
    import random

    from promptdesk.core.improv.briefing_reader import Briefing
    from promptdesk.core.improv.lines import Line
    from promptdesk.core.improv.material import Material
    from promptdesk.core.improv.speech import Cue, words

    fact = "I am here as Bob's team lead."
    brief = Briefing(name="Charlie", others=["Alice", "Bob"], beat=10)
    material = Material(topics=("the process",), facts=(fact,))
    said = words(brief, material, Cue(move="confide", to="Bob"), random.Random(seed), lead_in=False)
    assert "your team lead" in said and "Bob's" not in said
    brief.own.append(Line(kind="speech", text=said, speaker="Charlie", own=True))
    for again in range(6):
        assert words(brief, material, Cue(move="confide", to="Bob"), random.Random(seed * 10 + again),
                     lead_in=False) != said


@pytest.mark.parametrize("seed", range(4))
def test_a_confidence_is_made_once(seed):
    """Once a character has said a fact of its perspective, it does not confide it again (`There's something
    I haven't said` about what it said two lines before), whichever way the first one was framed."""
    import random

    from promptdesk.core.improv.briefing_reader import Briefing
    from promptdesk.core.improv.lines import Line
    from promptdesk.core.improv.material import Material
    from promptdesk.core.improv.speech import Cue, unsaid_facts, words

    facts = ("I am perfectly fine on my own, and I will not be handled.", "I am here as Bob's team lead.")
    brief = Briefing(name="Charlie", others=["Alice", "Bob"], beat=9)
    material = Material(topics=("the process",), facts=facts)
    rng = random.Random(seed)
    first = words(brief, material, Cue(move="confide", to="Bob"), rng, lead_in=False)
    brief.own.append(Line(kind="speech", text=first, speaker="Charlie", own=True))
    told = [fact for fact in facts if fact.lower().rstrip(".") in first.lower().replace("your", "bob's")]
    assert len(told) == 1 and unsaid_facts(brief, material) == [f for f in facts if f not in told]
    second = words(brief, material, Cue(move="confide", to="Bob"), rng, lead_in=False)
    brief.own.append(Line(kind="speech", text=second, speaker="Charlie", own=True))
    assert told[0].lower().rstrip(".") not in second.lower().replace("your", "bob's")
    assert unsaid_facts(brief, material) == []


def test_a_lead_in_never_doubles_a_lead_the_line_opens_with():
    """`You know, all right. I am fine on my own.`: a line that opens on a lead of its own gets no other."""
    import random

    from promptdesk.core.improv.briefing_reader import Briefing
    from promptdesk.core.improv.material import Material
    from promptdesk.core.improv.speech import Cue, words
    from promptdesk.core.improv.temperament import Temperament

    material = Material(topics=("the process",), facts=("I am fine on my own.",))
    lines = set()
    for seed in range(200):
        for leaning, beat in zip(("warm", "forceful", "anxious", "quiet"), (8, 9, 10, 11)):
            brief = Briefing(name="Maria", others=["Sam"], beat=beat, temperament=Temperament(**{leaning: 1.0}))
            lines.add(words(brief, material, Cue(move="confide", to="Sam"), random.Random(seed)))
    opening = [line for line in lines if re.match(r"All right\.", line, re.I)]
    led = [line for line in lines if re.match(r"[\w ]+, all right\.", line, re.I)]
    assert opening and not led, led


@pytest.mark.parametrize("perspective", ["Part of you wants to be told it was not all your fault.",
                                         "You would rather own your share than watch Bob carry all of it.",
                                         "You owe Tom an apology and you know it; the half you kept back still bothers you."])
def test_what_a_perspective_says_of_blame_is_no_topic_of_its_own(perspective):
    """`my fault` is an apology and `my share` a part of something left unnamed: neither is a topic
    (*My fault comes first for me*, *We all want my share to work out*)."""
    from promptdesk.core.improv.material import read_material
    material = read_material.__wrapped__("Charlie", ("Bob", "Tom"), "An office.", "They meet about the lease.",
                                         "They agree on the lease.", perspective, "")
    assert not [t for t in (*material.topics, *material.mine) if re.search(r"fault|share|half|apolog", t, re.I)], material


@pytest.mark.parametrize("pronoun,own", [("he", "his"), ("she", "her"), ("", "their")])
def test_every_stock_gesture_names_a_body_part_as_the_characters_own(pronoun, own):
    """`*crosses arms*` reads as a note, not a line of the play: a stock gesture that names a part of the
    body says whose it is (`crosses her arms`), in the profile's pronoun."""
    from promptdesk.core.improv import phrases

    stock = [g for gestures in phrases.GESTURES.values() for g in gestures] + list(phrases.SILENT_GESTURES)
    said = [phrases.theirs(g, pronoun) for g in stock]
    parts = [g for g in said if re.search(r"\b(?:arms?|eyes|hands?|neck|shoulders|voice|head|chair)\b", g)]
    assert len(parts) >= 8
    bare = [g for g in parts if not re.search(rf"\b(?:{own}|the|a)\s+(?:\w+\s+)?(?:arms?|eyes|hands?|neck|shoulders|voice|head|chair)\b", g)]
    assert not bare, bare
