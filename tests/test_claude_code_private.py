"""`--provider claude-code` keeps each actor's briefing off every command line (a 0600 file, the
messages on standard input), passes a briefing of any size, and fails an attempt that shows no sign
of an answer within the first-byte timeout, then retries it.

The real CLI bundled with `claude-agent-sdk` runs against the loopback server; the first-byte test
runs a stand-in CLI that starts and never answers (a connection reset before the answer looks the
same to Promptdesk: the CLI never reports it).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk", reason="the claude-code extra is not installed: make .venv/.test-installed")

from promptdesk.core.errors import ProviderError  # noqa: E402
from promptdesk.core.providers.base import ChatMessage, Request  # noqa: E402
from promptdesk.core.providers.claude_code import ClaudeCodeProvider  # noqa: E402
from promptdesk.core.record.private import read_private  # noqa: E402
from helpers import make_scene, run_session  # noqa: E402
from loopback import FakeSleep, LoopbackServer, Recorded, Reply  # noqa: E402
from test_claude_code import MODEL, in_character  # noqa: E402


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-claude-code-dummy")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def descendants() -> dict[int, list[str]]:
    """argv of every live process descended from this one (children, grandchildren...)."""
    parents, argv = {}, {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat_line = (proc / "stat").read_text()
            argv[int(proc.name)] = [a.decode(errors="replace") for a in (proc / "cmdline").read_bytes().split(b"\0") if a]
        except OSError:
            continue
        parents[int(proc.name)] = int(stat_line.rsplit(")", 1)[1].split()[1])
    found = {}
    for pid in argv:
        up = parents.get(pid)
        while up and up != os.getpid():
            up = parents.get(up)
        if up == os.getpid():
            found[pid] = argv[pid]
    return found


def private_pieces(run_dir: Path) -> list[str]:
    """Lines of every actor's private material (profile, journal, perspective, briefing) long enough
    to be unmistakable."""
    pieces = []
    for member in read_private(run_dir)["cast"].values():
        for field in ("profile", "journal", "perspective", "briefing"):
            pieces += [line.strip() for line in (member.get(field) or "").splitlines() if len(line.strip()) >= 24]
    return pieces


async def test_no_actor_s_private_material_is_on_any_child_process_command_line(tmp_path):
    seen: list[list[str]] = []
    files: list[tuple[int, int, str]] = []
    folders: set[Path] = set()

    def watch(recorded: Recorded) -> Reply:
        for argv in descendants().values():
            seen.append(argv)
            if "--system-prompt-file" in argv:
                path = Path(argv[argv.index("--system-prompt-file") + 1])
                files.append((stat.S_IMODE(path.stat().st_mode), stat.S_IMODE(path.parent.stat().st_mode),
                              path.read_text()))
                folders.add(path.parent)
        return in_character(recorded)

    with LoopbackServer(watch) as server:
        scene = make_scene(characters=["alice", "bob"], limits={"max_beats": 2},
                           perspectives={"alice": "Alice secretly kept the spare key to the shop all along.",
                                         "bob": "Bob suspects that the audit numbers were changed on purpose."})
        run = await run_session(tmp_path, scene, isolation="b", coordinator="C", provider="claude-code", model=MODEL,
                                base_url=server.url())
    pieces = private_pieces(run.dir)
    assert len(pieces) > 10 and any("spare key" in p for p in pieces)
    assert seen and any("claude" in " ".join(argv) for argv in seen), "the CLI was watched while it ran"
    for argv in seen:
        line = " ".join(argv)
        leaked = [p for p in pieces if p in line]
        assert not leaked, f"private material on a command line: {leaked[:2]}"
        assert "--system-prompt" not in argv and "--append-system-prompt" not in argv
    assert any("--system-prompt-file" in argv for argv in seen)
    assert files and all((mode, folder) == (0o600, 0o700) for mode, folder, _ in files)
    briefings = {m["briefing"] for m in read_private(run.dir)["cast"].values()}
    assert {text for *_, text in files} <= briefings, "the file holds the actor's briefing, as it is"
    assert folders and not any(folder.exists() for folder in folders), "the briefings go with the provider"


async def test_a_briefing_over_128_kib_reaches_the_model_whole():
    briefing = "You are Alice.\n" + "A long, careful memory of the bakery on Elm Street. " * 5000 + "END-OF-BRIEFING"
    assert len(briefing.encode()) > 200 * 1024
    with LoopbackServer(Reply(text="Hello.")) as server:
        provider = ClaudeCodeProvider(MODEL, base_url=server.url(), max_retries=0)
        try:
            completion = await provider.complete(Request(to="alice", system=briefing,
                                                         messages=[ChatMessage(role="user", content="Speak.")]))
        finally:
            await provider.aclose()
    assert completion.text == "Hello."
    [request] = [r for r in server.requests if "END-OF-BRIEFING" in json.dumps(r.body)]
    assert request.body["system"][-1]["text"] == briefing


def never_answering_cli(folder: Path) -> Path:
    """A stand-in for the CLI: it starts, notes that it did, reads its input and never answers."""
    script = folder / "claude-never-answers"
    script.write_text(f"#!{sys.executable}\nimport sys\nopen({str(folder / 'started')!r}, 'a').write('x')\n"
                      "for _ in sys.stdin:\n    pass\n")
    script.chmod(0o700)
    return script


async def test_an_attempt_with_no_answer_is_failed_at_the_first_byte_timeout_and_retried(tmp_path):
    sleep = FakeSleep()
    provider = ClaudeCodeProvider(MODEL, timeout_s=60, first_byte_timeout_s=0.25, max_retries=2, sleep=sleep,
                                  cli_path=str(never_answering_cli(tmp_path)))
    started = time.monotonic()
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.complete(Request(to="alice", system="You are Alice.",
                                            messages=[ChatMessage(role="user", content="Speak.")]))
    finally:
        await provider.aclose()
    elapsed = time.monotonic() - started
    assert "no answer began within 0.25 s" in caught.value.message and caught.value.retryable
    assert caught.value.context["attempts"] == 3 and len(sleep.calls) == 2
    assert elapsed < 10, f"three attempts took {elapsed:.1f} s, not three first-byte timeouts"


def test_the_first_byte_timeout_is_a_provider_setting():
    from promptdesk.core.casting.pool import make_provider
    from promptdesk.core.providers.spec import ProviderSpec

    provider = make_provider(ProviderSpec(name="claude-code", model=MODEL, first_byte_timeout_s=7))
    assert provider.first_byte_timeout_s == 7
    assert ProviderSpec(name="claude-code", model=MODEL).first_byte_timeout_s == 20
