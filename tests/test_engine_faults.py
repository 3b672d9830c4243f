"""Faults inside turns, journals and judges, through the real SDKs against the loopback server: no
exception drops a turn silently, the lines an actor missed wait for its next turn, the journal step
never costs the run its files nor overruns the budget, and the batch summary counts failures truly.

The unexpected exception used throughout is a reply whose usage carries a token count that is not a
number (a malformed stream event as some compatible servers send it): the SDK accepts it and the
provider's arithmetic raises `ValueError`, which is neither a `ProviderError` nor a timeout.
"""

from __future__ import annotations

import io
import json

import pytest

from promptdesk.core.cli.batch import run_batch
from promptdesk.core.cli.main import parser
from helpers import CHARACTERS, SCENES, example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import remote_cast, scripted, turn

BAD_USAGE = {"output_tokens": "lots"}
"""Anthropic usage the SDK passes through and the provider cannot count."""
BAD_OPENAI_USAGE = {"prompt_tokens_details": {"cached_tokens": "lots"}}
"""The same for OpenAI-shaped servers."""


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def fails_first(slug: str, good: str, times: int = 1):
    """`slug`'s first `times` calls get an unusable reply; everyone else (and later calls) `good`."""
    seen = {"n": 0}

    def answer(who, recorded):
        if who == slug and seen["n"] < times:
            seen["n"] += 1
            return Reply(text=good, usage=BAD_USAGE)
        return good
    return scripted(answer)


def is_journal(recorded) -> bool:
    return "Write a brief journal entry" in json.dumps(recorded.body["messages"][-1])


def system_lines(run, target: str | None = None) -> list[dict]:
    return [r for r in run.records() if r["type"] == "system" and (target is None or r.get("target") == target)]


@pytest.mark.parametrize("turns", ["parallel", "sequential"])
async def test_an_unexpected_exception_in_a_turn_is_a_system_event_and_the_missed_lines_wait(run_scene, loopback,
                                                                                              turns):
    opening = "Let us go through the timeline again."
    loopback.default = fails_first("bob", turn(f'[TONE: calm] "{opening}"'))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), turns=turns,
                          initial_speaker="alice", limits={"max_beats": 5})
    run = await run_scene(scene, isolation="b", coordinator="C")
    failed = system_lines(run, "bob")
    assert len(failed) == 1 and failed[0]["text"] == "Bob unable to respond"
    assert failed[0]["reason"].startswith("unexpected ValueError")
    log = (run.dir / "debug.log").read_text()
    assert "bob unable to respond" in log and "where='" in log
    assert run.result.errors == 1
    assert json.loads((run.dir / "metadata.json").read_text())["errors"][0]["character"] == "bob"
    bob_turns = [p for p in run.prompts() if p["to"] == "bob" and p["purpose"] == "turn"]
    assert len(bob_turns) >= 2, "bob is asked again after the failed turn"
    failed_with = bob_turns[0]["request"]["messages"][-1]["content"]
    retried_with = bob_turns[1]["request"]["messages"][-1]["content"]
    assert opening in failed_with and opening in retried_with, "the lines bob missed are kept for his next turn"


async def test_a_failed_participant_in_a_collaboration_is_named_and_counted(run_scene, loopback):
    from test_collaborate import collab_scene, envelope

    loopback.default = Reply(text=json.dumps(envelope("Once upon a time.", final=True)), usage=BAD_USAGE)
    run = await run_scene(collab_scene(loopback, first="claude"), isolation="a", coordinator="C")
    failed = system_lines(run, "claude")
    assert len(failed) == 1 and failed[0]["reason"].startswith("unexpected ValueError")
    assert "claude unable to respond" in (run.dir / "debug.log").read_text()
    assert run.result.close_reason == "provider-error" and run.result.errors == 1  # its only call failed
    assert not any("engine error" in r["text"] for r in system_lines(run))


