"""Goal verdicts whose truth is known: hand-written scenes (every actor's lines scripted on the loopback
server) judged by role C's markers, the offline judge and an LLM judge, over several goal wordings."""

from __future__ import annotations

import json
import re

import pytest

from promptdesk.core.protocol.goal_acts import does_act
from promptdesk.core.improv.judge import assess
from helpers import example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

CHATTER = ('[TO: {to}, TONE: flat] "Let us go over beat {beat} of the timeline again."')


def beat_of(recorded) -> int:
    found = re.findall(r"BEAT (\d+)", json.dumps(recorded.body["messages"][-1]))
    return int(found[-1]) if found else 0


def early_then_chatter(acts: dict[str, str]):
    """Each actor does its act at beat 1, then talks about the timeline until the scene runs out."""
    def answer(who, recorded):
        beat = beat_of(recorded)
        if beat <= 1 and who in acts:
            return turn(acts[who])
        return turn(CHATTER.format(to="Bob" if who == "alice" else "Alice", beat=beat))
    return answer


EARLY = [
    ("Bob apologises and Alice accepts", {"bob": '[TO: Alice, TONE: low] "I am sorry, Alice. It was my fault."',
                                          "alice": '[TO: Bob, TONE: soft] "I accept your apology."'}),
    ("Alice thanks Bob", {"alice": '[TO: Bob, TONE: warm] "Thank you for coming, Bob."'}),
    ("They agree on weekly check-ins", {"bob": '[TO: Alice] "I agree: weekly check-ins, every Monday."',
                                        "alice": '[TO: Bob] "Agreed. Weekly check-ins it is."'}),
]


@pytest.mark.parametrize("goal,acts", EARLY, ids=["apology", "thanks", "agreement"])
async def test_a_goal_met_early_in_a_long_scene_is_met_in_the_verdict(run_scene, loopback, goal, acts):
    """The verdict judges the whole scene, not its last lines: an act done at beat 1 of a scene that
    runs 40 beats (80 lines) still counts."""
    loopback.default = scripted(early_then_chatter(acts))
    scene = example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob", perspectives={},
                          events=[], goal=goal, cast=remote_cast(loopback, "alice", "bob"), judge={"name": "offline"},
                          wind_down="off", limits={"max_beats": 40})
    run = await run_scene(scene, isolation="a", coordinator="B")
    assert run.result.close_reason == "max_beats_exceeded"
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["goalAchieved"] is True, meta.get("goalReason")


async def test_an_llm_judge_is_shown_the_whole_scene_at_the_verdict(run_scene, loopback):
    """A judge that answers from what it is shown (as a real one does) finds an apology made at beat 1
    of a 40-beat scene."""
    acts = EARLY[0][1]
    actors = scripted(early_then_chatter(acts))

    def answer(recorded):
        body = json.dumps(recorded.body)
        if "the scene has ended" in body:
            seen = "I am sorry, Alice" in body and "I accept your apology" in body
            return Reply(text=json.dumps({"goal_achieved": seen, "reason": "Bob apologised" if seen else "no apology"}))
        if "coordinator of a scene" in body:
            return Reply(text='{"decision": "continue", "reason": "go on", "goal_met": false}')
        return actors(recorded)

    loopback.default = answer
    judge = {"name": "openai", "model": "gpt-4o-mini", "base_url": loopback.url("/v1"), "max_retries": 0}
    scene = example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob", perspectives={},
                          events=[], goal=EARLY[0][0], cast=remote_cast(loopback, "alice", "bob"), judge=judge,
                          wind_down="off", limits={"max_beats": 40})
    run = await run_scene(scene, isolation="b", coordinator="B")
    close = next(r for r in run.records() if r["type"] == "close")
    assert close["goal_achieved"] is True and close["goal_reason"] == "Bob apologised"


# -- an act done, an act only talked about or refused ------------------------------------------------------

