"""The roundtable's model calls, all through `promptdesk.core.engine.turn.call` (recorded in `prompts.jsonl`, streamed,
priced). A failed call never ends the discussion: the facilitator's becomes a fallback, a
participant's a `system` line and a missing answer. Every fallback is logged and recorded."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from promptdesk.core.engine import turn
from promptdesk.core.engine.stage import SceneStopped
from promptdesk.core.errors import RecordingError
from promptdesk.core.providers.base import ChatMessage, Provider, Request
from promptdesk.core.formats.roundtable.strategies import Strategy

if TYPE_CHECKING:
    from promptdesk.core.engine.actors import Actor
    from promptdesk.core.engine.session import Session

FACILITATOR = "facilitator"


@dataclass
class TableSetup:
    """What `build_session` prepares for a roundtable: strategy, facilitator and headless policy."""

    strategy: Strategy
    facilitator: Provider
    facilitator_system: str
    facilitator_timeout_s: float | None = None
    on_escalate: str | None = None
    headless: bool = False
    participation: str = "parallel"
    """The scene's `roundtable.participation` when it sets one, else the strategy's, else parallel."""


def fallback(session: Session, who: str, what: str, problem: str, round_no: int, sink: list[dict[str, Any]],
             failed: bool = False) -> None:
    """Log a fallback to `debug.log`, record it as a `system` event and in the round's `fallbacks`.
    `failed`: the call itself failed (a failed call, counted with the actor failures); otherwise the
    answer came but was unusable (a salvaged reply, `promptdesk.core.record.outputs.is_salvage`)."""
    text = f"{who}: {problem}; used the fallback {what}"
    session.recorder.log("warning", f"roundtable fallback: {text}", round=round_no)
    session.say("system", text, reason="fallback", fallback=what, about=who, internal=True, beat=round_no,
                **({"failed": True} if failed else {}))
    sink.append({"who": who, "fallback": what, "problem": problem})


async def ask_facilitator(session: Session, setup: TableSetup, content: str, round_no: int) -> str | None:
    """One facilitator call; None when it failed (the caller falls back)."""
    request = Request(to=FACILITATOR, purpose="facilitator", system=setup.facilitator_system, beat=round_no,
                      messages=[ChatMessage(role="user", content=content)], max_tokens=1500)
    task = session.track(asyncio.create_task(turn.call(session, setup.facilitator, request, stream_as=FACILITATOR)))
    try:
        completion = await session.clock.wait_for(task, setup.facilitator_timeout_s)
    except (RecordingError, SceneStopped):
        raise  # a stopped run is no facilitator's failure
    except Exception as exc:  # noqa: BLE001 - any fault falls back, recorded by the caller
        session.recorder.log("error", "facilitator unable to respond", round=round_no, error=turn.failure_reason(exc))
        return None
    return completion.text


async def ask_participant(session: Session, actor: Actor, content: str, round_no: int) -> str | None:
    """One participant call, through the actor (isolation a: fresh; b: its own thread only)."""
    request = actor.request(content, round_no, purpose="participant")
    try:
        completion = await session.clock.wait_for(turn.call(session, actor.provider, request, stream_as=actor.slug),
                                            actor.turn_timeout_s)
    except (RecordingError, SceneStopped):
        raise  # a stopped run is no participant's failure
    except Exception as exc:  # noqa: BLE001 - any fault is this participant's failed turn
        turn.actor_failed(session, actor, round_no, exc)
        return None
    actor.remember(content, [], completion.text, None)
    return completion.text
