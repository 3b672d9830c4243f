"""The offline improviser, through `OfflineProvider.complete` with real, briefing-shaped requests.

It is the model most runs and tests use, so these tests hold it to the protocol: deterministic per
seed, well-formed turns using every Appendix B form, silences only when allowed, reactions to
world events, a natural close, journals, judge decisions, streaming and latency on a given clock.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import promptdesk.core.formats.registry  # noqa: F401 - registering the formats teaches the improviser their parts
from promptdesk.core.engine.briefing import BEGIN_NOTE, JOURNAL_PROMPT, SOFT_CAP_NUDGE, STALL_NOTE, beat_update, build_briefing, note_line
from promptdesk.core.characters.loading import Character
from promptdesk.core.protocol.leave_taking import takes_leave
from promptdesk.core.errors import ProviderError
from promptdesk.core.improv import DISCLAIMER
from promptdesk.core.protocol.reply import CORRECTION_PROMPT, parse_turn
from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.improv.provider import OfflineProvider
from promptdesk.core.casting.scene_file import Scene

ALICE = """# Alice - Senior Project Manager

## Personality
- Direct communicator, sometimes too blunt
- Passionate about quality and meeting commitments

## Communication Style
- Raises voice when frustrated
- Maintains eye contact to assert authority
- Prone to interrupting when passionate about topic

## Behavioral Traits
- When angry: Speaks faster, uses clipped sentences
- Default state: Professional but warm
"""
BOB = "# Bob - Developer\n\n## Personality\n- Nervous and defensive under pressure\n- Rubs the back of his neck\n"
CHARLIE = "# Charlie - Team Lead\n\n## Personality\n- Quiet, reserved and observant\n- Listens more than he speaks\n"
PROFILES = {"alice": ("Alice", ALICE), "bob": ("Bob", BOB), "charlie": ("Charlie", CHARLIE)}
SCENE = Scene(name="the-apology", title="The Apology", setting="Office conference room, afternoon",
              prompt="Bob missed an important project deadline, causing the team to lose a client.",
              goal="Bob apologises sincerely, Alice accepts, they agree on next steps",
              characters=["alice", "bob", "charlie"],
              perspectives={"alice": "You are under pressure from your own boss about the Henderson loss."})


class FakeClock:
    """Records every sleep; never waits."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def now(self) -> float:
        return sum(self.sleeps)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def briefing(slug: str, cast: tuple[str, ...] = ("alice", "bob", "charlie"), scene: Scene = SCENE) -> str:
    name, profile = PROFILES[slug]
    character = Character(slug=slug, name=name, description="", profile=profile, journal="",
                          profile_path=Path(f"{slug}.md"), journal_path=Path(f"{slug}.journal.md"))
    return build_briefing(character, scene, [PROFILES[s][0] for s in cast])


def turn(slug: str, beat: int, items: list[str], thread: list[ChatMessage] = (), **kw) -> Request:
    messages = [*thread, ChatMessage(role="user", content=beat_update(beat, items, last_beat=50))]
    return Request(to=slug, purpose=kw.pop("purpose", "turn"), system=kw.pop("system", briefing(slug)),
                   beat=beat, messages=messages)


async def play_scene(seed: int, beats: int = 16, cast: tuple[str, ...] = ("alice", "bob", "charlie"),
                     scene: Scene = SCENE):
    """Parallel beats with isolation (b) threads: every turn of every actor, until a close."""
    provider = OfflineProvider(seed=seed)
    threads = {s: [] for s in cast}
    inbox = {s: [] for s in cast}
    inbox[cast[0]].append(note_line(BEGIN_NOTE))
    turns = []
    for beat in range(1, beats + 1):
        if beat == 4:
            for s in cast:
                inbox[s].append("[EVENT: Phone rings loudly on the conference table]")
        spoken = []
        for slug in cast:
            request = turn(slug, beat, inbox[slug], threads[slug], system=briefing(slug, cast, scene))
            inbox[slug] = []
            text = (await provider.complete(request)).text
            threads[slug] += [request.messages[-1], ChatMessage(role="assistant", content=text)]
            parsed = parse_turn(text)
            turns.append((slug, request, text, parsed))
            if parsed.speech is not None and parsed.speech.action != "silent":
                spoken.append((slug, f"{PROFILES[slug][0]} {parsed.speech.raw}"))
        for speaker, line in spoken:
            for slug in cast:
                if slug != speaker:
                    inbox[slug].append(line)
        if any(p.speech is not None and closes(p.speech) for s, _, _, p in turns[-len(cast):]):
            break
    return turns


