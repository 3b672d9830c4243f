"""claude-code on long scenes: an isolation (b) thread through the real Claude Code CLI (bundled with
`claude-agent-sdk`) against the loopback server. After each window drop one new session starts and is
resumed from then on; the model sees its past replies as the engine keeps them (`thread_thinking`);
the output limit, thinking and effort follow the provider's settings, not the CLI's defaults."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed: make .venv/.test-installed")

from promptdesk.core.engine.actors import ThreadActor  # noqa: E402
from promptdesk.core.providers.claude_code import ClaudeCodeProvider  # noqa: E402
from loopback import LoopbackServer, Recorded, Reply  # noqa: E402

MODEL = "claude-sonnet-4-6"


def session_of(recorded: Recorded) -> str:
    return json.loads(recorded.body["metadata"]["user_id"])["session_id"]


def numbered(recorded: Recorded) -> Reply:
    """A well-formed reply whose thought and speech carry the turn they answer."""
    beat = re.findall(r"BEAT (\d+)", json.dumps(recorded.body["messages"][-1]))[-1]
    return Reply(text=f"<thinking>private thought {beat}</thinking>\n<speech>[TONE: calm] \"Line {beat}.\"</speech>")


async def play_thread(monkeypatch, turns: int, thread_thinking: str, **provider_options):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-claude-code-dummy")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with LoopbackServer(numbered) as server:
        provider = ClaudeCodeProvider(MODEL, base_url=server.url(), max_retries=0, **provider_options)
        actor = ThreadActor(SimpleNamespace(slug="alice", name="Alice"), "You are Alice.", provider, window=2,
                            thread_thinking=thread_thinking)
        sent = []
        try:
            for beat in range(turns):
                user = f"BEAT {beat}\n\nBob: \"Go on.\"\n\nRespond in character, or stay silent."
                request = actor.request(user, beat)
                sent.append(provider.as_sent(request))
                completion = await provider.complete(request)
                thinking, speech = re.fullmatch(r"<thinking>(.*)</thinking>\n<speech>(.*)</speech>",
                                                completion.text, re.S).groups()
                actor.remember(user, [], f"<thinking>{thinking}</thinking>\n<speech>{speech}</speech>", None)
        finally:
            await provider.aclose()
    return server.requests, sent


def replies(recorded: Recorded) -> str:
    return json.dumps([m for m in recorded.body["messages"] if m["role"] == "assistant"])


async def test_after_a_window_drop_one_new_session_starts_and_is_resumed_with_the_engine_s_thread(monkeypatch):
    requests, sent = await play_thread(monkeypatch, 6, "last")
    sessions = [session_of(r) for r in requests]
    assert len(requests) == 6
    # window 2: four turns in the first session, the drop before the fifth starts a second one, the sixth resumes it
    assert sessions[0] == sessions[1] == sessions[2] == sessions[3] != sessions[4] == sessions[5]
    assert len(requests[5].body["messages"]) == 3, "the resumed session sends its folded opening, a reply, the new turn"
    for recorded, as_sent in zip(requests, sent):  # prompts.jsonl records what the model received
        wire = [m["content"] if isinstance(m["content"], str) else "".join(b["text"] for b in m["content"])
                for m in recorded.body["messages"]]
        assert wire == [m.content for m in as_sent.messages]
    # thread_thinking: last: the replies re-sent are speech alone (the last thought follows what happened in the new update)
    assert all("private thought" not in replies(r) and "Line" in replies(r) for r in [*requests[1:4], requests[5]])
    assert "private thought 2" in json.dumps(requests[3].body["messages"][-1])
    # one thought, once: the resumed session holds the earlier updates as the engine keeps them
    assert "private thought 1" not in json.dumps(requests[3].body["messages"])
    body = requests[0].body  # the provider's settings, not the CLI's defaults (32000 tokens, thinking, effort high)
    assert body["max_tokens"] == 1024 and body["thinking"] == {"type": "disabled"}
    assert "effort" not in json.dumps(body.get("output_config") or {})


@pytest.mark.parametrize("thread_thinking", ["keep", "drop"])
async def test_past_thoughts_are_re_sent_only_as_thread_thinking_allows(monkeypatch, thread_thinking):
    requests, _ = await play_thread(monkeypatch, 3, thread_thinking)
    assert len({session_of(r) for r in requests}) == 1
    shown = {n for n in range(2) if f"private thought {n}" in json.dumps(requests[2].body["messages"])}
    assert shown == ({0, 1} if thread_thinking == "keep" else set())
    assert ("<thinking>" in replies(requests[2])) == (thread_thinking == "keep")


async def test_thinking_and_effort_are_sent_when_the_provider_asks(monkeypatch):
    requests, _ = await play_thread(monkeypatch, 1, "last", thinking_tokens=2048, effort="low")
    body = requests[0].body
    assert body["thinking"]["type"] != "disabled" and body["max_tokens"] == 1024 + 2048  # the CLI picks the kind
    assert body["output_config"]["effort"] == "low"
