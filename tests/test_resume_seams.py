"""The seam of a resumed run splits `events.jsonl` at its line ends only: a record whose text holds
U+2028, U+0085 or another character `str.splitlines` breaks at is kept whole, never cut or lost."""

from __future__ import annotations

from promptdesk.core.casting.resume import prepare
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.recorder import read_events
from helpers import example_scene, run_session
from loopback import LoopbackServer, Reply
from test_resume import assert_nothing_twice, kill_mid_beat
from test_scene_faults import remote_cast, turn


async def test_a_thought_holding_a_line_separator_survives_a_resume_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    reply = Reply(text=turn('[TONE: calm] "Go on."', "Line one\u2028line two\x85line three"))
    with LoopbackServer(reply) as server:
        scene = example_scene("the-apology", limits={"max_beats": 5},
                              cast=remote_cast(server, "alice", "bob", "charlie", provider="openai-compatible",
                                               model="llama3"))
        run = await run_session(tmp_path, scene, isolation="b", coordinator="C")
        before = [(e.type, e.from_, e.beat) for e in read_events(run.dir) if e.type in ("think", "speak")]
        kill_mid_beat(run.dir, 3)
        session = prepare(run.dir, server.url("/v1"))
        session.clock = VirtualClock()
        await session.run()
    after = [(e.type, e.from_, e.beat) for e in read_events(run.dir) if e.type in ("think", "speak")]
    assert [e for e in after if e[2] < 3] == [e for e in before if e[2] < 3], "nothing before the cut is lost"
    assert sorted(after) == sorted(before), "the replayed beats play as before (arrival order aside)"
    assert all("\u2028" in e.text for e in read_events(run.dir) if e.type == "think")
    assert_nothing_twice(run.dir)
