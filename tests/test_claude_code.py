"""`--provider claude-code`: actors played by real Claude Code CLI processes (the optional extra).

Each test runs the CLI bundled with `claude-agent-sdk` against the loopback Anthropic server, with a
dummy key and a temporary HOME: no network, nothing written to the real `~/.claude`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed: make .venv/.test-installed")

from promptdesk.core.errors import InvalidConfig, ProviderError  # noqa: E402
from promptdesk.core.providers.claude_code import CLI_SYSTEM_LINE  # noqa: E402
from helpers import make_scene, run_session  # noqa: E402
from loopback import LoopbackServer, Recorded, Reply  # noqa: E402

MODEL = "claude-sonnet-4-6"
_NAME = re.compile(r"You are (\w+)\. Also present")


def speaker(recorded: Recorded) -> str:
    """The actor a request is for, read from the briefing the server received."""
    system = " ".join(block["text"] for block in recorded.body["system"])
    return _NAME.search(system).group(1) if _NAME.search(system) else "?"


def in_character(recorded: Recorded) -> Reply:
    """A well-formed reply whose thinking carries a marker private to the actor it answers."""
    name = speaker(recorded)
    return Reply(text=f"<thinking>secret plan of {name}: tell no one about the ledger</thinking>"
                      f'<speech>[TONE: calm] "{name} here, listening."</speech>')


def cli_children() -> list[str]:
    """Command lines of live Claude Code processes started by this test process."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and "claude" in cmd:
            found.append(cmd)
    return found


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-claude-code-dummy")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


async def play(tmp_path, server: LoopbackServer, isolation: str, **scene):
    data = {"characters": ["alice", "bob"], "limits": {"max_beats": 2}, **scene}
    return await run_session(tmp_path, make_scene(**data), isolation=isolation, coordinator="C",
                             provider="claude-code", model=MODEL, base_url=server.url())


@pytest.mark.parametrize("isolation", ["a", "b"])
async def test_a_scene_plays_through_the_real_cli_and_the_record_is_what_the_model_saw(tmp_path, key, isolation):
    with LoopbackServer(in_character) as server:
        run = await play(tmp_path, server, isolation)
    turns = [r for r in server.requests if speaker(r) != "?"]
    assert {speaker(r) for r in turns} == {"Alice", "Bob"}
    spoken = [e for e in run.events() if e.type == "speak"]
    assert {e.from_ for e in spoken} == {"alice", "bob"} and all("listening" in e.text for e in spoken)
    recorded = [p for p in run.prompts() if p["purpose"] == "turn"]
    for prompt in recorded:  # the fixed CLI line is in the record, as sent
        assert prompt["request"]["system"].startswith(CLI_SYSTEM_LINE)
    for request in turns:  # no tools were offered, and the briefing came after the CLI's own line
        assert not request.body.get("tools")
        assert request.body["system"][0]["text"] == CLI_SYSTEM_LINE
    for request in turns:  # isolation, audited on what the server received
        wire = json.dumps(request.body)
        other = "Bob" if speaker(request) == "Alice" else "Alice"
        assert f"secret plan of {other}" not in wire
    alice_turns = [r for r in turns if speaker(r) == "Alice" and "BEAT" in json.dumps(r.body["messages"][-1])]
    assert len(alice_turns) == 2  # she opens at beat 0 and answers at beat 1
    thread = alice_turns[-1].body["messages"]
    if isolation == "b":  # beat 1 resumed Alice's session: it carries her own earlier turn
        assert "secret plan of Alice" in json.dumps(thread) and len(thread) == 3
    else:  # a fresh invocation per turn: one message, nothing she said before
        assert len(thread) == 1 and "secret plan of Alice" not in json.dumps(thread)
    assert "claude-code" in (run.dir / "notes.md").read_text()


