"""What an actor's Claude Code session holds, kept equal to the thread Promptdesk sends (claude-code).

A session is started by one prompt (the request's only message, or its whole thread folded into one,
`fold`) and then resumed one turn at a time. `SessionThread` remembers which of the engine's messages
the session stands for: the first `folded` of them went into its opening prompt, each later one is
a message of its own. A request continues the session when its earlier messages are exactly those
(the user messages compared; a window drop changes them, so a new session starts once per drop and
is resumed from then on).

The model's replies are stored by the CLI as it wrote them (thinking included), while the engine
re-sends its own copy (`thread_thinking`: speech alone under `last` and `drop`); and the engine
keeps its newest update without what only that turn needed (the last private thought, the ask),
so the session's last user message may differ from the engine's copy. Before a session is resumed,
`rewrite_replies` replaces each reply in the CLI's transcript with the engine's copy, and each user
message past the opening prompt too (the opening prompt stays as it was sent), so the model sees
exactly the thread the scene's settings allow. When the transcript cannot be
found or does not have the expected shape, the session is not resumed (a new one starts with the
thread folded): a past thought is never re-sent against the settings.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from promptdesk.core.providers.base import ChatMessage
from promptdesk.core.protocol.bounded import json_lines


@dataclass
class SessionThread:
    """One actor's Claude Code session: its id, its opening prompt, and the engine's messages it
    stands for (the last one the reply as the model wrote it)."""

    session_id: str
    prompt: str
    folded: int
    messages: list[ChatMessage] = field(default_factory=list)

    def continued_by(self, messages: list[ChatMessage]) -> bool:
        """Whether a request with these messages continues the session: the same turns, the same
        user messages (but the session's last, which the engine may keep shorter than it was sent),
        and one new message after them."""
        earlier = messages[:-1]
        if not earlier or len(self.messages) != len(earlier):
            return False
        last = max((i for i, m in enumerate(self.messages) if m.role == "user"), default=-1)
        return all(a.role == b.role and (a.role == "assistant" or a.content == b.content or i == last)
                   for i, (a, b) in enumerate(zip(self.messages, earlier)))

    def updates(self, messages: list[ChatMessage]) -> list[str]:
        """The engine's copy of each user message the session holds past its opening prompt, oldest first."""
        return [m.content for m in messages[self.folded:-1] if m.role == "user"]

    def as_held(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The messages the resumed session holds once its replies are rewritten, plus the new one."""
        return [ChatMessage(role="user", content=self.prompt), *messages[self.folded:]]

    def replies(self, messages: list[ChatMessage]) -> list[str]:
        """The engine's copy of each reply the session holds, oldest first."""
        return [m.content for m in messages[self.folded:-1] if m.role == "assistant"]


def fold(messages: list[ChatMessage]) -> str:
    """A thread as one prompt: earlier turns quoted, then the newest message."""
    if len(messages) == 1:
        return messages[0].content
    earlier = "\n\n".join(f"[{'you' if m.role == 'assistant' else 'them'}]\n{m.content}" for m in messages[:-1])
    return f"EARLIER IN THIS CONVERSATION:\n\n{earlier}\n\nNOW:\n\n{messages[-1].content}"


def transcript(home: str | None, session_id: str) -> Path | None:
    """The CLI's transcript of a session (`<config>/projects/<project>/<id>.jsonl`), if it exists."""
    config = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") and not home else \
        Path(home or Path.home()) / ".claude"
    found = sorted((config / "projects").glob(f"*/{session_id}.jsonl"))
    return found[0] if len(found) == 1 else None


def rewrite_replies(path: Path | None, replies: list[str], updates: list[str] = ()) -> bool:
    """Put the engine's copy of each reply in place of the model's in the transcript at `path`, and
    of each user message past the opening prompt (`updates`, oldest first) in place of the one sent.

    Returns False (and changes nothing) unless the transcript holds exactly one text reply per
    expected reply and, after its opening prompt, one text prompt per expected update."""
    if path is None:
        return False
    try:
        lines = json_lines(path.read_text(encoding="utf-8"))
        entries = [json.loads(line) if line.strip() else None for line in lines]
    except (OSError, ValueError):
        return False
    answers = [e for e in entries if isinstance(e, dict) and e.get("type") == "assistant"]
    if len(answers) != len(replies) or not all(_text_only(e) for e in answers):
        return False
    prompts = [e for e in entries if isinstance(e, dict) and e.get("type") == "user" and _user_text(e) is not None]
    if len(prompts) != len(updates) + 1:
        return False
    for entry, text in zip(answers, replies):
        entry["message"]["content"] = [{"type": "text", "text": text}]
    for entry, text in zip(prompts[1:], updates):
        entry["message"]["content"] = text if isinstance(entry["message"]["content"], str) else [{"type": "text", "text": text}]
    changed = {id(e) for e in [*answers, *prompts[1:]]}
    body = "\n".join(json.dumps(entry) if entry is not None and id(entry) in changed else line
                     for line, entry in zip(lines, entries)) + "\n"
    temporary = path.with_name(path.name + ".rewrite")
    try:
        temporary.write_text(body, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        return False
    return True


def _user_text(entry: dict) -> str | None:
    """The text of a transcript's user entry (a string, or text blocks only), else None."""
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(b.get("text", "") for b in content)
    return None


def _text_only(entry: dict) -> bool:
    """Whether a transcript entry is a reply made of text blocks only (no thinking, no tool use)."""
    content = (entry.get("message") or {}).get("content")
    return isinstance(content, list) and bool(content) and all(
        isinstance(block, dict) and block.get("type") == "text" for block in content)