def closes(speech) -> bool:
    return bool(speech.closes_scene or takes_leave(speech.content, speech.nonverbal, speech.raw))


async def test_same_seed_and_same_request_give_a_byte_identical_answer():
    for request in (turn("alice", 3, ['Bob [TO: Alice] "I can explain."']),
                    Request(to="bob", purpose="journal", system=briefing("bob"),
                            messages=[ChatMessage(role="user", content=JOURNAL_PROMPT)])):
        first = await OfflineProvider(seed=42).complete(request)
        again = await OfflineProvider(seed=42).complete(request)
        assert first.text == again.text


async def test_different_seeds_play_different_scenes():
    requests = [turn(slug, beat, ['Bob [TO: Alice, TONE: nervous] "I know I missed it."'])
                for slug in ("alice", "charlie") for beat in (2, 3, 5)]
    answers = {seed: [(await OfflineProvider(seed=seed).complete(r)).text for r in requests] for seed in range(4)}
    assert len({tuple(a) for a in answers.values()}) == 4
    assert await play_scene(1) != await play_scene(2)


async def test_every_turn_follows_the_tag_protocol():
    for seed in range(6):
        for slug, _, text, parsed in await play_scene(seed):
            assert parsed.well_formed, (seed, slug, text, parsed.problems)
            assert parsed.thinking and parsed.thinking.strip()


async def test_markup_in_the_scene_never_makes_its_own_turn_malformed():
    """Angle brackets in what a character is told (an imported goal's `<root>`, HTML, `a < b`) are
    quoted in its speech as in its thinking, never as a tag that breaks the protocol."""
    marked = SCENE.model_copy(update={
        "goal": "<goal>Bob apologises</goal> and Alice accepts",
        "prompt": "Bob missed the deadline <b>again</b>; the margin is < 5% > nothing.",
        "perspectives": {"alice": "<root>Get the apology <extra>in writing</extra></root>",
                         "bob": "Your goal: <speech>keep your job</speech>", "charlie": "<i>Say little.</i>"}})
    for seed in range(8):
        for slug, _, text, parsed in await play_scene(seed, scene=marked):
            assert parsed.well_formed, (seed, slug, text, parsed.problems)


async def test_scenes_use_every_appendix_b_form():
    speeches = [p.speech for seed in range(8) for *_, p in await play_scene(seed)]
    actions = {s.action for s in speeches}
    assert {"speak", "interrupt", "silent", "react"} <= actions
    spoken = [s for s in speeches if s.action == "speak" and s.content]
    assert any(s.target for s in spoken) and any(not s.target for s in spoken)
    assert any(s.nonverbal for s in spoken)
    silent = [s for s in speeches if s.action == "silent"]
    assert any(s.nonverbal for s in silent) and any(not s.nonverbal for s in silent)
    assert all(s.tone for s in speeches if s.action in ("speak", "interrupt", "react") and not s.closes_scene)


async def test_an_interruption_cuts_in_after_words_of_the_last_line_heard():
    last = 'Bob [TO: Alice, TONE: defensive] "I want to explain what happened with the timeline."'
    found = 0
    for seed in range(80):
        speech = parse_turn((await OfflineProvider(seed=seed).complete(turn("alice", 3, [last]))).text).speech
        if speech.action == "interrupt":
            found += 1
            assert "I want to explain what happened with the timeline".startswith(speech.interrupt_after)
    assert found


