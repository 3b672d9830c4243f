"""`notes.md`: the two pre-experiment choices first, exactly as spec 000 records them, then the
provider, model, seed and cast. Written before any actor is spawned.

Role A's judge reads `notes.md` in every request, so nothing in it may depend on where the project
sits on this machine: a journal is named relative to the scene file's folder (`journal_place`), or by
its character when it lies outside the scene's project; never by an absolute path, which would change
the judge's requests (and their tokens) when the folder moves, and send local paths to a vendor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from promptdesk.core.characters.loading import Character
from promptdesk.core.improv import DISCLAIMER
from promptdesk.core.engine.format import Format
from promptdesk.core.engine.scene import Scene
from promptdesk.core.providers.spec import ProviderSpec

ISOLATION_LINES = {
    "a": "(a) — sub-agent per actor: every turn is a fresh, stateless call rebuilt from the record",
    "b": "(b) — separate API conversation per actor: one persistent thread each, briefing cached",
}
ROLE_LINES = {
    "A": "A — parent LLM context: an LLM judge that also sees notes.md, the coordinator notes and the director's notes",
    "B": "B — dedicated coordinator agent: an LLM judge with only a coordinator system prompt",
    "C": "C — pure code: rule-based close words, caps and stall rules, no LLM",
}


def model_name(spec: ProviderSpec) -> str:
    """The model a spec names, as a person reads it (the offline improviser has one, not a default)."""
    return spec.model or ("improviser" if spec.name == "offline" else "default")


def journal_place(character: Character, scene_folder: Path | None) -> str:
    """Where the character's journal is, as `notes.md` names it (see the module docstring)."""
    path = character.journal_path
    if path is None:
        return "none (this run has no memory)"
    if scene_folder is not None:
        base = Path(scene_folder).resolve()
        for root, prefix in ((base, Path()), (base.parent, Path(".."))):
            try:
                return (prefix / Path(path).resolve().relative_to(root)).as_posix()
            except ValueError:
                continue
    return f"{character.slug}'s own journal, outside the scene's project"


def choice_lines(isolation: str, role: str) -> list[str]:
    """The first two lines of `notes.md`."""
    return [f"Isolation:        {ISOLATION_LINES[isolation]}", f"Coordinator role: {ROLE_LINES[role]}"]


def notes_text(scene: Scene, isolation: str, role: str, specs: Mapping[str, ProviderSpec],
               judge: ProviderSpec, seed: int, cast: Sequence[Character], fmt: Format) -> str:
    """The whole of `notes.md` for a run."""
    lines = choice_lines(isolation, role) + ["", f"# Notes — {scene.title}", "",
                                             f"- Scene: {scene.name} ({scene.format}, {scene.turns} turns)",
                                             f"- Seed: {seed}", "- Cast:"]
    for character in cast:
        spec = specs[character.slug]
        lines.append(f"  - {character.name} ({character.slug}): provider {spec.name}, model {model_name(spec)}")
        if fmt.keeps_journals:
            lines.append(f"    journal: {journal_place(character, scene.folder)}")
    if role != "C" and fmt.calls_judge:
        lines.append(f"- Coordinator judge: provider {judge.name}, model {model_name(judge)}")
    lines += fmt.notes_lines(scene, isolation)
    if any(spec.name == "offline" for spec in specs.values()) or (role != "C" and fmt.calls_judge and judge.name == "offline"):
        lines += ["", f"> {DISCLAIMER}"]
    return "\n".join(lines) + "\n"
