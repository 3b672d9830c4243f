"""claude-code leaves nothing behind, even after SIGKILL: its private folders live in one folder named
for the process, which the next start (a resume, another run) removes once that process is gone, and
its CLI processes die with their parent. The CLI's own retries are off: Promptdesk's one retry layer
decides. The CLI is faked at the process edge where a real one is not needed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed: make .venv/.test-installed")

from promptdesk.core.errors import ProviderError  # noqa: E402
from promptdesk.core.providers.base import ChatMessage, Request  # noqa: E402
from promptdesk.core.providers.claude_code import ClaudeCodeProvider  # noqa: E402
from helpers import ROOT  # noqa: E402
from loopback import LoopbackServer, Reply  # noqa: E402

MODEL = "claude-sonnet-4-6"
REQUEST = Request(to="alice", system="You are Alice. Your secret: the ledger.", messages=[ChatMessage(role="user", content="Speak.")])


def waiting_cli(folder: Path) -> Path:
    """A stand-in for the CLI: it writes its pid and environment (whole, by a rename, so a reader that sees
    the file never sees it half written), reads its input and never answers."""
    script = folder / "claude-waits"
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      f"open({str(folder / 'cli.part')!r}, 'w').write(json.dumps({{'pid': os.getpid(), 'env': dict(os.environ)}}))\n"
                      f"os.replace({str(folder / 'cli.part')!r}, {str(folder / 'cli.json')!r})\n"
                      "for _ in sys.stdin:\n    pass\n")
    script.chmod(0o700)
    return script


def gone(pid: int, within_s: float = 15) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie still answers kill(0): it is dead once its state says so
            if (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.02)
    return False


CHILD = """
import asyncio, sys
sys.path.insert(0, {root!r})
from promptdesk.core.providers.claude_code import ClaudeCodeProvider
from promptdesk.core.providers.base import ChatMessage, Request
provider = ClaudeCodeProvider({model!r}, cli_path={cli!r}, timeout_s=600, first_byte_timeout_s=600, max_retries=0)
print(provider._folder, flush=True)
asyncio.run(provider.complete(Request(to="alice", system="You are Alice. Your secret: the ledger.",
                                      messages=[ChatMessage(role="user", content="Speak.")])))
"""


def test_a_killed_process_leaves_no_cli_running_and_the_next_start_removes_its_files(tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    cli = waiting_cli(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), model=MODEL, cli=str(cli))],
                             stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temp),
                                                                     "ANTHROPIC_API_KEY": "sk-test-dummy"})
    try:
        folder = Path(child.stdout.readline().strip())
        deadline = time.monotonic() + 60
        while not (tmp_path / "cli.json").exists():
            assert child.poll() is None and time.monotonic() < deadline, "the CLI never started"
            time.sleep(0.02)
        started = json.loads((tmp_path / "cli.json").read_text())
        assert folder.is_dir() and folder.parent.parent == temp and any((folder / "briefings").iterdir())
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert gone(started["pid"]), "the CLI process died with its parent"
    assert folder.is_dir(), "a killed process could not clean up"
    assert oct(folder.parent.stat().st_mode & 0o777) == "0o700"
    again = ClaudeCodeProvider(MODEL, cli_path=str(cli), api_key="sk-test-dummy")
    try:
        assert not folder.exists(), "the next start removed what the killed process left"
        assert again._folder.is_dir() and again._folder.name.startswith(f"{os.getpid()}-")
    finally:
        import asyncio
        asyncio.run(again.aclose())
    assert not again._folder.exists()


def test_a_folder_of_a_live_process_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first = ClaudeCodeProvider(MODEL, api_key="sk-test-dummy")
    live = first._folder.parent / f"{os.getppid()}-someone"
    live.mkdir()
    second = ClaudeCodeProvider(MODEL, api_key="sk-test-dummy")
    assert first._folder.is_dir() and live.is_dir() and second._folder != first._folder


async def test_the_cli_is_told_not_to_retry_nor_fall_back(tmp_path):
    provider = ClaudeCodeProvider(MODEL, cli_path=str(waiting_cli(tmp_path)), first_byte_timeout_s=0.5, max_retries=0)
    try:
        with pytest.raises(ProviderError):
            await provider.complete(REQUEST)
    finally:
        await provider.aclose()
    env = json.loads((tmp_path / "cli.json").read_text())["env"]
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0" and env["CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK"] == "1"
    assert env["CLAUDE_CODE_NONSTREAMING_TIMEOUT_RETRIES"] == "0"


async def test_a_stream_reset_mid_answer_is_sent_once_by_the_real_cli(monkeypatch):
    """Through the CLI bundled with the SDK: a stream cut after its first delta is not sent again by the
    CLI (no retry, no fallback without streaming); Promptdesk's own retries are off here too."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    with LoopbackServer(Reply(text="one two three four", deltas=4, drop_after_deltas=1)) as server:
        provider = ClaudeCodeProvider(MODEL, base_url=server.url(), max_retries=0, timeout_s=60)
        try:
            with pytest.raises(ProviderError):
                await provider.complete(REQUEST, lambda text: None, lambda: None)
        finally:
            await provider.aclose()
        messages = [r for r in server.requests if r.path.endswith("/v1/messages")]
    assert len(messages) == 1, f"the CLI sent the request {len(messages)} times"