async def test_directed_speech_goes_to_someone_present():
    for seed in range(6):
        for slug, _, _, parsed in await play_scene(seed):
            if parsed.speech.target:
                assert parsed.speech.target in {"Alice", "Bob", "Charlie"} - {PROFILES[slug][0]}


async def test_never_silent_when_asked_to_begin_or_when_the_scene_stalls():
    for seed in range(60):
        provider = OfflineProvider(seed=seed)
        for items in ([note_line(BEGIN_NOTE)], [note_line(STALL_NOTE)]):
            speech = parse_turn((await provider.complete(turn("charlie", 4, items))).text).speech
            assert speech.action != "silent", (seed, items)


async def test_quiet_characters_fall_silent_more_often_than_blunt_ones():
    heard = ['Bob [TONE: nervous] "I think we should talk about the deadline."']
    async def silences(slug: str) -> int:
        answers = [await OfflineProvider(seed=s).complete(turn(slug, 3, heard)) for s in range(120)]
        return sum(parse_turn(a.text).speech.action == "silent" for a in answers)
    quiet, blunt = await silences("charlie"), await silences("alice")
    assert quiet > blunt
    assert 0.15 < (quiet + blunt) / 240 < 0.5


async def test_reacts_to_a_world_event():
    event = "[EVENT: Phone rings loudly on the conference table]"
    reactions = []
    for seed in range(20):
        parsed = parse_turn((await OfflineProvider(seed=seed).complete(turn("bob", 5, [event]))).text)
        assert "Phone rings loudly" in parsed.thinking
        assert parsed.speech.action in ("react", "speak") and parsed.speech.nonverbal
        reactions.append(parsed.speech.action)
    assert "react" in reactions and "speak" in reactions


async def test_closes_with_a_close_line_within_two_turns_of_the_nudge():
    heard = 'Bob [TO: Alice] "We could check in every week."'
    for seed in range(30):
        provider = OfflineProvider(seed=seed)
        first = turn("alice", 3, [heard, note_line(SOFT_CAP_NUDGE)])
        answer = (await provider.complete(first)).text
        if closes(parse_turn(answer).speech):
            continue
        thread = [*first.messages, ChatMessage(role="assistant", content=answer)]
        second = (await provider.complete(turn("alice", 4, [heard], thread))).text
        assert closes(parse_turn(second).speech), (seed, answer, second)


async def test_closes_within_two_turns_of_the_nudge_with_a_stateless_actor():
    witnessed = f'WHAT YOU HAVE WITNESSED SO FAR:\n{note_line(SOFT_CAP_NUDGE)}\n(you) Alice [TONE: warm] "Nearly."'
    now = beat_update(4, ['Bob "Okay."'])
    for seed in range(20):
        request = Request(to="alice", system=briefing("alice"), messages=[
            ChatMessage(role="user", content=f"{witnessed}\n\nNOW:\n{now}")])
        assert closes(parse_turn((await OfflineProvider(seed=seed).complete(request)).text).speech)


async def test_every_scene_comes_to_a_natural_close_on_its_own():
    for seed in range(10):
        turns = await play_scene(seed, beats=20)
        assert closes(turns[-1][3].speech) or any(closes(p.speech) for *_, p in turns[-3:])
        assert 6 <= turns[-1][1].beat <= 16


async def test_a_few_scenes_end_with_the_explicit_close_said_by_one_character():
    explicit = 0
    for seed in range(200):
        speeches = [parse_turn((await OfflineProvider(seed=seed).complete(turn(slug, 30, [])))
                               .text).speech for slug in ("alice", "bob", "charlie")]
        assert all(closes(speech) for speech in speeches)
        said = sum(speech.closes_scene for speech in speeches)
        assert said <= 1, "two characters never say the explicit close together"
        explicit += said
    assert 0 < explicit < 30


