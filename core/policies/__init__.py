"""Turn policies: how a format decides who speaks when, on the one engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.coordinator import Decision

if TYPE_CHECKING:
    from core.session import Session


async def play(session: Session) -> Decision:
    """Run the session's turn policy until it returns a close decision."""
    from core.policies import parallel, sequential

    if session.scene.format == "collaborate":
        from core.policies import collaborate
        return await collaborate.play(session)
    if session.scene.format == "roundtable":
        from core.policies import roundtable
        return await roundtable.play(session)
    policy = {"parallel": parallel, "sequential": sequential}[session.scene.turns]
    return await policy.play(session)