DONE = [("apologise", "I am sorry, Alice."), ("apologise", "I apologise for the report."),
        ("accept", "I accept your apology."), ("accept", "All right, I forgive you."),
        ("agree", "I agree, weekly check-ins."), ("agree", "Agreed."), ("admit", "I admit it, I moved the money."),
        ("thank", "Thank you for coming."), ("promise", "I promise to call every week."),
        ("apologise", "I just want you to know I'm sorry."), ("apologise", "I hope you know I'm sorry."),
        ("apologise", "I want to apologise."), ("agree", "I agree, we should meet on Fridays.")]
NOT_DONE = [("accept", "I can't accept this."), ("accept", "I can’t accept that."), ("agree", "I don't agree."),
            ("apologise", "I won't apologise."), ("agree", "I didn't agree to that."), ("admit", "I wouldn't admit it."),
            ("thank", "Don't thank me."), ("agree", "We should agree on a schedule."),
            ("agree", "I hope we can agree on Fridays."), ("agree", "Maybe we could agree on Fridays."),
            ("apologise", "You should apologise."), ("apologise", "You have to apologise to her."),
            ("admit", "I want you to admit it."), ("apologise", "I refuse to apologise."),
            ("accept", "If you apologise, I'll accept it."), ("accept", "I'll accept it if you apologise."),
            ("agree", "We should really agree on Fridays."), ("accept", "I hope you can forgive me.")]


@pytest.mark.parametrize("act,line", DONE)
def test_a_line_that_does_the_act_does_it(act, line):
    assert does_act(line, act)


@pytest.mark.parametrize("act,line", NOT_DONE)
def test_a_line_that_refuses_or_only_talks_about_the_act_does_not_do_it(act, line):
    """`n't` is a negation, and an act asked of someone else, hoped for, proposed with should/could or made to
    wait on a condition is talked about, not done ("we should agree" is not agreeing)."""
    assert not does_act(line, act)


GOALS = [("Bob apologises and Alice accepts", {"Bob": "apologise", "Alice": "accept"}),
         ("Alice and Bob agree on weekly check-ins", {"Bob": "agree", "Alice": "agree"}),
         ("They agree on weekly check-ins", {"Bob": "agree", "Alice": "agree"}),
         ("Bob admits the missing money, and Alice thanks him", {"Bob": "admit", "Alice": "thank"})]


@pytest.mark.parametrize("goal,acts", GOALS, ids=["apology", "agreement", "they-agree", "admission"])
def test_a_goal_only_talked_about_or_refused_is_not_met(goal, acts):
    talked = {"apologise": "You should apologise for the weekly check-ins.", "accept": "I can't accept that.",
              "agree": "We should agree on weekly check-ins.", "admit": "I won't admit the missing money.",
              "thank": "I don't thank him."}
    done = {"apologise": "I am sorry.", "accept": "I accept your apology.", "agree": "I agree on weekly check-ins.",
            "admit": "I admit the missing money was me.", "thank": "Thank you, Bob."}
    cast = ("Alice", "Bob")
    assert assess(goal, [(who, talked[act]) for who, act in acts.items()], cast)[0] is False
    assert assess(goal, [(who, done[act]) for who, act in acts.items()], cast)[0] is True