async def test_journal_is_a_first_person_entry_of_200_to_500_words_without_tags():
    for seed in range(5):
        turns = await play_scene(seed)
        _, request, answer, _ = next(t for t in reversed(turns) if t[0] == "bob")
        thread = [*request.messages, ChatMessage(role="assistant", content=answer),
                  ChatMessage(role="user", content=JOURNAL_PROMPT)]
        entry = (await OfflineProvider(seed=seed).complete(
            Request(to="bob", purpose="journal", system=request.system, messages=thread))).text
        assert 200 <= len(entry.split()) <= 500
        assert re.search(r"\bI\b", entry) and "<" not in entry and ">" not in entry
        assert "Alice" in entry and "Charlie" in entry
        assert "\u201c" in entry


def judge_request(lines: list[str], silent: int = 0) -> Request:
    user = (f"Beat 6 of at most 50. Silent beats in a row: {silent}.\n\nSPEECH SO FAR:\n" + "\n".join(lines)
            + "\n\nYour decision, as JSON only:")
    system = "You are the coordinator of a scene.\n\nScene goal: agree on next steps\n\nSetting: Office conference room"
    return Request(to="judge", purpose="judge", system=system, messages=[ChatMessage(role="user", content=user)])


async def test_judge_answers_one_json_decision():
    provider = OfflineProvider(seed=3)
    talk = ['Alice [TO: Bob, TONE: stern] "Tell me what happened."', 'Bob [TONE: nervous] "I underestimated it."']
    decisions = {}
    for name, request in {"continue": judge_request(talk),
                          "close": judge_request([*talk, 'Alice [TONE: warm] "Thank you both, this was generous."']),
                          "exit": judge_request([*talk, 'Bob [REACT, TONE: calm, *picks up coat and leaves*]']),
                          "stall": judge_request(talk, silent=3)}.items():
        decisions[name] = json.loads((await provider.complete(request)).text)
        assert decisions[name]["decision"] in ("continue", "close", "nudge", "suggest_event")
        assert set(decisions[name]) >= {"decision", "reason", "actor", "text"}
    assert decisions["continue"]["decision"] == "continue"
    assert decisions["close"]["decision"] == "close" and decisions["close"]["reason"] == "natural"
    assert decisions["exit"]["decision"] == "close"
    assert decisions["stall"]["decision"] == "suggest_event" and decisions["stall"]["text"]


async def test_streaming_delivers_fragments_that_concatenate_to_the_text():
    fragments: list[str] = []
    completion = await OfflineProvider(seed=5).complete(turn("alice", 2, []), on_delta=fragments.append)
    assert 5 <= len(fragments) <= 12
    assert "".join(fragments) == completion.text


async def test_latency_is_waited_on_the_injected_clock():
    clock = FakeClock()
    provider = OfflineProvider(seed=5, latency_ms=(200, 900), clock=clock)
    deltas: list[str] = []
    completion = await provider.complete(turn("alice", 2, []), on_delta=deltas.append)
    assert len(clock.sleeps) == len(deltas)
    assert 0.2 <= sum(clock.sleeps) <= 0.9
    assert completion.latency_s == pytest.approx(sum(clock.sleeps))
    again = FakeClock()
    await OfflineProvider(seed=5, latency_ms=(200, 900), clock=again).complete(turn("alice", 2, []))
    assert sum(again.sleeps) == pytest.approx(sum(clock.sleeps))


async def test_usage_is_counted_honestly_and_costs_nothing():
    request = turn("alice", 2, [])
    completion = await OfflineProvider().complete(request)
    prompt = len(request.system) + sum(len(m.content) for m in request.messages)
    assert completion.usage.input_tokens == pytest.approx(prompt / 4, abs=1)
    assert completion.usage.output_tokens == pytest.approx(len(completion.text) / 4, abs=1)
    assert (completion.provider, completion.model) == ("offline", "improviser")


async def test_the_improviser_uses_only_what_is_in_the_request():
    provider = OfflineProvider(seed=9)
    stranger = turn("alice", 3, ['Zebulon [TO: Alice, TONE: sly] "Have you met Ottoline?"'])
    await provider.complete(stranger)
    for seed in range(6):
        for slug, request, text, _ in await play_scene(seed, cast=("alice", "bob")):
            assert "Zebulon" not in text and "Ottoline" not in text and "Charlie" not in text
            assert "Henderson" not in text or slug == "alice" or "Henderson" in str(request.messages)


