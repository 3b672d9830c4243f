"""A collaboration's 2–3K-token window holds with a reply longer than the whole budget (spec 001 §5,
§13: "Hard-limit transcript window"), and the work such a reply hands on still reaches the next
participant: cut, never dropped (spec 001 §8A, context sharing). Real SDKs against the loopback server."""

from __future__ import annotations

import json

from promptdesk.core.formats.collaborate.context import Item, tokens, window
from loopback import loopback  # noqa: F401  (fixture)
from test_collaborate import collab_scene, envelope, script, who
from helpers import run_session
from test_scene_faults import keys  # noqa: F401  (fixture)

LONG = "Review of avg(): divides by zero on an empty list. " + "Detail line of the review. " * 1500


def test_the_newest_message_is_cut_to_fit_not_dropped_for_the_task_after_it():
    items = [Item("claude", "older draft"), Item("gpt", "G" * 40_000), Item("router", "Check my review.", to="claude")]
    kept = window(items, token_budget=2500)
    assert [i.role for i in kept] == ["gpt", "router"]
    assert kept[0].text.startswith("GGG") and kept[0].text.endswith(" …")
    assert sum(tokens(i.line()) for i in kept) <= 2500


async def test_a_reply_longer_than_the_window_reaches_the_other_participant_cut(tmp_path, loopback):
    script(loopback, gpt=[envelope(LONG, "claude", "Check my review.")], claude=[envelope("Agreed.", final=True)])
    scene = collab_scene(loopback, goal="Review this function: def avg(xs): return sum(xs)/len(xs)", first="gpt")
    run = await run_session(tmp_path, scene, isolation="a", coordinator="C")
    assert run.result.close_reason == "final"
    to_claude = next(r for r in loopback.requests if who(r) == "claude")
    text = to_claude.body["messages"][-1]["content"]
    assert "[gpt] Review of avg(): divides by zero on an empty list." in text
    assert tokens(text) <= 2500 + 200


async def test_under_isolation_b_a_long_own_reply_leaves_the_thread_inside_the_budget(tmp_path, loopback):
    script(loopback, gpt=[envelope(LONG, "claude", "Check my review."), envelope("Done.", final=True)],
           claude=[envelope("Two remarks on the review.", "gpt", "Finish it.")])
    scene = collab_scene(loopback, goal="Review this function: def avg(xs): return sum(xs)/len(xs)", first="gpt")
    run = await run_session(tmp_path, scene, isolation="b", coordinator="C")
    assert run.result.close_reason == "final"
    second_to_gpt = [r for r in loopback.requests if who(r) == "gpt"][1]
    sent = [m["content"] for m in second_to_gpt.body["messages"] if m["role"] != "system"]
    assert tokens(json.dumps(sent, ensure_ascii=False)) <= 2500 + 200
    assert "Two remarks on the review." in sent[-1]
    assert sent[-1].startswith("(Earlier lines of this scene were dropped"), "its own last reply was dropped: said"


def test_a_world_event_longer_than_the_window_still_leaves_the_window_inside_the_budget():
    items = [Item("gpt", "G" * 40_000), Item("router", "Check it.", to="claude"), Item("user", "[EVENT: " + "E" * 20_000 + "]")]
    assert sum(tokens(i.line()) for i in window(items, token_budget=2500)) <= 2500
