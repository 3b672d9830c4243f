"""Scenes whose actors misbehave, through the real SDKs against the loopback server: silence
(stall), an explicit close, an actor that ignores the soft-cap nudge, a failing actor, malformed
output (correction and salvage), a mixed cast, a budget, and a key that must never leak."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from helpers import example_scene
from loopback import Recorded, Reply, loopback  # noqa: F401  (fixture)

CANARY = "sk-canary-DO-NOT-LEAK-1234"


def actor_of(recorded: Recorded) -> str:
    """Which character a request is for (the briefing says `You are <Name>.`)."""
    system = recorded.body.get("system")
    text = json.dumps(system) if system is not None else json.dumps(recorded.body.get("messages", [])[:1])
    match = re.search(r"You are (\w+)\.", text)
    return match.group(1).lower() if match else "?"


def turn(speech: str, thinking: str = "I keep my own counsel.") -> str:
    return f"<thinking>{thinking}</thinking>\n<speech>{speech}</speech>"


def scripted(by_actor: Callable[[str, Recorded], str | Reply]) -> Callable[[Recorded], Reply]:
    def reply(recorded: Recorded) -> Reply:
        answer = by_actor(actor_of(recorded), recorded)
        return answer if isinstance(answer, Reply) else Reply(text=answer)
    return reply


UNKNOWN_VERDICT = '{"goal_achieved": null, "reason": "cannot tell"}'


def judging(decide: Callable[[str], str], verdict: str = UNKNOWN_VERDICT,
            speech: str = '[TONE: calm] "Go on, I am listening."') -> Callable[[Recorded], Reply]:
    """A loopback's answers for a scene judged on it: the closing verdict request gets `verdict`, each
    coordinator request `decide(body)` (the request as JSON text), and every actor's turn `speech`."""
    def answer(recorded: Recorded) -> Reply:
        body = json.dumps(recorded.body)
        if "the scene has ended" in body:
            return Reply(text=verdict)
        if "coordinator of a scene" in body:
            return Reply(text=decide(body))
        return Reply(text=turn(speech))
    return answer


def remote_cast(server, *slugs: str, provider: str = "anthropic", model: str = "claude-sonnet-4-6",
                max_retries: int = 0) -> dict:
    base = server.url() if provider == "anthropic" else server.url("/v1")
    return {slug: {"provider": provider, "model": model, "base_url": base, "max_retries": max_retries,
                   "timeout_s": 5} for slug in slugs}


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)


def all_text(run) -> str:
    return "\n".join(p.read_text(errors="replace") for p in run.dir.rglob("*") if p.is_file())


async def test_silent_beats_stall_the_scene_note_first_then_an_early_event_then_close(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn("[SILENT, *looks at the floor*]"))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          events=[{"at_beat": 30, "text": "The fire alarm goes off"}],
                          limits={"stall_beats": 3, "max_beats": 40})
    run = await run_scene(scene, isolation="b", coordinator="C")
    records = run.records()
    note = next(r for r in records if r["type"] == "note" and r.get("reason") == "stall")
    event = next(r for r in records if r["type"] == "event")
    assert note["beat"] == event["beat"] < 30 and event["from"] == "coordinator"
    assert run.result.close_reason == "stall"
    next_prompts = [p for p in run.prompts() if p.get("beat") == note["beat"] + 1 and p["purpose"] == "turn"]
    assert all("Someone should respond" in p["request"]["messages"][-1]["content"] for p in next_prompts)


async def test_an_explicit_close_ends_the_scene(run_scene, loopback):
    def answer(who, recorded):
        beat = json.dumps(recorded.body["messages"][-1])
        if who == "bob" and "BEAT 2" in beat:
            return turn("*[the scene ends here]*")
        return turn('[TONE: calm] "Let us go through the timeline again."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="b", coordinator="C")
    assert run.result.close_reason == "explicit" and run.result.goal_achieved is None
    assert [r for r in run.records() if r["type"] == "close"][0]["beat"] == 2


async def test_an_actor_that_ignores_the_nudge_is_closed_by_the_soft_cap(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn('[TONE: stubborn] "And another thing about the timeline."'))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"soft_cap_per_character": 2, "hard_cap_per_character": 20, "max_beats": 40})
    run = await run_scene(scene, isolation="a", coordinator="C")
    assert run.result.close_reason == "soft-cap"
    nudges = [r for r in run.records() if r["type"] == "note" and r.get("reason") == "soft-cap"]
    assert nudges and run.result.beats <= 2 + 3 + 2