def _reply_frames(text: str, stop: str, usage: dict | None = None) -> list[bytes]:
    """A whole Messages stream whose reply ends with `stop`."""
    def sse(event: str, data: dict) -> bytes:
        return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode()
    return [sse("message_start", {"message": {"id": "m", "type": "message", "role": "assistant", "model": MODEL,
                                              "content": [], "stop_reason": None, "stop_sequence": None,
                                              "usage": {"input_tokens": 20, "output_tokens": 1} if usage is None
                                              else usage}}),
            sse("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            sse("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}),
            sse("content_block_stop", {"index": 0}),
            sse("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 9} if usage is None else usage}),
            sse("message_stop", {})]


async def cli_completes(monkeypatch, *replies: Reply):
    """One streamed call through the real CLI against the loopback server: (completion, what was
    shown, the requests the server saw)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    with LoopbackServer() as server:
        server.script(*replies)
        provider = ClaudeCodeProvider(MODEL, base_url=server.url(), max_retries=0, timeout_s=60)
        shown: list[str] = []
        try:
            completion = await provider.complete(REQUEST, shown.append, shown.clear)
        finally:
            await provider.aclose()
        return completion, "".join(shown), [r for r in server.requests if r.path.endswith("/v1/messages")]


async def test_a_reply_cut_at_its_token_limit_is_the_first_reply_said_to_be_cut(monkeypatch, caplog):
    """The CLI answers a reply that stopped at `max_tokens` by asking the model to go on, by itself
    (it cannot be turned off): the answer is the first reply, said to be cut, never the replies
    stitched together; every call it made is counted."""
    completion, shown, sent = await cli_completes(
        monkeypatch, Reply(raw=_reply_frames("<thinking>a long", "max_tokens")),
        Reply(raw=_reply_frames("<thinking>ANOTHER reply", "end_turn")))
    assert len(sent) == 2, "the CLI's recovery is what this test is about"
    assert completion.text == shown == "<thinking>a long" and completion.truncated
    assert completion.usage.input_tokens == 40 and completion.usage.output_tokens > 9
    assert any("asked the model to go on 1 more times" in r.getMessage() for r in caplog.records)


async def test_a_reply_cut_whose_recovery_the_cli_gives_up_is_still_the_cut_reply(monkeypatch):
    """After its last try at going on, the CLI reports an error naming its own setting: the call
    still answered, cut at its limit."""
    completion, shown, sent = await cli_completes(monkeypatch, *[Reply(raw=_reply_frames("<thinking>long", "max_tokens"))] * 6)
    assert len(sent) > 2 and completion.text == shown == "<thinking>long" and completion.truncated


async def test_a_reply_that_filled_the_context_window_is_a_failed_call(monkeypatch):
    with pytest.raises(ProviderError) as caught:
        await cli_completes(monkeypatch, Reply(raw=_reply_frames("<thinking>a long", "model_context_window_exceeded")),
                            Reply(raw=_reply_frames("<thinking>ANOTHER reply", "end_turn")))
    assert "context window was full" in caught.value.message and not caught.value.retryable


async def test_a_server_that_sends_no_usage_leaves_the_usage_unknown_not_zero(monkeypatch):
    completion, _, _ = await cli_completes(monkeypatch, Reply(raw=_reply_frames("Hi.", "end_turn", usage={})))
    assert completion.text == "Hi." and completion.usage.reported is False


async def test_a_404_from_a_base_url_ending_in_v1_names_the_url_to_try(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    with LoopbackServer(Reply(status=404, error_message="Not Found")) as server:
        provider = ClaudeCodeProvider(MODEL, base_url=server.url("/v1"), max_retries=0, timeout_s=60)
        try:
            with pytest.raises(ProviderError) as caught:
                await provider.complete(REQUEST)
        finally:
            await provider.aclose()
    assert caught.value.status == 404 and "which the Anthropic SDK adds itself" in caught.value.message
    assert f"try {server.url()}" in caught.value.message


async def test_a_refused_reply_is_a_refusal_as_on_the_anthropic_provider(monkeypatch):
    """Claude's `stop_reason: refusal`, which the CLI reports as an error of its own: the model's
    answer is a refusal, its words apart from the (empty) text and taken back from the console."""
    completion, shown, sent = await cli_completes(monkeypatch, Reply(raw=_reply_frames("<thinking>I will explain",
                                                                                       "refusal")))
    assert (completion.text, completion.refusal, shown) == ("", "<thinking>I will explain", "")
    assert len(sent) == 1 and not completion.truncated
