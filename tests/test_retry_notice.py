"""A retry shows while it waits: an actor's call answered 429 publishes a live `retry` delta naming the
retry and its cause, the console keeps that actor waited on and says why on the Session panel."""

from __future__ import annotations

import pytest

from helpers import example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import remote_cast, scripted, turn


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


async def test_a_429_retried_in_a_turn_is_published_live_for_that_actor(run_scene, loopback):
    from promptdesk.core.record.events import DeltaEvent

    seen = {"bob": 0}

    def answer(who, recorded):
        if who == "bob" and seen["bob"] == 0:
            seen["bob"] += 1
            return Reply(status=429, headers={"retry-after-ms": "20"}, error_message="slow down")
        return turn('[TONE: calm] "Fine."')

    loopback.default = scripted(answer)
    cast = remote_cast(loopback, "alice", "bob", "charlie", provider="openai", model="gpt-4.1-mini", max_retries=2)
    scene = example_scene("the-apology", cast=cast, limits={"max_beats": 2})
    retries: list[DeltaEvent] = []
    run = await run_scene(scene, isolation="a", coordinator="C", before_run=lambda s: s.subscribe(
        lambda event: retries.append(event) if isinstance(event, DeltaEvent) and event.channel == "retry" else None))
    assert [(e.from_, e.beat) for e in retries] == [("bob", 1)]
    assert retries[0].text.startswith("retry 1/2 in 0 s: HTTP 429"), retries[0].text
    assert "slow down" in retries[0].text and "test-key" not in retries[0].text
    assert not [r for r in run.records() if r["type"] == "delta"], "a retry's notice is live only"


def test_the_panel_says_who_is_retried_and_why_at_once_until_the_answer_comes():
    from promptdesk.core.record.events import DeltaEvent, GenericEvent
    from promptdesk.tui.snapshot import StageState
    from promptdesk.tui.waits import Waits
    from promptdesk.tui.widgets.state_panel import render_state

    waits = Waits(["alice", "bob"])
    waits.feed([GenericEvent(t=0.0, **{"from": "coordinator"}, type="beat", text="Beat 0", beat=0),
                DeltaEvent(t=0.5, **{"from": "bob"}, channel="retry", beat=0,
                           text="retry 1/3 in 4 s: HTTP 429: rate_limit_error: slow down")])
    assert waits.slow(1.0) == {"bob": 1.0}, "a wait held up by a retry shows at once, not after 5 s"
    state = StageState(cast={"alice": "Alice", "bob": "Bob"}, slow=waits.slow(1.0), retrying=dict(waits.why),
                       status="running")
    rows = render_state(state, 32).plain.splitlines()
    at = rows.index("  Bob        waiting 1 s")
    assert rows[at + 1].startswith("    retry 1/3 in 4 s: HTTP 429") and all(len(r) <= 32 for r in rows), rows
    waits.feed([DeltaEvent(t=4.6, **{"from": "bob"}, channel="speech", text='"Fi', beat=0)])
    assert "bob" not in waits.slow(5.0) and waits.why == {}, "the answer streaming ends the wait and its notice"


async def test_a_collaboration_s_unstreamed_reply_says_its_retry_too(run_scene, loopback):
    """A collaboration's replies are not streamed: the retry of one is told all the same, for that participant."""
    import json

    from promptdesk.core.record.events import DeltaEvent
    from test_collaborate import collab_scene, envelope

    seen = {"n": 0}

    def answer(recorded):
        seen["n"] += 1
        if seen["n"] == 1:
            return Reply(status=503, headers={"retry-after-ms": "20"}, error_message="overloaded")
        return Reply(text=json.dumps(envelope("Once upon a time.", final=True)))

    loopback.default = answer
    cast = remote_cast(loopback, "gpt", "claude", provider="openai", model="gpt-4o-mini", max_retries=2)
    retries: list[DeltaEvent] = []
    run = await run_scene(collab_scene(loopback, first="claude", cast=cast), isolation="a", coordinator="C",
                          before_run=lambda s: s.subscribe(lambda e: retries.append(e)
                                                           if isinstance(e, DeltaEvent) and e.channel == "retry" else None))
    assert run.result.close_reason != "provider-error"
    assert [(e.from_, e.text.split(":")[0]) for e in retries] == [("claude", "retry 1/2 in 0 s")], retries
    assert "HTTP 503" in retries[0].text and "overloaded" in retries[0].text