async def test_a_failing_actor_becomes_a_system_line_and_the_scene_goes_on(run_scene, loopback):
    def answer(who, recorded):
        if who == "bob":
            return Reply(status=500, error_message="overloaded")
        return turn('[TONE: tense] "Bob? Are you with us?"')

    loopback.default = scripted(answer)
    cast = {**remote_cast(loopback, "alice", "charlie"), **remote_cast(loopback, "bob", max_retries=1)}
    cast["bob"]["retry_after_cap_s"] = 0
    scene = example_scene("the-apology", cast=cast, limits={"max_beats": 4})
    run = await run_scene(scene, isolation="b", coordinator="C")
    assert run.result.close_reason == "max_beats_exceeded"
    assert "WARNING promptdesk.providers" in (run.dir / "debug.log").read_text()
    assert "[SYSTEM: Bob unable to respond]" in (run.dir / "transcript.txt").read_text()
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert {e["character"] for e in meta["errors"]} == {"bob"} and len(meta["errors"]) == 3
    later = [r for r in run.records() if r["type"] == "speak" and r["beat"] == 3]
    assert {r["from"] for r in later} == {"alice", "charlie"}
    assert "bob unable to respond" in (run.dir / "debug.log").read_text()


async def test_malformed_output_is_corrected_at_most_twice_then_the_actor_is_silent(run_scene, loopback):
    def answer(who, recorded):
        if who == "bob":
            return "Honestly? I messed up the Henderson numbers."
        return turn('[TONE: firm] "Go on."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="C")
    corrections = [r for r in run.records() if r["type"] == "correct" and r["target"] == "bob"]
    bob_turns = [r for r in run.records() if r["type"] == "speak" and r["from"] == "bob"]
    assert len(corrections) == 2 * len(bob_turns) and bob_turns
    assert {(r["action"], r["text"]) for r in bob_turns} == {("silent", "")}
    silences = [r for r in run.records() if r["type"] == "system" and r["target"] == "bob"]
    assert len(silences) == len(bob_turns) and "no well-formed <speech>" in silences[0]["text"]
    assert "Henderson" not in (run.dir / "transcript.txt").read_text()
    assert "Henderson" in (run.dir / "debug.log").read_text()
    correction_prompts = [p for p in run.prompts() if p["purpose"] == "correct"]
    assert "did not use `<thinking>` and `<speech>` tags" in correction_prompts[0]["request"]["messages"][-1]["content"]


async def test_a_turn_silenced_for_its_speech_keeps_its_thought_on_the_record(run_scene, loopback):
    """The thought of a turn whose speech never kept the protocol is kept in the actor's thread (and
    re-sent as its last private thought): so it is on the record, a `think` event, and the audit
    counts it as the actor's own, never as a thought no one wrote."""
    thought = "The Henderson figures were wrong before I ever touched the spreadsheet."

    def answer(who, recorded):
        if who == "bob":
            return turn('[TONE: low] "I <b>did</b> try."', thinking=thought)
        return turn('[TONE: firm] "Go on."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 4})
    run = await run_scene(scene, isolation="b", coordinator="C")
    silenced = [r["beat"] for r in run.records() if r["type"] == "system" and r.get("reason") == "silenced"]
    thoughts = [r["beat"] for r in run.records() if r["type"] == "think" and r["from"] == "bob" and r["text"] == thought]
    assert silenced and thoughts == silenced
    resent = [p for p in run.prompts() if p["to"] == "bob" and p["purpose"] == "turn" and thought in json.dumps(p)]
    assert resent, "the thread re-sends the thought"
    assert "Henderson" not in (run.dir / "transcript.txt").read_text()


async def test_a_correction_that_works_replaces_the_malformed_turn(run_scene, loopback):
    def answer(who, recorded):
        last = json.dumps(recorded.body["messages"][-1])
        if who == "bob" and "did not use" in last:
            return turn('[TO: Alice, TONE: sorry] "I messed up."')
        if who == "bob":
            return 'Sure! [TO: Alice, TONE: sorry] "I messed up."'
        return turn('[TONE: firm] "Go on."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="C")
    bob = [r for r in run.records() if r["type"] == "speak" and r["from"] == "bob"]
    corrections = [r for r in run.records() if r["type"] == "correct"]
    assert len(corrections) == len(bob) and bob[0]["target"] == "Alice" and bob[0]["text"] == "I messed up."
    assert "salvaged" not in (run.dir / "debug.log").read_text()


async def test_a_stream_that_breaks_mid_way_becomes_a_system_line_and_keeps_its_deltas(run_scene, loopback):
    def answer(who, recorded):
        if who == "bob":
            return Reply(text=turn('[TONE: shaky] "I was going to say that the migration was"'), deltas=6,
                         error_after_deltas=2)
        return turn('[TONE: firm] "Go on."')

    loopback.default = scripted(answer)
    deltas = []
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"),
                          limits={"max_beats": 2})
    run = await run_scene(scene, isolation="b", coordinator="C",
                          before_run=lambda s: s.subscribe(lambda e: deltas.append(e) if e.type == "delta" else None))
    assert "[SYSTEM: Bob unable to respond]" in (run.dir / "transcript.txt").read_text()
    assert any(d.from_ == "bob" for d in deltas), "the deltas that arrived before the error were shown live"
    assert not [r for r in run.records() if r["type"] == "speak" and r["from"] == "bob"]
