"""Issue 10 §1-§3: role C errs toward continuing, the goal verdict is apart from the close reason,
and the soft cap fires with the defaults, to one actor, with spec 000's words."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from promptdesk.core.engine.briefing import JOURNAL_PROMPT, SOFT_CAP_NUDGE
from promptdesk.core.protocol.judging import NO_GOAL
from promptdesk.core.engine.coordinator import SceneView, closes_naturally, marker_verdict
from promptdesk.core.record.events import SpeakEvent
from helpers import example_scene
from loopback import loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

CORPUS = Path(__file__).parent / "data" / "close_corpus.txt"
OPENER = "Thank you both for coming in. Let us start with the numbers."


def corpus() -> list[tuple[bool, SpeakEvent]]:
    """(must close, speech) for every line of the corpus."""
    rows = []
    for line in CORPUS.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, words, *gesture = line.split("|")
        direction = gesture[0] if gesture else None
        raw = " ".join(p for p in (f"*{direction}*" if direction else "", f'"{words}"' if words else "") if p)
        action = "speak" if words else "react"
        rows.append((kind == "close", SpeakEvent(t=0, **{"from": "bob"}, text=words, nonverbal=direction,
                                                  action=action, raw=raw)))
    return rows


def test_the_close_rules_never_close_on_the_must_not_half_of_the_corpus():
    rows = corpus()
    must, must_not = [s for c, s in rows if c], [s for c, s in rows if not c]
    assert len(rows) >= 60 and abs(len(must) - len(must_not)) <= 2
    true_pos = sum(closes_naturally(s) for s in must)
    false_pos = [s.text or s.nonverbal for s in must_not if closes_naturally(s)]
    precision = true_pos / (true_pos + len(false_pos)) if true_pos + len(false_pos) else 1.0
    recall = true_pos / len(must)
    print(f"close rules on {len(rows)} lines: precision {precision:.2f}, recall {recall:.2f}")
    assert not false_pos, f"false closes: {false_pos}"
    assert recall >= 0.9


def test_the_quoted_false_closes_of_the_issue_continue():
    for words, gesture in ((OPENER, None), ("My father never said goodbye.", None),
                           ("", "leaves the report on the table"), ("", "rain leaves streaks")):
        assert not closes_naturally(SpeakEvent(t=0, **{"from": "bob"}, text=words, nonverbal=gesture,
                                               raw=f"*{gesture}*" if gesture else words,
                                               action="react" if gesture else "speak"))


def _answers(closer_beat: int):
    """Alice opens with thanks-for-coming; Bob says goodbye at beat 1 (too early) and again later."""
    def answer(who, recorded):
        beat = json.dumps(recorded.body["messages"][-1])
        if who == "alice" and "BEAT 0" in beat:
            return turn(f'[TONE: brisk] "{OPENER}"')
        if who == "bob" and ("BEAT 1 " in beat or f"BEAT {closer_beat} " in beat):
            return turn('[TO: Alice, TONE: tired] "I should head out."')
        return turn('[TONE: calm] "Go on, I am listening."')
    return answer


async def test_no_natural_close_at_beat_0_nor_before_everyone_has_spoken_twice(run_scene, loopback):
    loopback.default = scripted(_answers(closer_beat=4))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 10})
    run = await run_scene(scene, isolation="a", coordinator="C")
    close = next(r for r in run.records() if r["type"] == "close")
    assert (close["reason"], close["beat"]) == ("natural", 4)
    assert "natural close not taken at beat 1" in (run.dir / "debug.log").read_text()


async def test_role_c_goal_verdict_comes_from_goal_markers_only(run_scene, loopback):
    def answer(who, recorded):
        if who == "bob" and "BEAT 3 " in json.dumps(recorded.body["messages"][-1]):
            return turn('[TO: Alice, TONE: sincere] "I apologise. I should head out."')
        return turn('[TONE: calm] "Go on, I am listening."')

    loopback.default = scripted(answer)
    cast = remote_cast(loopback, "alice", "bob", "charlie")
    met = await run_scene(example_scene("the-apology", cast=cast, goal_markers=["apolog", "listening"]),
                          isolation="b", coordinator="C")
    meta = json.loads((met.dir / "metadata.json").read_text())
    assert (meta["reason"], meta["goalAchieved"], meta["success"]) == ("natural", True, True)
    assert "[SCENE END - Goal: Achieved" in (met.dir / "transcript.txt").read_text()


async def test_close_words_alone_leave_the_goal_unknown_or_unmet(run_scene, loopback, tmp_path):
    loopback.default = scripted(_answers(closer_beat=4))
    cast = remote_cast(loopback, "alice", "bob", "charlie")
    unmet = await run_scene(example_scene("the-apology", cast=cast, goal_markers=["apolog"]),
                            isolation="b", coordinator="C")
    meta = json.loads((unmet.dir / "metadata.json").read_text())
    assert (meta["reason"], meta["goalAchieved"]) == ("natural", False)
    assert "apolog" in meta["goalReason"]
    close = next(r for r in unmet.records() if r["type"] == "close")
    assert close["goal_achieved"] is False and "apolog" in close["goal_reason"]


def test_marker_verdict_is_unknown_without_markers():
    view = SceneView(beat=5, max_beats=10, goal="Bob apologises", speeches=["Goodbye.", "Thank you both."])
    assert marker_verdict(view).achieved is None
    view.goal_markers = ["apolog"]
    assert marker_verdict(view).achieved is False
    view.speeches.append("I apologise, truly.")
    assert marker_verdict(view).achieved is True


def test_a_goal_marker_said_by_the_wrong_person_does_not_count():
    """`Bob apologises, Alice accepts`: Alice's apology is not Bob's, and Bob accepting is not Alice."""
    view = SceneView(beat=5, max_beats=10, goal="Bob apologises, Alice accepts", goal_markers=["apolog", "accept"],
                     speeches=["I apologise for shouting.", "I accept that."], speakers=["Alice", "Bob"])
    verdict = marker_verdict(view)
    assert verdict.achieved is False and "Bob" in verdict.reason and "Alice" in verdict.reason
    view.speeches, view.speakers = [*view.speeches, "I apologise.", "I accept it."], [*view.speakers, "Bob", "Alice"]
    assert marker_verdict(view).achieved is True
    unnamed = SceneView(beat=5, max_beats=10, goal="Everyone agrees on a date", goal_markers=["agree"],
                        speeches=["We agree."], speakers=["Bob"])
    assert marker_verdict(unnamed).achieved is True, "a goal naming no one counts anyone's marker"


@pytest.mark.parametrize(("words", "gesture", "closes"), [
    ("Well, Łukasz, goodbye.", None, True), ("Anyway, Émile, I'd better go.", None, True),
    ("", "Ólafur stands and leaves the room", True), ("Łukasz, don't say goodbye yet.", None, False),
    ("", "Ólafur leaves the report on the table", False)])
def test_a_name_beyond_ascii_before_a_farewell_or_an_exit_reads_as_an_english_name_does(words, gesture, closes):
    speech = SpeakEvent(t=0, **{"from": "bob"}, text=words, nonverbal=gesture, action="speak" if words else "react",
                        raw=words or f"*{gesture}*")
    assert closes_naturally(speech) is closes


CASTS = [
    # (goal, cast, who says the marker, counts?)
    ("Ann proposes a petition.", ["Ann", "Ann Lee"], "Ann Lee", False),
    ("Ann proposes a petition.", ["Ann", "Ann Lee"], "Ann", True),
    ("Ann Lee proposes a petition.", ["Ann", "Ann Lee", "Ann Park"], "Ann Park", False),
    ("Ann Lee proposes a petition.", ["Ann", "Ann Lee", "Ann Park"], "Ann Lee", True),
    ("Ann proposes a petition.", ["Ann Lee", "Grace"], "Ann Lee", True),  # her first name, hers alone
    ("Anna proposes a petition.", ["Ann", "Anna"], "Ann", False),
    ("山田花子 proposes a petition.", ["Ann", "山田花子"], "Ann", False),
    ("山田花子 proposes a petition.", ["Ann", "山田花子"], "山田花子", True),
    ("ليلى proposes a petition.", ["Ann", "ليلى"], "Ann", False),
    ("Dr. Chen proposes a petition.", ["Ann", "Dr. Chen"], "Dr. Chen", True),
    ("Dr. Chen proposes a petition.", ["Ann", "Dr. Chen"], "Ann", False),
    ("Zoë proposes a petition.", ["Zoe", "Zoë"], "Zoe", False),
]


@pytest.mark.parametrize(("goal", "cast", "speaker", "counts"), CASTS)
def test_a_goal_marker_counts_only_from_the_cast_member_the_goal_names(goal, cast, speaker, counts):
    """The goal's name is read against the cast: a shared first name, a name that is a prefix of
    another, a name in another script or with a title's full stop names that member and no other."""
    view = SceneView(beat=5, max_beats=10, goal=goal, goal_markers=["petition"], speeches=["I propose a petition."],
                     speakers=[speaker], cast=cast)
    assert marker_verdict(view).achieved is counts, marker_verdict(view).reason


