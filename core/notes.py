"""`notes.md`: the two pre-experiment choices first, exactly as spec 000 records them, then the
provider, model, seed and cast. Written before any actor is spawned."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.characters import Character
from core.improv import DISCLAIMER
from core.journal_store import where
from core.scenes import ProviderSpec, Scene

ISOLATION_LINES = {
    "a": "(a) — sub-agent per actor: every turn is a fresh, stateless call rebuilt from the record",
    "b": "(b) — separate API conversation per actor: one persistent thread each, briefing cached",
}
ROLE_LINES = {
    "A": "A — parent LLM context: an LLM judge that also sees notes.md and the director's notes",
    "B": "B — dedicated coordinator agent: an LLM judge with only a coordinator system prompt",
    "C": "C — pure code: rule-based close words, caps and stall rules, no LLM",
}


def model_name(spec: ProviderSpec) -> str:
    """The model a spec names, as a person reads it (the offline improviser has one, not a default)."""
    return spec.model or ("improviser" if spec.name == "offline" else "default")


def choice_lines(isolation: str, role: str) -> list[str]:
    """The first two lines of `notes.md`."""
    return [f"Isolation:        {ISOLATION_LINES[isolation]}", f"Coordinator role: {ROLE_LINES[role]}"]


THREAD_THINKING = {"keep": "every past reply keeps its thinking", "last": "only the most recent reply keeps its thinking",
                   "drop": "past replies keep their speech only"}


def context_lines(scene: Scene, isolation: str) -> list[str]:
    """How much context each request carries: the window, and (isolation b) which past thoughts are re-sent."""
    if scene.format != "scene":
        return []
    window, thinking = scene.limits.window, scene.thread_thinking
    if isolation == "a":
        return [f"- Context window: the last {window} lines each actor witnessed",
                f"- thread_thinking: {thinking} (isolation b only: no thread is kept here)"]
    return [f"- Context window: the thread keeps {window}–{2 * window - 1} turns, dropping {window} at a time",
            f"- thread_thinking: {thinking} ({THREAD_THINKING[thinking]})"]


def notes_text(scene: Scene, isolation: str, role: str, specs: Mapping[str, ProviderSpec],
               judge: ProviderSpec, seed: int, cast: Sequence[Character]) -> str:
    """The whole of `notes.md` for a run."""
    lines = choice_lines(isolation, role) + ["", f"# Notes — {scene.title}", "",
                                             f"- Scene: {scene.name} ({scene.format}, {scene.turns} turns)",
                                             f"- Seed: {seed}", "- Cast:"]
    for character in cast:
        spec = specs[character.slug]
        lines.append(f"  - {character.name} ({character.slug}): provider {spec.name}, model {model_name(spec)}")
        if scene.format == "scene":
            lines.append(f"    journal: {where(character)}")
    if role != "C":
        lines.append(f"- Coordinator judge: provider {judge.name}, model {model_name(judge)}")
    lines += context_lines(scene, isolation)
    if any(spec.name == "offline" for spec in specs.values()) or (role != "C" and judge.name == "offline"):
        lines += ["", f"> {DISCLAIMER}"]
    return "\n".join(lines) + "\n"