async def test_roundtable_faults_fall_back_for_the_facilitator_and_name_the_participant(run_scene, loopback):
    from test_roundtable_loopback import scene as table_scene, script

    base, first_question = script(), []

    def reply(recorded):
        good = base(recorded)
        system = recorded.body["messages"][0]["content"]
        if system.startswith("You are Bob,"):
            return Reply(text=good.text, usage=BAD_OPENAI_USAGE)
        if system.startswith("You are the facilitator") and not first_question:
            first_question.append(recorded)
            return Reply(text=good.text, usage=BAD_OPENAI_USAGE)
        return good

    loopback.default = reply
    run = await run_scene(table_scene(loopback, max_rounds=1), isolation="a", coordinator="B")
    assert run.result.close_reason != "error"
    assert [r["target"] for r in system_lines(run) if r.get("target")] == ["bob"]
    fallbacks = [r for r in system_lines(run) if r.get("reason") == "fallback"]
    assert fallbacks and fallbacks[0]["about"] == "facilitator" and fallbacks[0]["fallback"] == "question"
    assert "facilitator unable to respond" in (run.dir / "debug.log").read_text()


async def test_an_unexpected_judge_failure_falls_back_to_rules_and_the_scene_goes_on(run_scene, loopback):
    def answer(who, recorded):
        if recorded.body.get("max_tokens") == 200 and "coordinator of a scene" in json.dumps(recorded.body.get("system")):
            return Reply(text='{"decision": "continue"}', usage=BAD_USAGE)
        return turn('[TONE: calm] "Go on."')

    loopback.default = scripted(answer)
    cast = remote_cast(loopback, "alice", "bob", "charlie")
    scene = example_scene("the-apology", cast=cast, judge={"name": "anthropic", **{k: v for k, v in cast["alice"].items() if k != "provider"}}, limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="B")
    assert run.result.close_reason == "max_beats_exceeded"
    assert "judge decision unusable" in (run.dir / "debug.log").read_text()
    assert "unexpected ValueError" in (run.dir / "debug.log").read_text()


async def test_a_journal_step_failure_is_a_system_event_and_every_file_is_written(run_scene, loopback):
    def answer(who, recorded):
        if is_journal(recorded):
            return Reply(text="An entry.", usage=BAD_USAGE) if who == "bob" else "I will remember the umbrella."
        return turn('[TONE: calm] "Go on."')

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 2})
    run = await run_scene(scene, isolation="b", coordinator="C")
    assert [p["to"] for p in run.prompts() if p["purpose"] == "journal"], "the journal step ran"
    failed = [r for r in system_lines(run) if r.get("about") == "bob"]
    assert len(failed) == 1 and "could not write a journal entry" in failed[0]["text"]
    for name in ("events.json", "transcript.md", "transcript.txt", "metadata.json"):
        assert (run.dir / name).stat().st_size > 0
    assert sorted(p.stem for p in (run.dir / "journals").glob("*.md")) == ["alice", "charlie"]


async def test_a_character_journal_that_cannot_be_appended_is_a_system_event(run_scene, loopback, tmp_path):
    loopback.default = scripted(lambda who, r: turn('[TONE: calm] "Go on."'))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 1})
    blocked = tmp_path / "blocked-journal"
    blocked.mkdir()  # a directory where the journal file should be: appending raises IsADirectoryError

    def prepare(session):
        import dataclasses
        session.write_character_journals = True
        for slug, character in session.characters.items():
            path = blocked if slug == "bob" else tmp_path / f"{slug}-journal.md"
            session.characters[slug] = dataclasses.replace(character, journal_path=path)

    run = await run_scene(scene, isolation="b", coordinator="C", before_run=prepare)
    failed = [r for r in system_lines(run) if r.get("about") == "bob"]
    assert len(failed) == 1 and str(blocked) in failed[0]["text"]
    assert (run.dir / "journals" / "bob.md").is_file(), "the entry is still in the run folder"
    assert (tmp_path / "alice-journal.md").read_text().strip()