async def test_a_stopped_scene_is_not_a_success(run_scene):
    def stop_at_beat_two(session):
        session.subscribe(lambda e: session.stop() if e.type == "beat" and e.beat == 2 else None)

    run = await run_scene(example_scene("the-apology"), isolation="a", coordinator="C", before_run=stop_at_beat_two)
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert (meta["reason"], meta["success"], meta["goalAchieved"]) == ("stop", False, None)
    close = next(r for r in run.records() if r["type"] == "close")
    assert "goal_achieved" in close and close["goal_achieved"] is None


async def test_the_soft_cap_fires_with_the_defaults_to_one_actor_with_the_specs_words(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn('[TONE: calm] "Go on, I am listening."'))
    scene = example_scene("the-apology", characters=["alice", "bob"], turns="sequential", perspectives={},
                          limits={}, cast=remote_cast(loopback, "alice", "bob"))
    scene = scene.model_copy(update={"limits": type(scene.limits)()})
    run = await run_scene(scene, isolation="a", coordinator="C")
    assert run.result.close_reason == "soft-cap"
    nudges = [r for r in run.records() if r["type"] == "note" and r.get("reason") == "soft-cap"]
    assert len(nudges) == 1 and nudges[0]["text"] == (
        "You sense the natural end of this conversation approaching. "
        "Bring it to a close in your own way over the next 2\u20133 turns.")
    nudged = nudges[0]["target"]
    received = {p["to"] for p in run.prompts() if SOFT_CAP_NUDGE in json.dumps(p["request"], ensure_ascii=False)}
    assert received == {nudged}