async def test_malformed_answers_are_mended_on_correction_without_changing_the_speech():
    request = turn("bob", 3, ['Alice [TO: Bob, TONE: stern] "Tell me what happened."'])
    shapes = set()
    for seed in range(12):
        provider = OfflineProvider(seed=seed, malformed_rate=1.0)
        bad = (await provider.complete(request)).text
        assert not parse_turn(bad).well_formed
        shapes.add(("<speech>" in bad, "</speech>" in bad))
        correction = request.model_copy(update={"purpose": "correct", "messages": [
            *request.messages, ChatMessage(role="assistant", content=bad),
            ChatMessage(role="user", content=CORRECTION_PROMPT)]})
        fixed = parse_turn((await provider.complete(correction)).text)
        assert fixed.well_formed and fixed.speech.raw in bad
    assert len(shapes) == 3


async def test_turns_are_well_formed_by_default():
    for seed in range(30):
        text = (await OfflineProvider(seed=seed).complete(turn("bob", 3, []))).text
        assert parse_turn(text).well_formed


async def test_a_request_it_cannot_play_fails_as_a_provider_error(monkeypatch):
    from promptdesk.core.improv import PLAYERS

    monkeypatch.delitem(PLAYERS, "envelope")
    with pytest.raises(ProviderError):
        await OfflineProvider().complete(turn("alice", 1, [], purpose="envelope"))


def test_the_disclaimer_says_it_is_not_a_language_model():
    assert "not a language model" in DISCLAIMER and OfflineProvider.name == "offline"


async def test_the_offline_judge_tells_apart_cast_members_who_share_a_first_name():
    """`Ann apologises` in a cast with Ann and Ann Lee: Ann Lee's apology is not Ann's, in a decision
    (whose request names the cast) and in the verdict (which names whoever spoke)."""
    from promptdesk.core.engine.coordinator import JudgeCoordinator, SceneView

    goal = "Ann apologises, and Grace accepts."
    judge = JudgeCoordinator("B", goal=goal)
    cast = ["Ann", "Ann Lee", "Grace"]
    wrong = ['Ann Lee [TO: Grace, TONE: soft] "I\'m sorry, Grace. I apologise."', 'Ann [TONE: flat] "Hm."',
             'Grace [TO: Ann Lee, TONE: warm] "I accept your apology."']
    right = ['Ann [TO: Grace, TONE: soft] "I\'m sorry, Grace. I apologise."', 'Ann Lee [TONE: flat] "Hm."',
             'Grace [TO: Ann, TONE: warm] "I accept your apology."']
    for lines, met in ((wrong, False), (right, True)):
        view = SceneView(beat=9, max_beats=30, goal=goal, recent_lines=lines, cast=cast)
        answer = json.loads((await OfflineProvider(seed=1).complete(judge.verdict_request(view))).text)
        assert answer["goal_achieved"] is met, answer
        decision = json.loads((await OfflineProvider(seed=1).complete(judge.request(view))).text)
        assert decision["goal_met"] is met, decision


async def test_the_offline_judge_hears_final_positions_from_a_cast_member_whose_name_holds_a_comma():
    """`Cast: Gloria, PA, Bob.`: Gloria, PA is one person, who has spoken since the close note."""
    from promptdesk.core.engine.coordinator import JudgeCoordinator, SceneView

    judge = JudgeCoordinator("B", goal="Bob apologises.")
    since = ['Gloria, PA [TO: Bob, TONE: firm] "I have said my piece; I stand by the rota."',
             'Bob [TONE: quiet] "And I stand by mine. Good night."']
    view = SceneView(beat=9, max_beats=30, goal="Bob apologises.", recent_lines=since, cast=["Gloria, PA", "Bob"],
                     since_close_note=since)
    decision = json.loads((await OfflineProvider(seed=1).complete(judge.request(view))).text)
    assert decision["positions_stated"] is True, decision
    view.since_close_note = since[1:]
    decision = json.loads((await OfflineProvider(seed=1).complete(judge.request(view))).text)
    assert decision["positions_stated"] is False, decision


