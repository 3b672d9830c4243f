"""The scene engine end to end on the offline improviser: files, ordering, controls, isolation."""

from __future__ import annotations

import asyncio
import json
import re

from promptdesk.core.engine.briefing import ASK
from promptdesk.core.record.events import SpeakEvent, ThinkEvent
from promptdesk.core.protocol.lines import speech_line
from helpers import example_scene

import pytest


async def test_a_parallel_scene_writes_the_whole_run_folder(run_scene):
    run = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C")
    for name in ("notes.md", "events.jsonl", "events.json", "transcript.md", "transcript.txt",
                 "metadata.json", "prompts.jsonl", "debug.log"):
        assert (run.dir / name).is_file(), name
    spec = [{**{k: v for k, v in r.items() if k != "raw"}, "text": r.get("raw", r["text"]), "words": r["text"]}
            if r["type"] == "speak" else r for r in run.records()]
    assert json.loads((run.dir / "events.json").read_text()) == spec, "spec 000's log: a speech's text is its whole block"
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["name"] == "the-apology" and meta["characterCount"] == 3
    assert meta["reason"] == run.result.close_reason
    assert meta["totalBeats"] == run.result.beats
    assert set(meta["actors"]) == {"alice", "bob", "charlie"}
    assert "*[end of scene]*" in (run.dir / "transcript.md").read_text()
    assert "[SCENE END - Goal:" in (run.dir / "transcript.txt").read_text()
    assert sorted(p.name for p in (run.dir / "journals").iterdir()) == ["alice.md", "bob.md", "charlie.md"]


async def test_notes_name_both_choices_before_any_actor_is_spawned(run_scene):
    seen = []

    def watch(session):
        def on_event(event):
            if event.type == "spawn" and not seen:
                seen.append((session.recorder.run_dir / "notes.md").read_text().splitlines()[:2])
        session.subscribe(on_event)

    await run_scene(example_scene("the-apology"), isolation="a", coordinator="C", before_run=watch)
    assert seen[0][0].startswith("Isolation:        (a) — ")
    assert seen[0][1].startswith("Coordinator role: C — ")


async def test_events_jsonl_is_appended_in_order_and_never_behind_the_beat_being_played(run_scene):
    """Lines are flushed at each safe point (not event by event): whatever is on disk is the record's
    beginning, and it always holds every event of the beats before the current one; outside the
    beats (the close, the journal step) every event is flushed as it happens."""
    problems = []

    def watch(session):
        def on_event(event):
            if event.type == "delta":
                return
            lines = (session.recorder.run_dir / "events.jsonl").read_text().splitlines()
            recorded = session.recorder.events
            if [json.loads(line) for line in lines] != [e.to_record() for e in recorded[:len(lines)]]:
                problems.append(f"{event.type}: the file is not the record's beginning")
            earlier = [e for e in recorded if e.beat is not None and e.beat < session.state.beat]
            if len(lines) < len(earlier):
                problems.append(f"{event.type} at beat {session.state.beat}: an earlier beat is not on disk")
            if session.state.status != "running" and len(lines) != len(recorded):
                problems.append(f"{event.type} while {session.state.status}: not flushed at once")
        session.subscribe(on_event)

    await run_scene(example_scene("the-apology", limits={"max_beats": 4}), isolation="b", coordinator="C",
                    before_run=watch)
    assert problems == []


async def test_responses_are_kept_in_arrival_order_not_cast_order(run_scene):
    scene = example_scene("the-apology", provider={"latency_ms": (100, 3000)}, limits={"max_beats": 8})
    run = await run_scene(scene, isolation="b", coordinator="C", seed=3)
    cast = ["alice", "bob", "charlie"]
    reordered = False
    for beat in range(1, run.result.beats):
        speeches = [e for e in run.events() if isinstance(e, SpeakEvent) and e.beat == beat]
        times = [s.t for s in speeches]
        assert times == sorted(times), f"beat {beat} not in arrival order"
        order = [s.from_ for s in speeches]
        reordered |= order != [c for c in cast if c in order]
    assert reordered, "arrival order never differed from cast order: latencies were not simulated"


