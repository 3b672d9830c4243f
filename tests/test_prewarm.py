"""Provider SDKs are imported and their clients built before the first beat, off the event loop."""

from __future__ import annotations

import threading

from helpers import example_scene
from loopback import CANARY, Reply, loopback  # noqa: F401 - fixture
from test_scene_faults import remote_cast, turn


async def test_every_client_is_built_before_beat_0_in_a_worker_thread(run_scene, loopback, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    loopback.default = Reply(text=turn('[TONE: calm] "Go on."'))
    cast = {**remote_cast(loopback, "alice", "bob"), **remote_cast(loopback, "charlie", provider="openai",
                                                                   model="gpt-4o-mini")}
    seen: dict[str, object] = {}
    built_on: list[str] = []

    def watch(session) -> None:
        for provider in {id(a.provider): a.provider for a in session.actors.values()}.values():
            original = provider._build_client

            def build(original=original):
                built_on.append(threading.current_thread().name)
                return original()
            provider._build_client = build

        def on_event(event) -> None:
            if event.type == "beat" and event.beat == 0:
                seen.update({slug: a.provider._client for slug, a in session.actors.items()})
                seen["hits"] = loopback.hits
        session.subscribe(on_event)

    await run_scene(example_scene("the-apology", cast=cast, limits={"max_beats": 2}), isolation="b",
                    coordinator="C", before_run=watch)
    assert seen["hits"] == 0
    assert all(seen[slug] is not None for slug in ("alice", "bob", "charlie")), seen
    assert len(built_on) == 2, "one client per distinct provider"
    assert threading.main_thread().name not in built_on