def test_the_journal_prompt_asks_for_200_to_500_words_with_an_en_dash():
    assert "(200\u2013500 words)" in JOURNAL_PROMPT


async def test_a_scene_with_no_goal_has_no_goal_verdict_under_any_coordinator(run_scene):
    """Without a `goal:` there is nothing to have achieved: every role records null (unknown), never
    a verdict on the scene's prompt taken for a goal."""
    for role in "ABC":
        run = await run_scene(example_scene("the-apology", goal="", limits={"max_beats": 6}), isolation="a",
                              coordinator=role)
        meta = json.loads((run.dir / "metadata.json").read_text())
        assert meta["goalAchieved"] is None, (role, meta["goalReason"])
        judged = [p["request"]["system"] for p in run.prompts() if p["to"] == "judge"]
        assert bool(judged) == (role != "C") and all(NO_GOAL in system for system in judged), role


async def test_a_scene_stopped_before_its_first_beat_played_no_beat(run_scene):
    """A stop (Ctrl-C, SIGTERM) that comes while the cast is being briefed closes the run before beat 0 began:
    `metadata.json`, `metrics` and the batch summary say 0 beats (they said 1)."""
    from promptdesk.core.experiments.metrics import run_metrics

    run = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C", before_run=lambda s: s.stop())
    assert not any(r["type"] in ("beat", "call") for r in run.records())
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert (meta["reason"], meta["totalBeats"]) == ("stop", 0)
    assert run_metrics(run.events()).beats == 0
    assert run.session.format.played(run.session, run.result) == 0


@pytest.mark.parametrize("line", ["*[stands and puts on her coat]* Thank you both, this was generous.",
                                  '[TO: Bob, TONE: warm] *waves* "Goodbye, Bob."'])
