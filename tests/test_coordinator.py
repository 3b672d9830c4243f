"""The coordinator decides and never speaks: close words, roles A and B, fallbacks, limits."""

from __future__ import annotations

import asyncio
import json

import pytest

from promptdesk.core.engine.coordinator import Decision, JudgeCoordinator, RuleCoordinator, SceneView, closes_naturally
from promptdesk.core.record.events import SpeakEvent
from helpers import example_scene


def speech(text: str = "", nonverbal: str | None = None, action: str = "speak", raw: str | None = None) -> SpeakEvent:
    return SpeakEvent(t=0, **{"from": "alice"}, text=text, nonverbal=nonverbal, action=action, raw=raw or text)


@pytest.mark.parametrize("text", ["Thank you both, this was generous.", "I'll let you go.", "I should head out.",
                                  "Safe travels!", "I should let you get on with your day."])
def test_close_words_close_the_scene(text):
    assert closes_naturally(speech(text))


@pytest.mark.parametrize("nonverbal", ["picks up her coat and leaves", "walks out", "stands to leave"])
def test_exit_actions_close_the_scene(nonverbal):
    assert closes_naturally(speech("", nonverbal=nonverbal, action="react"))


@pytest.mark.parametrize("text", ["Thank you.", "Let me go over the numbers.", "I should head back to the plan.",
                                  "We'll leave it there for the data?", "Don't thank me yet."])
def test_close_words_are_conservative(text):
    assert not closes_naturally(speech(text))


async def test_role_c_closes_on_close_words_and_otherwise_continues():
    rules = RuleCoordinator()
    view = SceneView(beat=3, max_beats=50, goal="", new_speech=[speech("I should head out.")])
    assert (await rules.decide(view)).reason == "natural"
    view.new_speech = [speech("Tell me what happened.")]
    assert (await rules.decide(view)).decision == "continue"


async def test_a_malformed_judge_decision_falls_back_to_role_c_and_is_logged():
    judge = JudgeCoordinator("B", goal="agree")
    warnings: list[str] = []

    async def ask(request):
        return "I think the scene should go on, maybe."

    view = SceneView(beat=2, max_beats=50, goal="agree", new_speech=[speech("Thank you both.")])
    decision = await judge.decide(view, ask, warnings.append)
    assert decision.decision == "close" and decision.reason == "natural"
    assert warnings and "role C" in warnings[0]


def test_a_judge_decision_must_be_one_of_the_four():
    with pytest.raises(ValueError):
        JudgeCoordinator.parse('{"decision": "speak", "text": "Hello everyone"}')
    assert JudgeCoordinator.parse('ok {"decision": "close", "reason": "natural"}') == \
        Decision(decision="close", reason="natural")


async def test_role_b_judge_sees_only_its_prompt_and_the_speech(run_scene):
    scene = example_scene("the-apology", limits={"max_beats": 6})
    run = await run_scene(scene, isolation="b", coordinator="B")
    judged = [p for p in run.prompts() if p["to"] == "judge"]
    assert judged and all(p["purpose"] == "judge" for p in judged)
    for body in (json.dumps(p["request"]) for p in judged):
        assert "Isolation:" not in body and scene.coordinator_notes[:30] not in body
    assert "SPEECH SO FAR" in json.dumps(judged[0]["request"])
    assert "Was the goal met?" in json.dumps(judged[-1]["request"]), "the verdict is asked at close"
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert isinstance(meta["goalAchieved"], bool)
    assert all(name in meta["goalReason"] for name in ("Bob", "Alice")), "the reason says who was to do what"
    assert (run.dir / "notes.md").read_text().splitlines()[1].startswith("Coordinator role: B — ")


async def test_role_a_judge_also_sees_notes_and_the_directors_notes(run_scene):
    def note(session):
        session.subscribe(lambda e: session.add_note("Keep it civil") if e.type == "beat" and e.beat == 1 else None)

    scene = example_scene("the-apology", limits={"max_beats": 5})
    run = await run_scene(scene, isolation="a", coordinator="A", before_run=note)
    last = json.dumps([p for p in run.prompts() if p["to"] == "judge"][-1]["request"], ensure_ascii=False)
    assert "Isolation:" in last and "Keep it civil" in last
    assert scene.coordinator_notes.strip()[:30] in last


async def test_the_judge_never_writes_dialogue(run_scene):
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 8}), isolation="b", coordinator="B")
    speakers = {r["from"] for r in run.records() if r["type"] in ("speak", "think")}
    assert speakers <= {"alice", "bob", "charlie"}


async def test_the_hard_cap_closes_the_scene(run_scene):
    scene = example_scene("the-apology", limits={"soft_cap_per_character": 2, "hard_cap_per_character": 2,
                                                   "max_beats": 40})
    run = await run_scene(scene, isolation="b", coordinator="C", seed=4)
    assert run.result.close_reason == "hard-cap"
    counts: dict[str, int] = {}
    for r in run.records():
        if r["type"] == "speak" and r["action"] != "silent":
            counts[r["from"]] = counts.get(r["from"], 0) + 1
    assert max(counts.values()) == 2


