"""The `collaborate` format (spec 001): two assistants in bounded rounds, each reply a JSON envelope."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptdesk.core.characters.loading import Character
from promptdesk.core.engine.format import Format, SceneReader
from promptdesk.core.engine.scene import Scene
from promptdesk.core.formats.collaborate import flags, lines, policy
from promptdesk.core.formats.collaborate.briefing import build_collab_briefing
from promptdesk.core.formats.collaborate.improv import play_envelope
from promptdesk.core.formats.collaborate.personas import default_providers, load_participants, require_goal
from promptdesk.core.formats.collaborate.settings import Collaborate, check, settings
from promptdesk.core.providers.spec import ProviderSpec
from promptdesk.core.record.lines import FormatLines

if TYPE_CHECKING:
    from promptdesk.core.engine.coordinator import Decision
    from promptdesk.core.engine.session import Session


class CollaborateFormat(Format):
    """Participants hand the task to each other until one marks it final or the round cap is hit."""

    name = "collaborate"
    title = "Collaborate"
    needs = ("goal",)
    needs_said = "a `goal`"
    section = Collaborate
    unit = "rounds"
    round_cap = "--max-rounds N (or `collaborate: {max_rounds: N}` in the scene file)"
    lines = FormatLines(is_public=lines.is_public, txt_line=lines.txt_line, md_line=lines.md_line,
                        metadata=lines.metadata, turn_types=("agent_response",), printed=lines.printed,
                        where=lines.at_round)
    players = {"envelope": play_envelope}
    calls_judge = False

    max_cast_reason = "two assistants hand the work to each other by design; a crowd plays as a scene or a roundtable"

    def max_cast(self) -> int:
        """Two: a collaboration is two assistants handing work back and forth (spec 001)."""
        return 2

    def played(self, session: Session, result: Any) -> int:
        """Rounds whose reply was recorded: a round the operator's stop (or a failed call) cut short
        is not counted as played."""
        return sum(session.state.turns.values())

    def outcome(self, session: Session, result: Any) -> str:
        """A single call (one participant, one round) that answered reads as the console says it:
        `answered (single call)`, not `cap (goal not achieved)`."""
        answered = result.close_reason in ("cap", "final", "no_handoff") and self.played(session, result) == 1
        if answered and len(session.state.cast) == 1 and settings(session.scene).max_rounds == 1:
            return "answered (single call)"
        return super().outcome(session, result)

    def check_scene(self, scene: Scene) -> None:
        check(scene)

    def load_cast(self, scene: Scene, slugs: Sequence[str], dirs: Sequence[Path]) -> list[Character]:
        """Characters from disk, else the built-in `gpt`/`claude` personas; a collaboration needs its goal."""
        require_goal(scene)
        return load_participants(slugs, dirs)

    def briefing(self, character: Character, scene: Scene, names: Sequence[str]) -> str:
        return build_collab_briefing(character, scene, names)

    def brief_text(self, briefing: str) -> str:
        return "Sent the collaboration's rules + persona + reply schema"

    def default_providers(self, scene: Scene, specs: dict[str, ProviderSpec], *,
                          provider_flag: bool) -> tuple[dict[str, ProviderSpec], list[str]]:
        return default_providers(scene, specs, provider_flag=provider_flag)

    def notes_lines(self, scene: Scene, isolation: str) -> list[str]:
        """What decides the turns and the close, whatever the coordinator role chosen."""
        return ["- Router: each reply's envelope decides (a handoff names the next speaker; `final`, no handoff "
                "or the round cap ends); the coordinator role calls no judge in a collaboration and changes "
                "nothing in the run"] + _unsent(scene)

    def start_facts(self, scene: Scene) -> dict[str, Any]:
        """The round cap, when the scene file sets the section."""
        return {"max_rounds": settings(scene).max_rounds} if scene.section(self.name) is not None else {}

    def scene_from_flags(self, ns: argparse.Namespace, reader: SceneReader) -> Any:
        return flags.scene_for(ns, reader)

    async def play(self, session: Session) -> Decision:
        return await policy.play(session)


def _unsent(scene: Scene) -> list[str]:
    """A line naming the scene fields a collaboration never sends (spec 001: its participants get the
    goal, the transcript and the round), so that a scene turned into one does not drop them unsaid."""
    unsent = [f"`{name}`" for name in ("setting", "prompt") if getattr(scene, name).strip()]
    if not unsent:
        return []
    return [f"- Not sent to the participants: the scene's {' and '.join(unsent)} (a collaboration sends its goal, "
            "the transcript and the round; put what they need in the goal)"]