async def test_spec_000s_own_close_in_its_own_form_closes_the_scene(run_scene, loopback, line):
    """Spec 000's natural close, in its speech form (no bracket header, the stage direction inline):
    "*[stands and puts on her coat]* Thank you both, this was generous." stands up, puts on a coat and
    thanks both: the scene closes on it. The direction before the thanks hid it, and "stands and puts
    on her coat" was not read as an exit. So does a farewell after a gesture outside the header
    (`[TO: Bob, TONE: warm] *waves* "Goodbye, Bob."`), whose quoted words are the line itself: they were
    read as a quotation inside the line, and the scene played on."""
    def answer(who, recorded):
        if who == "alice" and "BEAT 3 " in json.dumps(recorded.body["messages"][-1]):
            return turn(line)
        return turn('[TONE: calm] "Go on, I am listening."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 10})
    run = await run_scene(scene, isolation="b", coordinator="C")
    close = next(r for r in run.records() if r["type"] == "close")
    assert (close["reason"], close["beat"]) == ("natural", 3)


async def test_goal_markers_without_a_goal_give_no_verdict_under_role_c(run_scene, loopback):
    """A scene with `goal_markers` but no `goal:` has no goal to have achieved: role C records null
    ("the scene has no goal"), as roles A and B do; it judged the markers (False here) as if there were one."""
    loopback.default = scripted(lambda who, r: turn('[TONE: calm] "Go on, I am listening."'))
    scene = example_scene("the-apology", goal="", goal_markers=["apolog"],
                          cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 4})
    run = await run_scene(scene, isolation="b", coordinator="C")
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert (meta["goalAchieved"], meta["goalReason"]) == (None, "unknown: the scene has no goal")
    assert "- Goal: Unknown" in (run.dir / "transcript.md").read_text()


async def test_a_first_name_in_to_addresses_the_cast_member_who_alone_has_it(run_scene, loopback):
    """`TO: Maria` in a cast of Maria Stern and Sam Reed is Maria Stern, as sequential turns read it:
    recorded and routed under her name, and counted in the metrics' who-addressed-whom (it was recorded
    as "Maria", addressed to no one, and counted as spoken to everyone)."""
    from promptdesk.core.experiments.metrics import run_metrics

    def answer(who, recorded):
        if "You are Sam Reed." in json.dumps(recorded.body, ensure_ascii=False):
            return turn('[TO: Maria, TONE: warm] "The stairs are steep, Maria."')
        return turn('[TO: sam, TONE: dry] "They keep me young."')

    loopback.default = scripted(answer)
    scene = example_scene("morning-kitchen", cast=remote_cast(loopback, "maria-stern", "sam-reed"),
                          limits={"max_beats": 4})
    run = await run_scene(scene, isolation="b", coordinator="C")
    speeches = [r for r in run.records() if r["type"] == "speak"]
    assert {(r["from"], r["target"]) for r in speeches} == {("sam-reed", "Maria Stern"), ("maria-stern", "Sam Reed")}
    assert 'Sam Reed [TO: Maria Stern, TONE: warm] "The stairs are steep, Maria."' in (run.dir / "transcript.txt").read_text()
    addressed = run_metrics(run.events()).addressed
    assert addressed["sam-reed"] == {"maria-stern": 2} and addressed["maria-stern"] == {"sam-reed": 2}


