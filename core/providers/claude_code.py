"""Actors played by real Claude Code processes (`--provider claude-code`, the optional extra).

Spec 000's isolation option (a) is literally "a sub-agent per actor in Claude Code". This provider
runs the Claude Code CLI bundled with `claude-agent-sdk` (the `promptdesk[claude-code]` extra, `INSTALL_HINT`):

- every call is one `claude_agent_sdk.query()`: tools disabled (`tools=[]`), no settings sources,
  one model turn (`max_turns=1`), the actor's briefing as the system prompt;
- a Claude Code session is kept per actor (`request.to`, `promptdesk.core.providers.claude_sessions`): when a
  request's earlier messages are exactly those the session stands for, the call resumes it
  (`resume=session_id`) and sends only the new message, so under isolation (b) each actor keeps its
  own thread inside Claude Code; any other request (isolation (a)'s fresh turn, or the first after a
  window drop) starts a new session with its thread folded into one prompt, resumed from then on.
  Before a resume the session's stored replies are rewritten to the engine's copy, so past thoughts
  are re-sent only as `thread_thinking` allows;
- the output limit is the request's `max_tokens` (`CLAUDE_CODE_MAX_OUTPUT_TOKENS`); extended
  thinking is off unless the provider's `thinking_tokens` asks for a budget, and `effort` is sent
  only when the provider sets it (not the CLI's defaults: 32000 tokens, adaptive thinking);
- the CLI always puts one fixed line before our system prompt (`CLI_SYSTEM_LINE`); without an API
  key (the Claude Code login) it cannot run `--bare` and also adds an environment block. `as_sent`
  gives the request as the model saw it, and that is what `prompts.jsonl` records;
- with an API key the CLI runs `--bare` with a private, temporary HOME (nothing is written to the
  user's `~/.claude`); without one it uses the person's own login and HOME;
- the briefing (the system prompt: profile, perspective, journal) reaches the CLI through a file only
  the user can read (0600, in a 0700 folder, removed after the call), never on its command line,
  where any local user could read it (`ps`) and where over 128 KiB it could not be passed at all; the
  messages go through the CLI's standard input;
- an attempt that shows no sign of an answer (the CLI's first stream event) within
  `first_byte_timeout_s` (default 20 s) fails and is retried like a timeout: a connection reset
  before the answer is never reported by the CLI, which would otherwise wait out `timeout_s`;
- at most `max_processes` CLI processes run at once (default 4); a cancelled call's process is
  terminated by the SDK's transport, and `aclose` removes the temporary HOME and folders;
- those folders live in one folder per provider instance, named for the process, and each CLI
  process is bound to Promptdesk's life (`promptdesk.core.providers.claude_places`): after a SIGKILL no
  CLI process stays, and the next start (a resume, another run) removes what the killed one left.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from promptdesk.core.errors import InvalidConfig, ProviderError
from promptdesk.core.providers import claude_places
from promptdesk.core.providers.base_urls import not_found_hint
from promptdesk.core.providers.base import ChatMessage, Completion, DeltaCallback, Provider, Request, ResetCallback, Usage
from promptdesk.core.providers.claude_sessions import SessionThread, fold, rewrite_replies, transcript
from promptdesk.core.providers.retry import is_retryable_status, redact, with_retries
from promptdesk.core.providers.stops import REFUSED, TRUNCATED, outcome

log = logging.getLogger("promptdesk.providers")
"""The providers' logger: a run's debug.log takes its warnings."""
EXTRA_REQUIREMENT = "claude-agent-sdk>=0.2.180"
"""The `claude-code` extra of pyproject.toml (tests/test_claude_code_extra.py checks they agree)."""
INSTALL_HINT = (f"pipx inject promptdesk '{EXTRA_REQUIREMENT}' (or uv tool install --reinstall --with "
                f"'{EXTRA_REQUIREMENT}' and the checkout or wheel you installed from; in a virtualenv: "
                f"pip install '{EXTRA_REQUIREMENT}'; in a checkout: make .venv/.test-installed)")
"""How to add the extra, for each way Promptdesk is installed (a uv-made checkout venv has no pip). It
adds the one package the extra names, never `promptdesk[claude-code]` by name: `promptdesk` on PyPI is
another project."""
FIRST_BYTE_TIMEOUT_S = 20.0
"""How long an attempt may show no sign of an answer before it is failed and retried."""
CLI_SYSTEM_LINE = "You are a Claude agent, built on Anthropic's Claude Agent SDK."
CONNECTION_LOST = re.compile(r"ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|socket hang up|connection (to the API )?was lost"
                             r"|connection error", re.IGNORECASE)
"""How the CLI (its own retries off) reports a connection that failed or was cut: retried, as the
HTTP providers retry a dropped connection."""
LOGIN_BLOCK_NOTE = "[environment block added by the Claude Code CLI in login mode; its text is not visible to Promptdesk]"
CLI_ENV = {"CLAUDE_CODE_MAX_RETRIES": "0", "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK": "1",
           "CLAUDE_CODE_NONSTREAMING_TIMEOUT_RETRIES": "0", "CLAUDE_CODE_NO_MODEL_FALLBACK": "1",
           "CLAUDE_CODE_DISABLE_MODEL_ACCESS_FALLBACK": "1", "CLAUDE_CODE_DISABLE_REFUSAL_RETRY": "1",
           "CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
           "CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
"""No telemetry or other traffic, and no retries inside the CLI (not after an error, nor by sending again
without streaming after a stream that broke, nor with another model): Promptdesk's one retry layer decides."""