def usage_costing(dollars_per_call: float) -> dict:
    """Anthropic usage that costs about `dollars_per_call` on claude-sonnet-4-6 ($15 per million output)."""
    return {"output_tokens": int(dollars_per_call / 15 * 1_000_000)}


async def test_the_journal_step_is_skipped_with_a_note_once_the_budget_is_spent(run_scene, loopback):
    loopback.default = scripted(lambda who, r: Reply(text=turn('[TONE: calm] "Go on."'), usage=usage_costing(0.02)))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"))
    run = await run_scene(scene, isolation="b", coordinator="C", budget_usd=0.01)
    assert run.result.close_reason == "budget"
    assert not [p for p in run.prompts() if p["purpose"] == "journal"]
    note = [r for r in system_lines(run) if r.get("reason") == "budget"]
    assert len(note) == 1 and "Journal step skipped" in note[0]["text"]
    records = run.records()
    close_at = next(i for i, r in enumerate(records) if r["type"] == "close")
    assert not [r for r in records[close_at:] if r["type"] == "call"], "nothing is spent after the close"


async def test_the_journal_step_stops_as_soon_as_the_budget_runs_out(run_scene, loopback):
    def answer(who, recorded):
        if is_journal(recorded):
            return Reply(text="An entry.", usage=usage_costing(0.05))
        return Reply(text=turn('[TONE: calm] "Go on."'), usage={"output_tokens": 1})

    loopback.default = scripted(answer)
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 2})
    run = await run_scene(scene, isolation="b", coordinator="C", budget_usd=0.04)
    assert run.result.close_reason == "max_beats_exceeded"
    assert len([p for p in run.prompts() if p["purpose"] == "journal"]) == 1
    note = [r for r in system_lines(run) if r.get("reason") == "budget"]
    assert len(note) == 1 and "Bob, Charlie" in note[0]["text"]


def test_the_batch_summary_counts_unexpected_turn_failures(tmp_path, loopback):
    import shutil

    characters = shutil.copytree(CHARACTERS, tmp_path / "characters")
    loopback.default = fails_first("bob", turn('[TONE: calm] "Go on."'), times=2)
    ns = parser().parse_args(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "b", "--coordinator", "C",
                              "--provider", "anthropic", "--model", "claude-sonnet-4-6", "--base-url", loopback.url(),
                              "--characters-dir", str(characters), "--out", str(tmp_path / "run"), "--seed", "1",
                              "--max-beats", "4"])
    stream = io.StringIO()
    assert run_batch(ns, stream) == 0
    assert "2 actor failures" in stream.getvalue()
    assert stream.getvalue().count("[SYSTEM: Bob unable to respond]") == 2


async def test_a_subscriber_that_raises_costs_neither_the_turn_nor_the_run(run_scene, loopback):
    loopback.default = scripted(lambda who, r: turn('[TONE: calm] "Go on."'))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 2})

    def broken_display(event):
        if event.type == "speak":
            raise RuntimeError("the display fell over")

    run = await run_scene(scene, isolation="b", coordinator="C", before_run=lambda s: s.subscribe(broken_display))
    assert run.result.close_reason == "max_beats_exceeded" and run.result.errors == 0
    assert len([r for r in run.records() if r["type"] == "speak"]) == 4
    assert "the display fell over" in (run.dir / "debug.log").read_text()


def test_an_unexpected_failure_is_named_by_its_type_and_never_carries_a_key():
    from promptdesk.core.engine.turn import failure_reason

    reason = failure_reason(ValueError("bad header x-api-key: sk-canary-DO-NOT-LEAK-1234"))
    assert reason.startswith("unexpected ValueError: bad header") and "sk-canary" not in reason
    assert failure_reason(TimeoutError()) == "Response timeout"