async def test_the_offline_judge_counts_a_goal_act_only_from_the_person_the_goal_names():
    """An Apology in which Alice apologises and Bob never does is not achieved, whatever words were said."""
    from promptdesk.core.engine.coordinator import JudgeCoordinator, SceneView

    goal = "Bob gives a sincere apology, Alice accepts, and they agree on accountability measures."
    judge = JudgeCoordinator("B", goal=goal)

    async def verdict(lines: list[str]) -> dict:
        request = judge.verdict_request(SceneView(beat=9, max_beats=30, goal=goal, recent_lines=lines))
        return json.loads((await OfflineProvider(seed=1).complete(request)).text)

    wrong = await verdict(['Alice [TO: Bob, TONE: soft] "I\'m sorry I shouted, Bob. I apologise."',
                           'Bob [TO: Alice, TONE: relieved] "I accept that. We agree on accountability measures."',
                           'Charlie [TONE: warm] "Agreed, accountability measures it is."'])
    assert wrong["goal_achieved"] is False and "Bob" in wrong["reason"]
    right = await verdict(['Bob [TO: Alice, TONE: ashamed] "I\'m sorry, Alice. I apologise for the deadline."',
                           'Alice [TO: Bob, TONE: warm] "I accept your apology."',
                           'Charlie [TONE: warm] "Then we agree on accountability measures."',
                           'Bob [TONE: firm] "Agreed: accountability measures, weekly."'])
    assert right["goal_achieved"] is True
    refused = await verdict(['Bob [TO: Alice, TONE: defiant] "I\'m not sorry, and I will not apologise."',
                             'Alice [TONE: cold] "Then I accept nothing."'])
    assert refused["goal_achieved"] is False


@pytest.mark.parametrize("name", ["山田花子", "ليلى", "Émile", "Дмитрий Петров", "Łukasz", "de Vries",
                                  "Sir Bartholomew Archibald Fitzwilliam-Smythe III", "O'Brien-Ó Súilleabháin"])
def test_a_routed_line_is_read_as_speech_whatever_script_or_length_the_speakers_name_has(name):
    """The improviser, the offline judge and the offline evaluator read routed lines: a cast member's
    name in any script, of any length the name gate lets through, is the speaker of their line."""
    from promptdesk.core.improv.lines import parse_line

    line = parse_line(f'{name} [TO: Ann, TONE: calm, *nods*] "I am sorry."')
    assert line is not None and (line.speaker, line.target, line.text) == (name, "Ann", "I am sorry.")
    own = parse_line(f'(you) {name} [TONE: calm] "Again."')
    assert own is not None and own.own and own.speaker == name


async def test_the_offline_judge_counts_the_act_of_a_cast_member_named_in_another_script():
    from promptdesk.core.engine.coordinator import JudgeCoordinator, SceneView

    goal = "山田花子 apologises, and ليلى accepts."
    judge = JudgeCoordinator("B", goal=goal)
    lines = ['山田花子 [TO: ليلى, TONE: soft] "I\'m sorry. I apologise."', 'ليلى [TONE: warm] "I accept your apology."']
    view = SceneView(beat=9, max_beats=30, goal=goal, recent_lines=lines, cast=["山田花子", "ليلى"])
    answer = json.loads((await OfflineProvider(seed=1).complete(judge.verdict_request(view))).text)
    assert answer["goal_achieved"] is True, answer


async def test_in_a_two_person_scene_no_one_takes_leave_of_a_group():
    """With one other person in the room, a leave-taking is said to them: never `Goodbye, everyone`,
    `all of you` or `Good night, all` (it was, to a lone visitor)."""
    import re

    group = re.compile(r"\b(?:everyone|everybody|all of you|you all)\b|,\s*all\s*[.!?]", re.I)
    for seed in range(1, 13):
        turns = await play_scene(seed, cast=("alice", "bob"))
        said = [p.speech.content for _, _, _, p in turns if p.speech is not None and p.speech.content]
        assert not [line for line in said if group.search(line)], (seed, said)