async def test_a_speech_is_routed_while_its_beat_still_waits_for_slower_actors(run_scene):
    """Each speech's routes follow it at once, in the order the speeches arrived; the beat's last
    speech is not where every route of the beat is paid (a crowd's n² routes between beats)."""
    scene = example_scene("the-apology", provider={"latency_ms": (100, 3000)}, limits={"max_beats": 6})
    run = await run_scene(scene, isolation="b", coordinator="C", seed=3)
    events, early = run.events(), 0
    for beat in range(1, run.result.beats):
        spoken = [i for i, e in enumerate(events) if isinstance(e, SpeakEvent) and e.beat == beat and e.action != "silent"]
        routes = [i for i, e in enumerate(events) if e.type == "route" and e.beat == beat]
        assert len(routes) == 2 * len(spoken)  # each spoken line, to the two others
        names = run.session.state.cast
        assert [(events[i].text.split("'s speech")[0].removeprefix("Forwarding "), events[i].target) for i in routes] == \
            [(names[events[at].from_], other) for at in spoken for other in names if other != events[at].from_]
        assert all(min(i for i in routes if events[i].text.startswith(f"Forwarding {names[events[at].from_]}'")) > at
                   for at in spoken)
        early += sum(1 for i in routes if i < spoken[-1]) if spoken else 0
    assert early, "every route came after the beat's last speech"


async def test_a_parallel_beat_takes_as_long_as_its_slowest_actor(run_scene):
    scene = example_scene("the-apology", provider={"latency_ms": (500, 500)}, limits={"max_beats": 3})
    run = await run_scene(scene, isolation="b", coordinator="C")
    beats = [e for e in run.events() if e.type == "beat"]
    assert beats[2].t - beats[1].t == pytest.approx(0.5, abs=0.01)


async def test_silent_responses_are_logged_but_not_transcribed(run_scene):
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 12}), isolation="b",
                          coordinator="C", seed=5)
    silent = [e for e in run.events() if isinstance(e, SpeakEvent) and e.action == "silent"]
    assert silent, "no silent response in 12 beats of three actors"
    transcript = (run.dir / "transcript.txt").read_text()
    assert "[SILENT" not in transcript
    assert transcript.count('" ') >= 0
    spoken = [e for e in run.events() if isinstance(e, SpeakEvent) and e.action != "silent"]
    names = run.session.state.cast
    for speech in spoken:
        assert speech_line(names[speech.from_], speech) in transcript


async def test_silent_speech_is_never_routed(run_scene):
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 10}), isolation="b",
                          coordinator="C", seed=5)
    routed = [e for e in run.records() if e["type"] == "route"]
    spoken = [e for e in run.records() if e["type"] == "speak" and e["action"] != "silent"]
    assert len(routed) == 2 * len(spoken)


async def test_thinking_is_never_routed(run_scene):
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 10}), isolation="a",
                          coordinator="C", seed=2)
    thoughts = [e.text for e in run.events() if isinstance(e, ThinkEvent)]
    assert thoughts
    for prompt in run.prompts():
        body = json.dumps(prompt["request"], ensure_ascii=False)
        own = [e.text for e in run.events() if isinstance(e, ThinkEvent) and e.from_ == prompt["to"]]
        for thought in thoughts:
            if thought not in own:
                assert json.dumps(thought, ensure_ascii=False)[1:-1] not in body
    with pytest.raises(TypeError):
        speech_line("Alice", ThinkEvent(t=0, **{"from": "alice"}, text="secret"))


async def test_isolation_a_sends_one_fresh_message_every_turn(run_scene):
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 5}), isolation="a", coordinator="C")
    turns = [p for p in run.prompts() if p["purpose"] == "turn"]
    assert turns and all(len(p["request"]["messages"]) == 1 for p in turns)
    assert not any(p["request"].get("cache_prefix") for p in turns)
    later = [p for p in turns if p["to"] == "bob" and p["beat"] >= 3]
    assert "WHAT YOU HAVE WITNESSED" in later[0]["request"]["messages"][0]["content"]


async def test_isolation_b_keeps_one_growing_thread_per_actor(run_scene):
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 5}, thread_thinking="keep"),
                          isolation="b", coordinator="C")
    for slug in ("alice", "bob", "charlie"):
        turns = [p["request"] for p in run.prompts() if p["to"] == slug and p["purpose"] == "turn"]
        assert all(t["cache_prefix"] for t in turns)
        for before, after in zip(turns, turns[1:]):  # the newest update is kept without its ask and limit
            assert after["messages"][:len(before["messages"]) - 1] == before["messages"][:-1]
            kept = after["messages"][len(before["messages"]) - 1]["content"]
            sent = before["messages"][-1]["content"]
            assert sent.startswith(kept + "\n\n") and sent.endswith(ASK)  # re-sent unchanged up to its kept part
            assert not kept.endswith(ASK) and not re.search(r"^BEAT \d+", kept, re.M)
            assert len(after["messages"]) == len(before["messages"]) + 2
            assert after["system"] == before["system"]


