"""Provider SDKs are imported and their clients built before the first beat, off the event loop; then
each actor's calls go through a client (a connection) of its own, built on the TLS context prepared then."""

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
    used: dict[str, set[int]] = {}

    def watch(session) -> None:
        for provider in {id(a.provider): a.provider for a in session.actors.values()}.values():
            original = provider._build_client

            def build(original=original, **options):
                built_on.append(threading.current_thread().name)
                return original(**options)
            provider._build_client = build

        def on_event(event) -> None:
            if event.type == "call":
                used.setdefault(event.target, set()).add(id(session.actors[event.target].provider._clients[event.target]))
            if event.type == "beat" and event.beat == 0:
                seen.update({slug: a.provider._client for slug, a in session.actors.items()})
                seen.update({f"{slug} tls": a.provider._tls for slug, a in session.actors.items()})
                seen["hits"], seen["built"] = loopback.hits, list(built_on)
        session.subscribe(on_event)

    run = await run_scene(example_scene("the-apology", cast=cast, limits={"max_beats": 2}), isolation="b",
                          coordinator="C", before_run=watch)
    assert seen["hits"] == 0
    assert all(seen[slug] is not None and seen[f"{slug} tls"] for slug in ("alice", "bob", "charlie")), seen
    assert len(seen["built"]) == 2, "one client per distinct provider, and its TLS context, before beat 0"
    assert threading.main_thread().name not in seen["built"]
    # then each actor's calls go through a client of its own (its own connection), on the shared TLS context
    assert len(built_on) == 2 + 3
    assert all(r["ok"] for r in run.records() if r["type"] == "call")
    assert {slug: len(ids) for slug, ids in used.items()} == {"alice": 1, "bob": 1, "charlie": 1}
    assert len({next(iter(ids)) for ids in used.values()}) == 3