async def test_a_failing_call_is_a_system_line_with_its_reason(tmp_path, key):
    with LoopbackServer(Reply(status=401, error_message="invalid x-api-key")) as server:
        run = await play(tmp_path, server, "a", limits={"max_beats": 1})
    failures = [e for e in run.events() if e.type == "system" and e.target]
    assert failures and all("401" in (e.reason or "") for e in failures)
    assert not [e for e in run.events() if e.type == "speak" and e.action != "silent"]


async def test_a_stop_mid_beat_leaves_no_cli_process_behind(tmp_path, key):
    arrived = threading.Event()

    def slow(recorded: Recorded) -> Reply:
        arrived.set()
        return Reply(text='<thinking>t</thinking><speech>"late"</speech>', delay_s=20)

    with LoopbackServer(slow) as server:
        def stop_when_called(session):
            async def watch():
                while not arrived.is_set():
                    await asyncio.sleep(0.01)
                session.stop()
            asyncio.get_running_loop().create_task(watch())
        run = await run_session(tmp_path, make_scene(characters=["alice", "bob"]), isolation="b", coordinator="C",
                                provider="claude-code", model=MODEL, base_url=server.url(),
                                before_run=stop_when_called)
        for _ in range(200):  # the transport terminates its process; give it a moment to be reaped
            if not cli_children():
                break
            await asyncio.sleep(0.05)
    assert run.result.close_reason == "stop"
    assert cli_children() == []


async def test_a_parallel_beat_never_runs_more_cli_processes_than_configured(tmp_path, key):
    seen: list[int] = []

    def count(recorded: Recorded) -> Reply:
        seen.append(len(cli_children()))
        return in_character(recorded)

    with LoopbackServer(count) as server:
        scene = make_scene(characters=["alice", "bob", "charlie"], limits={"max_beats": 1},
                           provider={"name": "claude-code", "model": MODEL, "max_processes": 2})
        await run_session(tmp_path, scene, isolation="a", coordinator="C", base_url=server.url())
    assert seen and max(seen) <= 2


def test_choosing_claude_code_without_a_model_says_what_to_set(key):
    from promptdesk.core.casting.pool import make_provider
    from promptdesk.core.casting.scene_file import ProviderSpec

    with pytest.raises(InvalidConfig, match="needs a model"):
        make_provider(ProviderSpec(name="claude-code"))


async def test_a_stream_cut_mid_answer_is_retried_and_a_cut_that_lasts_is_billed_unknown(tmp_path, key):
    """The CLI's own retries are off, so a connection lost mid-answer (the CLI reports ECONNRESET with
    no status) is Promptdesk's to retry, as the anthropic provider retries a dropped stream; a server
    that cuts every attempt fails the call with its usage unknown (the model had begun), never $0."""
    from promptdesk.core.providers.base import ChatMessage, Request
    from promptdesk.core.providers.claude_code import ClaudeCodeProvider

    line = '<thinking>t</thinking><speech>[TONE: calm] "Alice here."</speech>'
    request = Request(to="alice", system="You are Alice. Also present: Bob.", beat=0,
                      messages=[ChatMessage(role="user", content="BEAT 0. Speak.")])
    with LoopbackServer() as server:
        server.script(Reply(text=line, deltas=4, drop_after_deltas=2), Reply(text=line))
        provider = ClaudeCodeProvider(MODEL, base_url=server.url(), max_retries=2)
        provider._sleep = lambda delay: asyncio.sleep(0)  # noqa: SLF001 - no backoff wait in a test
        try:
            answered = await provider.complete(request, lambda piece: None)
        finally:
            await provider.aclose()
        assert answered.text == line and len(server.requests) == 2
    with LoopbackServer(Reply(text=line, deltas=4, drop_after_deltas=2)) as server:
        provider = ClaudeCodeProvider(MODEL, base_url=server.url(), max_retries=0)
        try:
            with pytest.raises(ProviderError) as failed:
                await provider.complete(request, lambda piece: None)
        finally:
            await provider.aclose()
        assert failed.value.usage.reported is False  # type: ignore[attr-defined]
