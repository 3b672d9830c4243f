"""The `roundtable` format (spec 002): a facilitator asks, participants answer blind, the facilitator synthesises."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from promptdesk.core.characters.loading import Character
from promptdesk.core.engine.format import Format, Setup
from promptdesk.core.engine.scene import Scene
from promptdesk.core.formats.roundtable import lines, policy, strategies
from promptdesk.core.formats.roundtable.improv_facilitator import facilitate
from promptdesk.core.formats.roundtable.improv_participant import participate
from promptdesk.core.formats.roundtable.prompts import participant_system
from promptdesk.core.formats.roundtable.settings import Roundtable, check
from promptdesk.core.formats.roundtable.setup import facilitator_spec, prepare
from promptdesk.core.formats.roundtable.table import Table
from promptdesk.core.providers.spec import ProviderSpec
from promptdesk.core.record.lines import FormatLines

if TYPE_CHECKING:
    from promptdesk.core.engine.coordinator import Decision
    from promptdesk.core.engine.session import Session, SessionResult
    from promptdesk.core.providers.base import Provider


def answer_escalation(session: Session, decision: str, text: str | None = None) -> None:
    """Answer the open escalation: `accept` the facilitator's recommendation, give your `own` decision
    (`text`), or `continue` the discussion. Raises ValueError when none is open."""
    table = session.format_state
    if not isinstance(table, Table):
        raise ValueError("no escalation is waiting for an answer")
    table.desk.answer(decision, text)


class RoundtableFormat(Format):
    """Rounds of question, blind answers and synthesis, through a strategy's phases, until a conclusion."""

    name = "roundtable"
    title = "Roundtable"
    needs = ("prompt",)
    needs_said = "a topic (`roundtable.topic`, or a `prompt` or a `goal`)"
    section = Roundtable
    unit = "rounds"
    round_cap = "`roundtable: {max_rounds: N}` in the scene file"
    escalates = True
    drops_unavailable_actors = True
    run_files = {"session.yaml": "The session as spec 002 records it: topic, strategy and phases, participants, "
                                 "status, and each round's question, answers and synthesis; rewritten whole once "
                                 "per round, so no partial round is ever visible.",
                 "summary.md": "Written at the close, for a reader: the strategy and rounds, the recommendation, "
                               "the consensus, the open conflicts and the operator's decisions."}
    lines = FormatLines(is_public=lines.is_public, txt_line=lines.txt_line, md_line=lines.md_line,
                        metadata=lines.metadata, turn_types=("answer",), printed=lines.printed)
    players = {"facilitator": facilitate, "participant": participate}
    controls = {"answer_escalation": answer_escalation}

    def check_scene(self, scene: Scene) -> None:
        check(scene)

    def min_cast(self) -> int:
        """Two: a table of one has no one to agree or disagree with, and its synthesis would call
        one person's answer a consensus."""
        return 2

    def briefing(self, character: Character, scene: Scene, names: Sequence[str]) -> str:
        """A participant's own profile, private perspective and the answer format."""
        return participant_system(character, scene.perspective_for(character.slug))

    def brief_text(self, briefing: str) -> str:
        return "Sent participant profile + perspective + answer format"

    def priced_specs(self, scene: Scene, setup: Setup) -> list[ProviderSpec]:
        """An LLM facilitator (roles A and B), whose cost counts against the budget too."""
        return [facilitator_spec(scene, setup)] if setup.role != "C" else []

    def prepare(self, session: Session, setup: Setup) -> None:
        prepare(session, setup)

    def file_models(self) -> dict[str, type[BaseModel]]:
        return {"strategy": strategies.Strategy}

    def search_places(self, scene_folder: Path | None, cwd: Path, scene: Scene | None = None) -> dict[str, list[Path]]:
        table = scene.section("roundtable") if scene is not None else None
        return {"Strategies": strategies.search_dirs(table.strategies_dirs if table else (), cwd, scene_folder)}

    async def play(self, session: Session) -> Decision:
        return await policy.play(session)

    def providers(self, session: Session) -> list[Provider]:
        table = session.format_state
        return [table.setup.facilitator] if isinstance(table, Table) else []

    def played(self, session: Session, result: SessionResult) -> int:
        """Rounds finished."""
        table = session.format_state
        discussion = table.discussion if isinstance(table, Table) else None
        return len(discussion.rounds) if discussion is not None else result.beats
