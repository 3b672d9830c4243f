"""What `private.json` holds for a run about to start (its format: `promptdesk.core.record.private`)."""

from __future__ import annotations

from typing import Any

from promptdesk.core.characters.loading import Character
from promptdesk.core.engine.scene import Scene
from promptdesk.core.protocol.evaluation import secret_of
from promptdesk.core.providers.spec import ProviderSpec
from promptdesk.core.record.private import VERSION


def private_record(scene: Scene, *, isolation: str, role: str, seed: int, max_beats: int,
                   budget_usd: float | None, specs: dict[str, ProviderSpec], judge: ProviderSpec | None,
                   cast: list[Character], briefings: dict[str, str], operator_context: str) -> dict[str, Any]:
    """The start-of-run record of one run (see the module docstring)."""
    return {
        "version": VERSION,
        "scene": scene.model_dump(mode="json", by_alias=True, exclude_none=True),
        "isolation": isolation, "coordinator": role, "seed": seed, "max_beats": max_beats, "budget_usd": budget_usd,
        "providers": {slug: spec.model_dump(mode="json") for slug, spec in specs.items()},
        "judge": judge.model_dump(mode="json") if judge is not None else None,
        "cast": {c.slug: {"name": c.name, "briefing": briefings.get(c.slug, ""), "profile": c.profile,
                          "journal": c.journal, "perspective": scene.perspective_for(c.slug),
                          "secret": secret_of(c.profile),
                          "journal_path": str(c.journal_path) if c.journal_path is not None else None} for c in cast},
        "coordinator_notes": scene.coordinator_notes or "",
        "operator_context": operator_context,
    }