@pytest.mark.parametrize(("goal", "markers", "cast", "said"), [
    ("田中太郎が謝罪し、李明が許す", ["謝罪", "許す"], ["田中太郎", "李明"], ["謝罪します。", "許すよ。"]),
    ("田中太郎道歉。李明原谅他。", ["道歉", "原谅"], ["田中太郎", "李明"], ["我向你道歉。", "我原谅你。"]),
    ("田中太郎道歉，李明原谅他", ["道歉", "原谅"], ["田中太郎", "李明"], ["我向你道歉。", "我原谅你。"]),
    ("राम माफ़ी माँगता है। सीता माफ़ करती है।", ["माफ़ी", "करती"], ["राम", "सीता"], ["मुझे माफ़ी चाहिए।", "मैं माफ़ करती हूँ।"]),
    ("ليلى تعتذر، وسام يسامح", ["تعتذر", "يسامح"], ["ليلى", "وسام"], ["أنا تعتذر", "أنا يسامح"]),
], ids=["japanese", "chinese-stop", "chinese-comma", "hindi", "arabic"])
def test_a_goal_in_another_script_is_cut_at_its_own_punctuation(goal, markers, cast, said):
    """A goal of two clauses joined by its script's own comma or stop (`、`, `，`, `。`, `।`, `،`) names a person
    for each: the second clause's marker counts from its person, not from the first clause's."""
    view = SceneView(beat=5, max_beats=10, goal=goal, goal_markers=markers, speeches=said, speakers=cast, cast=cast)
    assert marker_verdict(view).achieved is True, marker_verdict(view).reason
    swapped = SceneView(beat=5, max_beats=10, goal=goal, goal_markers=markers, speeches=said, speakers=cast[::-1],
                        cast=cast)
    assert marker_verdict(swapped).achieved is False, "each marker said by the other person"


@pytest.mark.parametrize(("words", "closes"), [
    ("さようなら。", True), ("李明、再见！", True), ("谢谢你们。再见。", True), ("До свидания, Ольга.", True),
    ("Пока!", True), ("مع السلامة", True), ("안녕히 계세요.", True), ("अलविदा।", True), ("להתראות!", True),
    ("Au revoir.", True), ("Bis morgen!", True), ("じゃあ、また明日。", True),
    ("再见？", False),                          # asked
    ("我不想说再见。", False),                   # "I don't want to say goodbye"
    ("さようならとは言わない。", False),          # "I won't say goodbye"
    ("再见。不过，还有一件事。", False),           # business after it
    ("Пока ты здесь, давай поговорим.", False),  # "while you are here": a word that is a farewell only alone
    ("她说了再见", False),                        # reported
    ("مع السلامة؟", False),
    ("مع السلامة يا ليلى.", True),               # an Arabic address by its vocative, with no comma
    ("مع السلامة يا ليلى؟", False),
], ids=lambda value: value if isinstance(value, str) else None)
def test_role_c_reads_a_farewell_in_other_languages_only_as_a_whole_sentence(words, closes):
    """Role C closes a scene played in Japanese, Chinese, Russian, Arabic, Korean, Hindi or Hebrew when its
    actors take leave, as it does in English; a farewell word inside a sentence, asked, negated or
    followed by more business is not the act."""
    speech = SpeakEvent(t=0, **{"from": "bob"}, text=words, action="speak", raw=f'"{words}"')
    assert closes_naturally(speech) is closes


@pytest.mark.parametrize(("goal", "cast", "speaker", "said"), [
    (unicodedata.normalize("NFC", "José apologises"), [unicodedata.normalize("NFD", "José"), "Ann"],
     unicodedata.normalize("NFD", "José"), "I apologise."),                         # the cast's name decomposed
    (unicodedata.normalize("NFD", "José apologises"), [unicodedata.normalize("NFC", "José"), "Ann"],
     unicodedata.normalize("NFC", "José"), "I apologise."),                         # the goal's
    ("Ken apologises", ["Ｋｅｎ", "Ann"], "Ｋｅｎ", "I apologise."),                  # full-width letters
    ("Ken apologises", ["Ken", "Ann"], "Ken", "Ｉ ａｐｏｌｏｇｉｓｅ."),              # a full-width marker said
], ids=["nfd-cast", "nfd-goal", "fullwidth-name", "fullwidth-speech"])
def test_a_goal_marker_counts_whatever_unicode_form_the_name_or_line_takes(goal, cast, speaker, said):
    view = SceneView(beat=5, max_beats=10, goal=goal, goal_markers=["apolog"], speeches=[said], speakers=[speaker],
                     cast=cast)
    assert marker_verdict(view).achieved is True, marker_verdict(view).reason
    other = SceneView(beat=5, max_beats=10, goal=goal, goal_markers=["apolog"], speeches=[said], speakers=["Ann"],
                      cast=cast)
    assert marker_verdict(other).achieved is False, "said by someone else"
