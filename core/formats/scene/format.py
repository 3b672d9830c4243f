"""The `scene` format (specs 000, 003, 004): actors in the tag protocol, beats in parallel or turns in sequence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticCustomError

from promptdesk.core.characters.loading import Character
from promptdesk.core.engine.briefing import JOURNAL_HEADING, build_briefing
from promptdesk.core.engine.format import Format
from promptdesk.core.engine.scene import Scene
from promptdesk.core.formats.scene import parallel, sequential
from promptdesk.core.formats.scene.context import context_lines
from promptdesk.core.formats.scene.restore import restore

if TYPE_CHECKING:
    from promptdesk.core.engine.coordinator import Decision
    from promptdesk.core.engine.session import Session


class SceneFormat(Format):
    """Isolated actors who think privately and speak through `<speech>`; the coordinator closes."""

    name = "scene"
    title = "Scene"
    needs = ("prompt",)
    needs_said = "a `prompt`"
    keeps_journals = True
    actor_protocol = True
    judges_goal = True
    drops_unavailable_actors = True

    def min_cast(self) -> int:
        """A scene needs two people to be a dialogue."""
        return 2

    def check_scene(self, scene: Scene) -> None:
        """Spec 004's `SceneConfig.prompt` is required: `INVALID_CONFIG: Scene prompt is required` (a
        scene that casts cards with `card_scenario: true` may take its prompt from a card instead)."""
        if not scene.prompt.strip() and not (scene.card_scenario and scene.cards):
            raise PydanticCustomError("missing", "Scene prompt is required", {"key": "prompt"})

    def briefing(self, character: Character, scene: Scene, names: Sequence[str]) -> str:
        return build_briefing(character, scene, names)

    def brief_text(self, briefing: str) -> str:
        """Spec 000's words, naming the journal only when the briefing carries one (a character with
        no entries yet, or a run with `--journals none`, is sent none)."""
        journal = " + journal" if JOURNAL_HEADING in briefing else ""
        return f"Sent actor system prompt + profile{journal} + scene perspective"

    def notes_lines(self, scene: Scene, isolation: str) -> list[str]:
        return context_lines(scene, isolation)

    async def play(self, session: Session) -> Decision:
        """Parallel beats or sequential turns, as the scene's `turns:` says."""
        policy = {"parallel": parallel, "sequential": sequential}[session.scene.turns]
        return await policy.play(session)

    def resumable(self) -> bool:
        return True

    def restore(self, session: Session, kept: list[Any], cut_beat: Any, finished: Any = None) -> None:
        restore(session, kept, cut_beat, finished)
