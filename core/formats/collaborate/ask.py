"""One participant's call in a collaboration, guarded as spec 001 §3, §9 and §8D ask.

OpenAI gets the envelope through structured outputs (`Request.json_schema`, sent as a strict
`response_format`). Every other provider (Anthropic, compatible servers, the offline improviser)
gets it through the instructions, then validation and at most ONE repair attempt. A reply still
invalid after that is taken as a plain message with no handoff, and a warning goes to `debug.log`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from promptdesk.core.formats.collaborate.context import REPAIR_PROMPT
from promptdesk.core.formats.collaborate.envelope import Envelope, fallback, parse_envelope, strict_schema
from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.engine.turn import call

if TYPE_CHECKING:
    from promptdesk.core.engine.actors import Actor
    from promptdesk.core.engine.session import Session

STRUCTURED_OUTPUTS = ("openai",)
"""Providers that enforce the schema themselves (strict structured outputs)."""


@dataclass
class Reply:
    """What came back: the envelope the router acts on, the raw text, and whether it was valid."""

    envelope: Envelope
    raw: str
    valid: bool
    problem: str | None = None
    repaired: bool = False

    def thread_text(self) -> str:
        """What the participant's own thread keeps of this reply (isolation b)."""
        return self.envelope.model_dump_json(exclude_none=True) if self.valid else self.raw


def prepare(actor: Actor, request: Request, participants: list[str]) -> Request:
    """Ask for structured outputs where the provider enforces them."""
    if actor.provider.name in STRUCTURED_OUTPUTS:
        return request.model_copy(update={"json_schema": strict_schema(participants)})
    return request


async def ask(session: Session, actor: Actor, request: Request, participants: list[str],
              tags: dict[str, Any]) -> Reply:
    """Send the call, validate the envelope, repair once if allowed, else fall back with a warning."""
    request = prepare(actor, request, participants)
    completion = await session.clock.wait_for(call(session, actor.provider, request), actor.turn_timeout_s)
    if completion.refusal and not completion.text.strip():  # a refusal is its answer: nothing to repair
        return _invalid(session, actor, completion.text, REFUSED, tags, message=REFUSED_MESSAGE)
    envelope, problem = parse_envelope(completion.text, participants)
    if envelope is not None:
        return Reply(envelope, completion.text, True)
    if actor.provider.name not in STRUCTURED_OUTPUTS:
        session.say("correct", f"Asked {actor.name} to repair its reply envelope ({problem})",
                    target=actor.slug, source="router", **tags)
        repair = _repair_request(request, completion.text, problem or "invalid")
        again = await session.clock.wait_for(call(session, actor.provider, repair), actor.turn_timeout_s)
        envelope, problem = parse_envelope(again.text, participants)
        if envelope is not None:
            return Reply(envelope, again.text, True, repaired=True)
        completion = again
    return _invalid(session, actor, completion.text, problem or "invalid", tags)


REFUSED = "the model refused to answer"
REFUSED_MESSAGE = "(refused to answer: its words are in debug.log)"
"""What the room shows of a refusal (OpenAI's `refusal`, Anthropic's `stop_reason: refusal`): its words stay
private, as every refusal's do (`promptdesk.core.providers.stops`), and nothing pretends it was empty."""


def _invalid(session: Session, actor: Actor, text: str, problem: str, tags: dict[str, Any], *,
             message: str | None = None) -> Reply:
    """§3's fallback: a plain message (the raw output, or `message`), no handoff; a warning in debug.log."""
    session.recorder.log("warning", f"{actor.slug} reply is not a valid envelope; treated as a plain message, "
                         "handoff ignored, collaboration ends", problem=problem, raw=text[:500],
                         **{k: v for k, v in tags.items() if k in ("session_id", "round", "call_id")})
    envelope = Envelope(message=message) if message else fallback(text)
    return Reply(envelope, text, False, problem)


def _repair_request(original: Request, bad: str, problem: str) -> Request:
    """The same call plus the invalid reply and the repair instruction."""
    messages = [*original.messages, ChatMessage(role="assistant", content=bad or "(empty)"),
                ChatMessage(role="user", content=REPAIR_PROMPT.format(problem=problem))]
    return original.model_copy(update={"messages": messages})