async def test_a_scene_closes_naturally_on_close_words(run_scene):
    run = await run_scene(example_scene("the-apology", limits={"max_beats": 40}), isolation="b",
                          coordinator="C", seed=11)
    assert run.result.close_reason in ("natural", "explicit")
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["goalAchieved"] is None and "goal_markers" in meta["goalReason"]
    assert meta["success"] is True


async def test_max_beats_forces_a_close_with_goal_not_achieved(run_scene):
    run = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C", max_beats=3)
    assert run.result.close_reason == "max_beats_exceeded"
    meta = json.loads((run.dir / "metadata.json").read_text())
    assert meta["goalAchieved"] is None and meta["totalBeats"] == 3 and meta["reason"] == "max_beats_exceeded"
    assert "max beats" in (run.dir / "debug.log").read_text()


async def test_stop_mid_beat_cancels_calls_and_still_writes_every_file(run_scene):
    def stop_at_beat_two(session):
        session.subscribe(lambda e: session.stop() if e.type == "delta" and e.beat == 2 else None)

    scene = example_scene("the-apology", provider={"latency_ms": (200, 800)})
    run = await run_scene(scene, isolation="b", coordinator="C", before_run=stop_at_beat_two)
    assert run.result.close_reason == "stop"
    types = [r["type"] for r in run.records()]
    assert types[-2:] == ["stop", "close"] or types.index("stop") < types.index("close")
    assert not [r for r in run.records() if r["type"] == "speak" and r["beat"] == 2]
    assert (run.dir / "transcript.md").is_file() and (run.dir / "metadata.json").is_file()
    assert not [r for r in run.records() if r["type"] == "journal"]


async def test_an_injected_world_event_reaches_every_actor_at_the_next_beat(run_scene):
    def inject(session):
        session.subscribe(lambda e: session.inject_event("Thunder crashes outside")
                          if e.type == "beat" and e.beat == 1 else None)

    run = await run_scene(example_scene("the-apology", limits={"max_beats": 4}), isolation="b",
                          coordinator="C", before_run=inject)
    event = next(r for r in run.records() if r["type"] == "event")
    assert event["from"] == "operator" and event["beat"] == 2
    beat2 = [p for p in run.prompts() if p.get("beat") == 2 and p["purpose"] == "turn"]
    assert {p["to"] for p in beat2} == {"alice", "bob", "charlie"}
    assert all("[EVENT: Thunder crashes outside]" in p["request"]["messages"][-1]["content"] for p in beat2)
    assert "[EVENT: Thunder crashes outside]" in (run.dir / "transcript.txt").read_text()


async def test_a_director_note_to_one_actor_reaches_only_that_actor(run_scene):
    def note(session):
        session.subscribe(lambda e: session.add_note("Speak more softly", to="bob")
                          if e.type == "beat" and e.beat == 1 else None)

    run = await run_scene(example_scene("the-apology", limits={"max_beats": 4}), isolation="b",
                          coordinator="C", before_run=note)
    beat2 = {p["to"]: p["request"]["messages"][-1]["content"] for p in run.prompts()
             if p.get("beat") == 2 and p["purpose"] == "turn"}
    assert "DIRECTOR NOTE: Speak more softly" in beat2["bob"]
    assert "Speak more softly" not in beat2["alice"] + beat2["charlie"]
    assert any(r["type"] == "note" and r["target"] == "bob" for r in run.records())


async def test_pause_holds_the_scene_until_resume(run_scene):
    def pause_then_resume(session):
        async def later():
            await session.clock.sleep(30)
            session.resume()

        def on_event(event):
            if event.type == "beat" and event.beat == 1:
                session.pause()
            elif event.type == "pause":
                asyncio.get_running_loop().create_task(later())
        session.subscribe(on_event)

    run = await run_scene(example_scene("the-apology", limits={"max_beats": 4}), isolation="b",
                          coordinator="C", before_run=pause_then_resume)
    records = run.records()
    paused = next(r for r in records if r["type"] == "pause")
    resumed = next(r for r in records if r["type"] == "resume")
    beat2 = next(r for r in records if r["type"] == "beat" and r["beat"] == 2)
    assert resumed["t"] - paused["t"] >= 30
    assert beat2["t"] >= resumed["t"]


