"""Issue 10 §5 and issue 13 §3: requests stay bounded over a long scene, isolation (b) drops old turns
in blocks (byte-stable prefix between drops, a note says so), and `thread_thinking` decides which
past thoughts an actor's thread re-sends."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.engine.actors import LAST_THOUGHT_HEADING

from helpers import example_scene
from loopback import loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, scripted, turn  # noqa: F401  (fixture)

from promptdesk.core.engine.actors import DROPPED_NOTE

LONG = {"max_beats": 60, "soft_cap_per_character": 100, "hard_cap_per_character": 100}


def line(who, recorded):
    last = json.dumps(recorded.body["messages"][-1])
    if "BEAT " not in last:
        return "A short journal entry."
    beat = last.split("BEAT ")[1].split(" ")[0]
    return turn(f'[TONE: calm] "Beat {beat} from {who}: go on, I am listening."', f"Private thought {beat} of {who}.")


async def long_run(run_scene, loopback, isolation: str, **scene):
    loopback.default = scripted(line)
    cast = remote_cast(loopback, "alice", "bob", provider="openai-compatible", model="llama3")
    run = await run_scene(example_scene("the-apology", characters=["alice", "bob"], perspectives={}, cast=cast,
                                        limits=LONG, **scene), isolation=isolation, coordinator="C")
    assert run.result.close_reason == "max_beats_exceeded" and run.result.beats == 60
    return run


def turns_of(run, slug: str) -> list[dict]:
    return [p for p in run.prompts() if p["to"] == slug and p["purpose"] == "turn"]


def assert_flat(run, isolation: str) -> None:
    """Request sizes over beats 40-59 are no larger than over beats 20-39."""
    sizes = {p["beat"]: len(json.dumps(p["request"])) for p in turns_of(run, "bob")}
    middle = max(v for b, v in sizes.items() if 20 <= b < 40)
    late = max(v for b, v in sizes.items() if 40 <= b < 60)
    print(f"isolation {isolation}: request size beat 5 {sizes[5]}, max 20-39 {middle}, max 40-59 {late}")
    assert late <= middle * 1.05, "requests keep growing after the window has filled"


async def test_isolation_a_sends_the_last_ten_lines_witnessed_and_stays_flat(run_scene, loopback):
    run = await long_run(run_scene, loopback, "a")
    assert_flat(run, "a")
    content = turns_of(run, "bob")[-1]["request"]["messages"][0]["content"]
    witnessed = content.split("\n\nNOW:")[0].splitlines()
    assert witnessed[0].startswith("WHAT YOU HAVE WITNESSED RECENTLY (the last 10 lines")
    assert len(witnessed) == 11 and "Beat 58 from alice" in content and "Beat 40 from" not in content


async def test_isolation_b_drops_old_turns_in_blocks_with_a_note_and_stays_flat(run_scene, loopback):
    run = await long_run(run_scene, loopback, "b", thread_thinking="keep")
    assert_flat(run, "b")
    requests = [p["request"]["messages"] for p in turns_of(run, "bob")]
    breaks = [i for i, (before, after) in enumerate(zip(requests, requests[1:]), 1)  # the newest update aside
              if after[:len(before) - 1] != before[:-1]]
    assert breaks and all(later - earlier >= 10 for earlier, later in zip(breaks, breaks[1:])), \
        "the cached prefix changed between drops"
    assert len(breaks) <= 6
    for messages in requests[breaks[0]:]:
        assert messages[0]["content"].startswith(DROPPED_NOTE)
        assert 21 <= len(messages) <= 39
    assert not any(DROPPED_NOTE in json.dumps(m) for m in requests[:breaks[0]])


@pytest.mark.parametrize(("mode", "kept"), [("keep", "all"), ("last", "last"), ("drop", "none")])
async def test_thread_thinking_decides_which_past_thoughts_are_resent(run_scene, loopback, mode, kept):
    loopback.default = scripted(line)
    cast = remote_cast(loopback, "alice", "bob", provider="openai-compatible", model="llama3")
    scene = example_scene("the-apology", characters=["alice", "bob"], perspectives={}, cast=cast,
                          limits={"max_beats": 5}, thread_thinking=mode)
    run = await run_scene(scene, isolation="b", coordinator="C")
    last = turns_of(run, "bob")[-1]["request"]["messages"]
    replies = [m["content"] for m in last if m["role"] == "assistant"]
    with_thinking = [("<thinking>" in r) for r in replies]
    assert len(replies) >= 3 and all("<speech>" in r for r in replies)
    assert with_thinking == {"all": [True] * len(replies), "none": [False] * len(replies),
                             "last": [False] * len(replies)}[kept]
    with_thought = f"\n\n{LAST_THOUGHT_HEADING}\n" in last[-1]["content"]
    assert with_thought == (kept == "last"), "under `last` the newest thought follows what happened in the update"
    if kept == "last":  # ... and it is the thought bob had just before, not an older one
        thoughts = [e.text for e in run.events() if e.type == "think" and e.from_ == "bob"]
        assert thoughts[-2] in last[-1]["content"] and thoughts[-3] not in last[-1]["content"]
    assert f"- thread_thinking: {mode} (" in (run.dir / "notes.md").read_text()