async def test_a_scene_that_only_talks_about_its_goal_is_recorded_and_compared_as_not_met(run_scene, loopback,
                                                                                        tmp_path, capsys):
    """Hand-written scenes judged by the offline judge: one where Bob refuses and Alice only proposes,
    one where they do the acts; `metadata.json` and `compare` say which met the goal."""
    from promptdesk.core.cli.main import main

    talk = {"bob": '[TO: Alice, TONE: stiff] "I won\'t apologise for the report."',
            "alice": '[TO: Bob, TONE: cold] "You should apologise. Then we should agree on check-ins."'}
    done = {"bob": '[TO: Alice, TONE: low] "I am sorry, Alice. It was my fault. I agree to check-ins."',
            "alice": '[TO: Bob, TONE: soft] "I accept your apology. I agree: weekly check-ins."'}
    folders = []
    for lines in (talk, done):
        loopback.default = scripted(lambda who, r, lines=lines: turn(lines[who]))
        scene = example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob", perspectives={},
                              events=[], goal="Bob apologises, Alice accepts, and they agree on check-ins",
                              cast=remote_cast(loopback, "alice", "bob"), judge={"name": "offline"},
                              wind_down="off", limits={"max_beats": 6})
        run = await run_scene(scene, isolation="a", coordinator="B")
        folders.append(run.dir)
    verdicts = [json.loads((d / "metadata.json").read_text())["goalAchieved"] for d in folders]
    assert verdicts == [False, True], [json.loads((d / "metadata.json").read_text())["goalReason"] for d in folders]
    capsys.readouterr()
    assert main(["compare", *map(str, folders), "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["goal_achieved"] for r in runs] == [False, True]


# -- an act taken back --------------------------------------------------------------------------------------

RETRACTED = [("Bob apologises", "Bob", "I'm sorry, Alice.", "I take it back. I'm not sorry at all."),
             ("Alice accepts Bob's apology", "Alice", "I accept your apology.", "No. I don't accept it after all."),
             ("Bob admits the missing money", "Bob", "I admit it, I moved the missing money.", "I retract that."),
             ("Alice and Bob agree on Fridays", "Alice", "I agree, Fridays.", "Actually, I don't agree about Fridays.")]


@pytest.mark.parametrize("goal,who,did,undid", RETRACTED, ids=["apology", "acceptance", "admission", "agreement"])
def test_an_act_its_doer_takes_back_is_not_met_and_one_done_again_is(goal, who, did, undid):
    cast = ("Alice", "Bob")
    other = "Bob" if who == "Alice" else "Alice"
    both = [(other, "I agree, Fridays.")] if "agree" in goal else []
    assert assess(goal, [(who, did), *both], cast)[0] is True
    met, reason = assess(goal, [(who, did), *both, (other, "Good."), (who, undid)], cast)
    assert met is False and ("taken back" in reason or "agree" in goal), reason
    assert assess(goal, [(who, did), *both, (who, undid), (who, did)], cast)[0] is True


def test_a_never_clause_is_broken_by_an_act_taken_back():
    lines = [("Bob", "I admit the affair."), ("Bob", "I take it back.")]
    assert assess("Bob never admits the affair", lines, ("Alice", "Bob"))[0] is False


# -- a deed in short words only ---------------------------------------------------------------------------

SHORT = [("Harold asks how long he has", "Harold", "How long do I have, doctor?", "Nurse Joy",
          "How long has he got?"),
         ("Tom gets the job", "Tom", "So I got the job after all.", "Harold", "Tom got the job."),
         ("Pip sits", "Pip", "*sits by the fire* Fine.", "Tom", "*sits down*")]


@pytest.mark.parametrize("goal,who,done,other,others", SHORT, ids=["asks", "gets", "sits"])
def test_a_goal_in_short_words_is_not_met_at_once_nor_by_someone_else(goal, who, done, other, others):
    """A clause with no word of five letters was met before anyone spoke (a known leftover): its words of
    three letters or more are checked in the named person's own line (a deed of asking by a question)."""
    cast = ("Harold", "Nurse Joy", "Tom", "Pip")
    assert assess(goal, [(who, "Hello.")], cast)[0] is False
    assert assess(goal, [(who, "Hello."), (other, others)], cast)[0] is False
    said = done if not done.startswith("*") else "Fine. *sits by the fire*."
    assert assess(goal, [(who, "Hello."), (who, said)], cast)[0] is True


# -- a goal in another script ------------------------------------------------------------------------------

FOREIGN = [("山田花子が謝る", ("山田花子", "Alice")), ("Олег извиняется перед Алисой", ("Олег Петров", "Alice")),
           ("Ο Στέλιος ζητά συγγνώμη", ("Στέλιος", "Alice")), ("謝罪して和解する", ("Alice", "Bob")),
           ("ليلى تعتذر", ("ليلى", "Alice"))]


@pytest.mark.parametrize("goal,cast", FOREIGN, ids=["japanese", "russian", "greek", "no-name", "arabic"])
def test_a_goal_the_offline_judge_cannot_read_is_unknown_not_met_at_once(goal, cast):
    """The offline judge reads English: a goal in another script was `met` before anyone did anything
    (or `not met` whatever was said); its verdict is unknown (null), and a clause it can read still counts."""
    lines = [(cast[0], "Hello."), (cast[1], "Hello.")]
    met, reason = assess(goal, lines, cast)
    assert met is None and reason.startswith("unknown"), reason
    assert assess(f"{goal}; Alice accepts", lines, cast)[0] is False, "a readable clause not done is not met"


# -- role C: markers said by the wrong person ----------------------------------------------------------------

WRONG = [("Bob apologises and Alice accepts", ["sorry", "accept"]),
         ("Bob says sorry, then Alice forgives him", ["sorry", "forgive"]),
         ("Bob gives a sincere apology, and Alice accepts it", ["apolog", "accept"])]


@pytest.mark.parametrize("goal,markers", WRONG, ids=["apologises", "says-sorry", "sincere-apology"])
async def test_role_c_counts_a_marker_of_a_clauses_act_only_from_its_person(run_scene, loopback, goal, markers):
    """A marker that is a word of the act a clause names (`sorry` for `Bob apologises`) is that person's:
    Alice's "I'm sorry" and Bob's "I accept" do not meet `Bob apologises and Alice accepts`."""
    swapped = {"alice": f'[TO: Bob] "I\'m so sorry, Bob. My apologies. I {markers[1]} nothing."',
               "bob": f'[TO: Alice] "I {markers[1]} that. I {markers[1]} it all."'}
    loopback.default = scripted(lambda who, r: turn(swapped[who]))
    scene = example_scene("the-apology", characters=["alice", "bob"], initial_speaker="bob", perspectives={},
                          events=[], goal=goal, goal_markers=markers, cast=remote_cast(loopback, "alice", "bob"),
                          wind_down="off", limits={"max_beats": 4})
    run = await run_scene(scene, isolation="a", coordinator="C")
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["goalAchieved"] is False and "(by Bob)" in meta["goalReason"], meta["goalReason"]


@pytest.mark.parametrize("count", [10, 3_000, 40_000])
def test_the_verdicts_scene_is_whole_when_it_fits_and_keeps_both_ends_when_not(count):
    """A long scene is not sent whole to the close verdict (no judge's context holds 800 beats of a crowd):
    its first and last lines are, within the bound, with how many between were left out. Acts done early
    and acts taken back late both stay in view."""
    from promptdesk.core.engine.checks import VERDICT_CHARS, whole_scene

    lines = [f'Person {i % 7} [TO: Person {(i + 1) % 7}] "Line number {i} of a long scene, said plainly."'
             for i in range(count)]
    sent = whole_scene(lines)
    assert sum(len(line) + 1 for line in sent) <= VERDICT_CHARS + 200
    if sum(len(line) + 1 for line in lines) <= VERDICT_CHARS:
        assert sent == lines
        return
    note = next(i for i, line in enumerate(sent) if line.startswith("(... "))
    left = int(re.search(r"\(\.\.\. (\d+) lines", sent[note]).group(1))
    assert sent[:note] == lines[:note] and sent[note + 1:] == lines[len(lines) - (len(sent) - note - 1):]
    assert note + left + (len(sent) - note - 1) == len(lines) and note > 0 and len(sent) - note - 1 > note


TWO_ACTS = [
    ("Alice forgives Bob and thanks him", "Alice", {"accept": "I forgive you, Bob.", "thank": "Thank you for telling me."}),
    ("Bob admits the mistake and apologises to Alice", "Bob",
     {"admit": "I admit the mistake was mine.", "apologise": "I am truly sorry, Alice."}),
    ("Mara accepts the offer, and promises to pay by Friday", "Mara",
     {"accept": "I accept the offer.", "promise": "I promise I will pay by Friday."}),
    ("Tom apologises and then thanks Mara", "Tom", {"apologise": "I am sorry, Mara.", "thank": "Thank you, Mara."}),
]


@pytest.mark.parametrize("goal,who,acts", TWO_ACTS, ids=["forgive-thank", "admit-apologise", "accept-promise", "then"])
def test_each_act_a_goal_asks_of_one_person_is_asked_of_them(goal, who, acts):
    """Two acts joined by `and` under one subject are two clauses, both that person's: one act alone, or
    the second done by someone else, does not meet the goal; both by that person do."""
    cast = ("Alice", "Bob", "Mara", "Tom")
    other = next(name for name in cast if name != who)
    first, second = acts.values()
    assert assess(goal, [(who, first)], cast)[0] is False
    assert assess(goal, [(who, first), (other, second)], cast)[0] is False
    met, reason = assess(goal, [(who, first), (who, second)], cast)
    assert met is True and all(act in reason for act in acts)


@pytest.mark.parametrize("goal", ["Bob offers an explanation and apology", "Alice and Bob agree on a plan",
                                  "Bob refuses and leaves"])
def test_a_noun_or_a_plain_verb_after_and_is_no_second_act(goal):
    from promptdesk.core.protocol.goal_acts import read_goal
    assert len(read_goal(goal, ("Alice", "Bob"))) == 1


ASKING = [("Tom asks when the plumber arrives", "When does the plumber arrive?"),
          ("Tom asks about the repair", "What about the repair?"),
          ("Tom asks Anna whether the landlord called", "Anna, has the landlord called?")]


@pytest.mark.parametrize("goal,question", ASKING, ids=["when", "about", "whether"])
def test_a_deed_of_asking_with_long_words_is_done_by_a_question(goal, question):
    """A deed of asking is done by a question (the offline-improviser page): only a deed in short words was
    (`Harold asks how long he has`); one with a word of five letters was met by a statement alone, never by
    the question it asks for. Someone else's question, or one about another thing, still is no deed."""
    cast = ("Anna Marsh", "Tom Hale")
    assert assess(goal, [("Tom Hale", question)], cast)[0] is True
    assert assess(goal, [("Anna Marsh", question), ("Tom Hale", "Hello?")], cast)[0] is False


def test_they_agree_is_not_met_by_the_first_speaker_alone_before_anyone_else_spoke():
    """A clause naming *they* needs the act from two of the cast: the judge counted "two" among those who had
    spoken, so at beat 0, with only Ann's "I agree" said, `They agree on the Friday rota` was met and the scene
    was sent winding down."""
    cast = ("Ann Lee", "Bob Stone", "Cara Diaz")
    first = [("Ann Lee", "I agree, the Friday rota.")]
    assert assess("They agree on the Friday rota", first, cast)[0] is False
    assert assess("They agree on the Friday rota", [*first, ("Bob Stone", "Agreed: the Friday rota.")], cast)[0] is True


@pytest.mark.parametrize("said", ["Sorry for all of it.", "Sorry about the van, Alice.", "Sorry that I lied to you."])
def test_a_sentence_opening_on_sorry_for_something_is_an_apology(said):
    """`Sorry for all of it.` said by Bob never met `Bob apologises` (only `I'm sorry`, `so sorry` or a bare
    `Sorry.` did), though `sorry` is the act's marker word; `Sorry, I have to cut in` stays an interjection."""
    cast = ("Alice", "Bob")
    assert assess("Bob apologises", [("Bob", said)], cast)[0] is True
    assert assess("Bob apologises", [("Bob", "Sorry, I have to cut in.")], cast)[0] is False
    assert assess("Bob apologises", [("Bob", "Sorry for what?")], cast)[0] is False


THANKS = [("Dame Judi thanks Dr Haddad", "Dame Judi Price", ("Dame Judi Price", "Dr Amal Haddad", "Sir Robert Hale"),
           ["Thank you, Dr Haddad.", "Thank you, Amal.", "Thank you."], ["Thank you, Sir Robert.", "Thanks, Robert, truly."]),
          ("Alice thanks Bob", "Alice", ("Alice", "Bob", "Charlie"),
           ["Thank you, Bob.", "Thanks for the coffee."], ["Thanks, Charlie.", "Thank you so much, Charlie!"])]


@pytest.mark.parametrize("goal,who,cast,to_them,to_another", THANKS, ids=["titled", "plain"])
def test_thanks_the_goal_names_for_someone_are_not_met_by_thanking_another(goal, who, cast, to_them, to_another):
    """A thanks said to the person the goal names, or to no one by name, may be theirs; one that names
    another member of the cast and not them is said to someone else."""
    for line in to_them:
        assert assess(goal, [(who, line)], cast)[0] is True, line
    for line in to_another:
        assert assess(goal, [(who, line)], cast)[0] is False, line