async def test_sequential_turns_go_to_the_one_addressed_else_the_next(run_scene):
    run = await run_scene(example_scene("morning-kitchen", limits={"max_beats": 8}), isolation="b", coordinator="C")
    turns = [r for r in run.records() if r["type"] == "beat"]
    speakers = [t["target"] for t in turns]
    assert speakers[0] == run.session.scene.initial_speaker
    assert all(a != b for a, b in zip(speakers, speakers[1:])), "two characters must alternate"
    routes = [r for r in run.records() if r["type"] == "route"]
    speeches = [r for r in run.records() if r["type"] == "speak" and r["action"] != "silent"]
    assert len(routes) == len(speeches)


async def test_journals_are_appended_to_each_characters_journal_with_a_dated_header(tmp_path):
    import shutil
    from helpers import CHARACTERS, run_session
    chars = tmp_path / "chars"
    shutil.copytree(CHARACTERS, chars)
    scene = example_scene("morning-kitchen", limits={"max_beats": 4})
    from promptdesk.core.clock import VirtualClock
    from promptdesk.core.casting.build import RunOptions, build_session
    session = build_session(scene, RunOptions(isolation="a", coordinator="C", characters_dirs=[chars],
                                              runs_root=tmp_path / "runs", cwd=tmp_path, seed=4, clock=VirtualClock()))
    result = await session.run()
    for slug in scene.characters:
        entry = (result.run_dir / "journals" / f"{slug}.md").read_text()
        journal = session.characters[slug].journal_path.read_text()
        assert entry.split("\n\n", 1)[1].strip() in journal
        assert f"— {scene.title}" in journal


async def test_the_same_seed_plays_the_same_scene(run_scene, tmp_path):
    scene = example_scene("the-apology", limits={"max_beats": 6})
    first = await run_scene(scene, isolation="b", coordinator="C", seed=9)
    second = await run_scene(scene, isolation="b", coordinator="C", seed=9)
    strip = lambda rs: [(r["type"], r["from"], r.get("text")) for r in rs if r["type"] in ("speak", "think")]
    assert strip(first.records()) == strip(second.records())


async def test_every_derived_file_can_be_rebuilt_from_events_jsonl_alone(run_scene, tmp_path):
    from datetime import datetime
    from promptdesk.core.record.recorder import read_events, write_derived

    run = await run_scene(example_scene("the-apology", limits={"max_beats": 6}), isolation="b", coordinator="C")
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    write_derived(rebuilt, read_events(run.dir), datetime.now())
    for name in ("events.json", "metadata.json", "journals/alice.md"):
        assert (rebuilt / name).read_text() == (run.dir / name).read_text(), name
    drop_dates = lambda text: [l for l in text.splitlines() if not l.startswith(("GENERATED", "**Date"))]
    for name in ("transcript.md", "transcript.txt"):
        assert drop_dates((rebuilt / name).read_text()) == drop_dates((run.dir / name).read_text()), name


async def test_a_torn_last_line_of_events_jsonl_is_skipped_on_read(run_scene):
    from promptdesk.core.record.recorder import read_events

    run = await run_scene(example_scene("the-apology", limits={"max_beats": 3}), isolation="b", coordinator="C")
    whole = read_events(run.dir)
    with open(run.dir / "events.jsonl", "a") as handle:
        handle.write('{"t": 9.9, "from": "alice", "type": "spe')
    assert read_events(run.dir) == whole


async def test_an_interruption_is_transcribed_as_an_interruption(run_scene):
    for seed in range(1, 30):
        run = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C", seed=seed)
        cuts = [e for e in run.events() if isinstance(e, SpeakEvent) and e.action == "interrupt"]
        if cuts:
            break
    assert cuts, "no interruption in 29 seeded scenes"
    transcript = (run.dir / "transcript.txt").read_text()
    name = run.session.state.cast[cuts[0].from_]
    assert f'{name} [INTERRUPT after "{cuts[0].interrupt_after}"' in transcript


def test_an_operators_direction_is_taken_up_to_its_limit_and_refused_past_it():
    """Up to `DIRECTION_MAX_CHARS` (surrounding blanks aside) a world event or note is queued, mended;
    one character more is refused, naming what it is, its length and the limit."""
    from promptdesk.core.protocol.bounded import DIRECTION_MAX_CHARS
    from promptdesk.core.protocol.lines import direction

    assert direction("  " + "a" * DIRECTION_MAX_CHARS + "\n", "world event") == "a" * DIRECTION_MAX_CHARS
    assert direction("   ", "director's note") == ""
    with pytest.raises(ValueError, match="the director's note is 20,001 characters; at most 20,000"):
        direction("b" * (DIRECTION_MAX_CHARS + 1), "director's note")