def available() -> bool:
    """Whether the optional extra is installed (the SDK and its bundled CLI)."""
    try:
        import claude_agent_sdk  # noqa: F401
    except ImportError:
        return False
    return True


def require_extra() -> None:
    """Raise InvalidConfig (exit 2) naming the install line when the extra is missing."""
    if not available():
        raise InvalidConfig(f"the claude-code provider needs the optional extra: {INSTALL_HINT}")


class ClaudeCodeProvider(Provider):
    """Claude Code as an actor's model: one CLI invocation per call, a session per actor."""

    name = "claude-code"

    def __init__(self, model: str | None, api_key: str | None = None, base_url: str | None = None, *,
                 timeout_s: float = 120.0, max_retries: int = 1, max_processes: int = 4,
                 retry_after_cap_s: float = 30.0, first_byte_timeout_s: float = FIRST_BYTE_TIMEOUT_S,
                 sleep: Any = asyncio.sleep, cli_path: str | None = None, thinking_tokens: int | None = None,
                 effort: str | None = None) -> None:
        """`cli_path` runs another Claude Code CLI than the SDK's bundled one; `thinking_tokens`
        (a budget) turns extended thinking on, `effort` sets the CLI's effort level."""
        require_extra()
        if not model:
            raise InvalidConfig("the claude-code provider needs a model: set `model` in the scene's provider "
                                "(or pass --model), e.g. claude-sonnet-4-6")
        self.model = model
        self._api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.timeout_s, self.max_retries, self.retry_after_cap_s = timeout_s, max_retries, retry_after_cap_s
        self.first_byte_timeout_s = first_byte_timeout_s
        self.cli_path = cli_path
        self._sleep = sleep
        self._slots = asyncio.Semaphore(max_processes)
        self.max_processes = max_processes
        self.thinking_tokens, self.effort = thinking_tokens, effort
        self._threads: dict[str, SessionThread] = {}
        self._folder = claude_places.instance_folder()
        self._home: str | None = _private(self._folder / "home") if self._api_key else None
        self._workdir = _private(self._folder / "cwd")
        self._briefings = _private(self._folder / "briefings")
        self._launcher = claude_places.launcher(self._folder, cli_path or claude_places.bundled_cli())

    @property
    def bare(self) -> bool:
        """`--bare` (no hooks, no CLAUDE.md, no environment block) needs an API key."""
        return self._api_key is not None

    # -- what the model sees ---------------------------------------------------------------
    def _resumable(self, request: Request) -> SessionThread | None:
        """The actor's session when the request continues it (the same turns, the same user messages)
        and its stored replies could be made the engine's copy; otherwise None (a new session).

        Assistant messages are not compared: the engine keeps its own normalised copy of a reply,
        and that copy is what the session holds once `rewrite_replies` has run (idempotent)."""
        thread = self._threads.get(request.to)
        if thread is None or not thread.continued_by(request.messages):
            return None
        if not rewrite_replies(transcript(self._home, thread.session_id), thread.replies(request.messages),
                               thread.updates(request.messages)):
            return None
        return thread

    def as_sent(self, request: Request) -> Request:
        """The request as the model receives it: the CLI's fixed line first, and for a new session
        with history, that history folded into the one prompt the CLI can send."""
        system = CLI_SYSTEM_LINE + "\n\n" + request.system
        if not self.bare:
            system += "\n\n" + LOGIN_BLOCK_NOTE
        messages = request.messages
        thread = self._resumable(request)
        if thread is not None:
            messages = thread.as_held(messages)
        elif len(messages) > 1:
            messages = [ChatMessage(role="user", content=fold(messages))]
        return request.model_copy(update={"system": system, "messages": messages})

    # -- calling ---------------------------------------------------------------------------
    def prepare(self) -> None:
        """Import the SDK before the first beat, off the event loop."""
        import claude_agent_sdk  # noqa: F401

    async def complete(self, request: Request, on_delta: DeltaCallback | None = None,
                       on_reset: ResetCallback | None = None) -> Completion:
        """One model turn through the CLI, retried on 429/5xx as the other providers are; text shown
        by a failed attempt is taken back (`on_reset`) before the next one."""
        shown = False

        def show(text: str) -> None:
            nonlocal shown
            shown = True
            on_delta(text)

        async def attempt() -> Completion:
            nonlocal shown
            if shown and on_reset is not None:
                on_reset()
            shown = False
            async with self._slots:
                completion = await self._timed(request, show if on_delta else None)
            if completion.refusal is not None and shown and on_reset is not None:
                on_reset()  # a refusal's words are not the reply: the console takes them back
            return completion
        return await with_retries(attempt, max_retries=self.max_retries, retry_after_cap_s=self.retry_after_cap_s,
                                  sleep=self._sleep)

    async def _timed(self, request: Request, on_delta: DeltaCallback | None) -> Completion:
        """One attempt under its two deadlines: the first sign of an answer within
        `first_byte_timeout_s`, the whole answer within `timeout_s`. Either one missed is a retryable
        ProviderError, and the attempt's CLI process is ended before the next attempt starts."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        answering = asyncio.Event()
        task = asyncio.ensure_future(self._once(request, on_delta, answering.set))
        heard = asyncio.ensure_future(answering.wait())
        try:
            first = min(self.first_byte_timeout_s, self.timeout_s)
            await asyncio.wait({task, heard}, timeout=first, return_when=asyncio.FIRST_COMPLETED)
            if not task.done() and not answering.is_set():
                raise ProviderError(f"claude-code: no answer began within {first:g} s (the first-byte timeout)",
                                    retryable=True)
            done, _ = await asyncio.wait({task}, timeout=max(0.0, self.timeout_s - (loop.time() - started)))
            if not done:
                raise ProviderError(f"claude-code: no answer within {self.timeout_s:g} s", retryable=True)
            return task.result()
        finally:
            heard.cancel()
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _once(self, request: Request, on_delta: DeltaCallback | None,
                    answering: Callable[[], None] = lambda: None) -> Completion:
        """One CLI invocation; `answering()` is called at the first sign of the model's answer (a
        stream event, a message or the result: the CLI's own start-up messages do not count)."""
        from claude_agent_sdk import (AssistantMessage, ClaudeSDKError, ResultMessage, StreamEvent, TextBlock,
                                      query)

        thread = self._resumable(request)
        prompt = request.messages[-1].content if thread else fold(request.messages)
        started, first = time.perf_counter(), None
        pieces: list[str] = []
        stops: list[str] = []
        """The stop reason of each model reply the CLI got: after the first, the replies are the
        CLI's own (its recovery after a token limit), never part of the answer."""
        result, began = None, False
        briefing = self._briefing_file(request.system)
        try:
            async for message in query(prompt=prompt, options=self._options(request, thread, briefing)):
                if isinstance(message, (StreamEvent, AssistantMessage, ResultMessage)):
                    answering()
                if isinstance(message, StreamEvent):
                    began = True  # the server answered: from here what it bills is not known to be 0
                    stops += [reason] if (reason := _stop_reason(message.event)) else []
                    text = _delta_text(message.event) if on_delta is not None and not stops else None
                    if text:
                        first = first or time.perf_counter()
                        on_delta(text)
                elif isinstance(message, AssistantMessage) and not stops and not _synthetic(message):
                    pieces += [b.text for b in message.content if isinstance(b, TextBlock)]
                elif isinstance(message, ResultMessage):
                    result = message
        except ClaudeSDKError as exc:
            if result is None or not (stops and stops[0] in TRUNCATED | REFUSED):
                raise self._error(exc, result, began=began) from None
        except OSError as exc:  # the CLI could not be started at all
            raise ProviderError(redact(f"claude-code: the CLI could not be started: {exc}", self._api_key),
                                retryable=False) from None
        finally:
            _remove(briefing)
        if result is None or (result.is_error and not (stops and stops[0] in TRUNCATED | REFUSED)):
            raise self._error(None, result, began=began)  # after a cut or refused reply the error is the CLI's own: the reply stands
        if len(stops) > 1:
            log.warning("claude-code %s: the reply to %s stopped (%s) and the Claude Code CLI asked the model to go on "
                        "%d more times by itself (its recovery, which cannot be turned off): only the first reply is "
                        "the answer; every call is counted in the usage", self.model, request.to, stops[0],
                        len(stops) - 1)
        answer = "".join(pieces) if stops else "".join(pieces) or result.result or ""  # the result is the last reply's
        text, truncated, refusal = outcome(self.name, stops[0] if stops else result.stop_reason, "stop_reason", answer)
        held = [*request.messages, ChatMessage(role="assistant", content=text)]
        self._threads[request.to] = SessionThread(result.session_id, thread.prompt, thread.folded, held) if thread \
            else SessionThread(result.session_id, prompt, len(request.messages), held)
        return Completion(text=text, usage=_usage(result.usage), provider=self.name, model=self.model,
                          latency_s=time.perf_counter() - started, ttft_s=(first - started) if first else None,
                          truncated=truncated, refusal=refusal)

    def _briefing_file(self, system: str) -> str:
        """The system prompt in a new file only the user can read (0600, in a 0700 folder)."""
        fd, path = tempfile.mkstemp(prefix="briefing-", suffix=".md", dir=self._briefings)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(system)
        except BaseException:
            _remove(path)
            raise
        return path

    def _options(self, request: Request, thread: SessionThread | None, briefing: str) -> Any:
        """The CLI's options: the briefing as a file, partial messages always (they show that an
        answer has begun, for the first-byte timeout), the request's output limit, thinking off
        unless a budget is set, effort only when set."""
        from claude_agent_sdk import ClaudeAgentOptions

        env = {**CLI_ENV, "PROMPTDESK_PARENT_PID": str(os.getpid())}
        env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(request.max_tokens + (self.thinking_tokens or 0))
        if self.effort is None:
            env["CLAUDE_CODE_EFFORT_LEVEL"] = "unset"  # the CLI then sends no effort at all
        if self.base_url:
            env["ANTHROPIC_BASE_URL"] = self.base_url
        if self._api_key:
            env["ANTHROPIC_API_KEY"] = self._api_key
        if self._home:
            env["HOME"] = env["CLAUDE_CODE_TMPDIR"] = self._home
        return ClaudeAgentOptions(system_prompt={"type": "file", "path": briefing}, tools=[], setting_sources=[],
                                  max_turns=1, model=self.model, env=env, cwd=self._workdir,
                                  resume=thread.session_id if thread else None,
                                  cli_path=self._launcher or self.cli_path,
                                  include_partial_messages=True, extra_args={"bare": None} if self.bare else {},
                                  stderr=lambda _line: None, effort=self.effort,
                                  thinking={"type": "enabled", "budget_tokens": self.thinking_tokens}
                                  if self.thinking_tokens else {"type": "disabled"})

    def _error(self, exc: BaseException | None, result: Any, began: bool = False) -> ProviderError:
        """A ProviderError from an SDK exception or an error result, retryable on 429/5xx and on a
        connection lost or refused; an answer that had begun streaming was billed an unknown amount."""
        status = getattr(result, "api_error_status", None)
        detail = (getattr(result, "result", None) or (str(exc) if exc else "no result from the CLI")).strip()
        if exc is not None and type(exc).__name__ == "CLINotFoundError":
            detail = f"the Claude Code CLI was not found ({INSTALL_HINT})"
        hint = " — check ANTHROPIC_API_KEY, or log in with `claude` when no key is set" if status == 401 else ""
        if status == 404:
            hint = f"{not_found_hint('anthropic', self.base_url)} — check the model name and the base URL"
        where = f"HTTP {status}" if status else "error"
        message = redact(f"claude-code: {where}: {detail[:300]}{hint}", self._api_key)
        lost = status is None and CONNECTION_LOST.search(detail) is not None
        error = ProviderError(message, status=status, retryable=is_retryable_status(status) or lost)
        if began or (lost and "REFUSED" not in detail.upper()):  # the request had reached the server
            error.usage = Usage(reported=False)  # type: ignore[attr-defined]
        return error

    async def aclose(self) -> None:
        """Forget the sessions and remove the temporary folders."""
        self._threads.clear()
        shutil.rmtree(self._folder, ignore_errors=True)
        self._home = None