async def test_the_soft_cap_nudges_once_with_timing_only(run_scene):
    scene = example_scene("the-apology", limits={"soft_cap_per_character": 2, "hard_cap_per_character": 30,
                                                   "max_beats": 40})
    run = await run_scene(scene, isolation="b", coordinator="C", seed=4)
    nudges = [r for r in run.records() if r["type"] == "note" and r.get("reason") == "soft-cap"]
    assert nudges
    assert len({n["target"] for n in nudges}) == len(nudges), "an actor was nudged twice"
    first = nudges[0]
    nudged = [p for p in run.prompts() if p["to"] == first["target"] and p["purpose"] == "turn"
              and p["beat"] > first["beat"]]
    assert "You sense the natural end" in nudged[0]["request"]["messages"][-1]["content"]


def test_the_record_tally_reads_each_event_once_and_matches_a_full_reading():
    """The checks' view of the whole record (speeches for goal markers, the judge's suggestions) is
    kept as the record grows: an update reads only what was added, and gives what reading every
    event would."""
    from promptdesk.core.engine.record_tally import RecordTally
    from promptdesk.core.record.events import GenericEvent, SpeakEvent

    class Record(list):
        read_from: list[int] = []

        def __getitem__(self, key):
            if isinstance(key, slice):
                self.read_from.append(key.start or 0)
            return super().__getitem__(key)

    def speak(n: int, who: str, action: str = "speak") -> SpeakEvent:
        return SpeakEvent(t=n, **{"from": who}, text=f"line {n}", action=action, beat=n)

    def suggest(n: int, text: str, withheld: str | None = None) -> GenericEvent:
        extra = {"decision": "suggest_event", **({"withheld": withheld} if withheld else {})}
        return GenericEvent(t=n, **{"from": "coordinator"}, type="decision", text=text, beat=n, **extra)

    cast = {"alice": "Alice", "bob": "Bob"}
    events = Record([speak(1, "alice"), speak(2, "bob", "silent"), suggest(2, "A storm"), suggest(3, "Secret", "private")])
    tally = RecordTally().update(events, cast)
    events += [speak(4, "bob"), suggest(4, "A storm"), suggest(5, "The lights go out")]
    tally.update(events, cast)
    assert Record.read_from == [0, 4]
    assert (tally.words, tally.speakers) == (["line 1", "line 4"], ["Alice", "Bob"])
    assert tally.suggested == ["A storm", "The lights go out"]
    replaced = [speak(7, "alice")]
    assert tally.update(replaced, cast).words == ["line 7"] and tally.suggested == []


async def test_a_parallel_beat_reads_its_record_into_the_tally_while_it_plays(run_scene):
    """The checks' tally is brought up to date as a parallel beat's speeches are routed, so that the
    check after the beat's last turn has almost nothing left to read (at fifty actors a beat records
    thousands of events, a millisecond and more to read all at once between two beats)."""
    behind: list[int] = []

    def watch(session) -> None:
        def on_event(event) -> None:
            if event.type == "beat_end":  # said once every turn of the beat is routed, before the check
                behind.append(len(session.recorder.events) - 1 - session.tally.read)
        session.subscribe(on_event)

    run = await run_scene(example_scene("the-apology", limits={"max_beats": 5}), isolation="b", coordinator="C",
                          before_run=watch)
    assert run.result.beats >= 4 and len(behind) >= 4
    assert behind == [0] * len(behind), behind


def test_role_c_names_who_took_leave_by_their_name_not_their_slug(tmp_path):
    from promptdesk.core.casting.build import RunOptions, build_session
    from promptdesk.core.engine.checks import scene_view
    from helpers import CHARACTERS, make_scene

    session = build_session(make_scene(characters=["maria-stern", "sam-reed"]),
                            RunOptions(isolation="a", coordinator="C", runs_root=tmp_path,
                                       characters_dirs=[CHARACTERS], cwd=tmp_path))
    leaving = SpeakEvent(t=0, **{"from": "maria-stern"}, text="I should head out.", action="speak", raw="")
    decision = asyncio.run(RuleCoordinator().decide(scene_view(session, [leaving])))
    assert decision.reason == "natural" and decision.text == "Maria Stern took leave"


def test_a_judge_answer_giving_a_key_twice_is_not_one_decision():
    """JSON keeps the last copy of a key silently: `"decision": "continue"` then `"decision": "close"` closed
    the scene. Which the judge meant cannot be told: the answer is unusable (role C's rules decide that beat)."""
    with pytest.raises(ValueError, match="'decision' is given twice"):
        JudgeCoordinator.parse('{"decision": "continue", "reason": "x", "decision": "close"}')
    assert JudgeCoordinator.parse('{"decision": "close", "reason": "natural"}').decision == "close"


def test_a_judge_answer_s_fault_is_said_by_field_without_pydantic_s_echo_and_link():
    """The fallback line on the stage names what was wrong with the judge's answer in one line: an
    unknown decision, a missing verdict field; never the answer echoed back and pydantic's web link."""
    from promptdesk.core.engine.coordinator import JudgeCoordinator

    with pytest.raises(ValueError) as caught:
        JudgeCoordinator.parse('{"decision": "dance", "reason": "x"}')
    said = str(caught.value)
    assert said.startswith("invalid judge decision: decision: Input should be 'continue'")
    assert "errors.pydantic.dev" not in said and "input_value" not in said