def _private(path: Path) -> str:
    """A new folder only the user can enter (0700)."""
    path.mkdir(mode=0o700)
    return str(path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _delta_text(event: dict[str, Any]) -> str | None:
    """The text of a raw `content_block_delta` stream event, if it is one."""
    if event.get("type") == "content_block_delta":
        delta = event.get("delta") or {}
        if delta.get("type") == "text_delta":
            return delta.get("text")
    return None


def _synthetic(message: Any) -> bool:
    """Whether an assistant message is the CLI's own words (an API error it reports as a message), not
    the model's."""
    return getattr(message, "error", None) is not None or getattr(message, "model", "") == "<synthetic>"


def _stop_reason(event: dict[str, Any]) -> str | None:
    """The stop reason a raw `message_delta` stream event gives, if it is one that gives it."""
    if event.get("type") == "message_delta":
        return (event.get("delta") or {}).get("stop_reason") or None
    return None


def _usage(raw: dict[str, Any] | None) -> Usage:
    """The CLI result's usage; unknown (`reported` False) when it counts no input at all (a server
    that sent no usage: the CLI then reports zeros, and a call always has input)."""
    raw = raw or {}
    counts = [int(raw.get(key) or 0) for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                                                 "cache_read_input_tokens")]
    return Usage(input_tokens=counts[0], output_tokens=counts[1], cache_write_tokens=counts[2],
                 cache_read_tokens=counts[3], reported=bool(counts[0] or counts[2] or counts[3]))
