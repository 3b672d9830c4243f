"""Participants of a collaboration: characters from disk, or the built-in assistant personas.

Spec 001's default pair is `gpt` and `claude`. When no character file of that slug is found in the
usual folders (a file that is found but broken is an error, never silently replaced), a plain
assistant persona is used instead (its `profile_path` points nowhere, so no
journal is ever appended to it). Any other missing slug fails as a missing character does.

Unless the scene or the command line maps them to a provider, `gpt` runs on OpenAI (`gpt-4o-mini`)
and `claude` on Anthropic (`claude-sonnet-4-6`) when that provider's key is set; without the key the
participant stays on the offline improviser and a notice says so (`default_providers`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from promptdesk.core.characters.loading import Character, load_character
from promptdesk.core.errors import CharacterLoadError, InvalidConfig
from promptdesk.core.engine.scene import Scene
from promptdesk.core.providers.spec import ProviderSpec

BUILTIN = {
    "gpt": ("GPT", "A plain assistant persona: practical, structured, quick to turn a draft into steps and lists. "
                   "Edits for clarity and concision; flags gaps plainly."),
    "claude": ("Claude", "A plain assistant persona: careful, warm, good at first drafts and at checking that the "
                         "result really meets the goal. Prefers short, concrete wording."),
}
"""slug -> (display name, persona) for the built-in participants."""


def builtin(slug: str) -> Character:
    """The built-in persona for `slug` (one of BUILTIN)."""
    name, persona = BUILTIN[slug]
    nowhere = Path(f"<builtin:{slug}>")
    return Character(slug=slug, name=name, description=persona, profile=persona, journal="",
                     profile_path=nowhere, journal_path=nowhere)


def require_goal(scene: Scene) -> None:
    """A collaboration cannot start without a goal (spec 001: the user's original request)."""
    if not scene.goal.strip():
        raise InvalidConfig(f"scene {scene.name}: a collaboration needs a `goal` (or --collaborate GOAL)")


def load_participants(slugs: Sequence[str], dirs: Sequence[Path]) -> list[Character]:
    """Each participant from disk when a character file exists, else its built-in persona."""
    if len(set(slugs)) != len(slugs):
        raise InvalidConfig(f"a participant is listed twice: {', '.join(slugs)}")
    cast, failures = [], []
    for slug in slugs:
        try:
            cast.append(load_character(slug, dirs))
        except CharacterLoadError as exc:
            if slug in BUILTIN and "searched" in exc.context:
                cast.append(builtin(slug))
            else:
                failures.append(exc)
    if failures:
        raise CharacterLoadError("\n".join(f.message for f in failures),
                                 character=failures[0].context.get("character"))
    return cast


HOME_PROVIDERS = {"gpt": ("openai", "OPENAI_API_KEY"), "claude": ("anthropic", "ANTHROPIC_API_KEY")}
"""slug -> (its own provider, the key that provider needs)."""
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-6"}
"""The model a participant runs on its own provider when nothing names one (README: Collaborate)."""


def default_providers(scene: Scene, specs: Mapping[str, ProviderSpec], *, provider_flag: bool,
                      env: Mapping[str, str] | None = None) -> tuple[dict[str, ProviderSpec], list[str]]:
    """`gpt` on OpenAI and `claude` on Anthropic, each on its default model (`DEFAULT_MODELS`), when
    nothing maps them and the key is set; the notices name each participant that stays offline for
    want of its key, and how to map it. A participant cast on its own provider without a model
    (`--cast gpt=openai`) also takes the default model.

    `--model` without `--provider` cannot name a model for two providers at once: when it would be
    dropped (a participant goes to its own provider) it is refused, naming `--cast`."""
    env = os.environ if env is None else env
    chosen, notices = dict(specs), []
    if provider_flag or "provider" in scene.model_fields_set:
        return chosen, notices
    for slug, (provider, key) in HOME_PROVIDERS.items():
        if slug not in chosen:
            continue
        if slug in scene.cast:
            if chosen[slug].name == provider and not chosen[slug].model:
                chosen[slug] = chosen[slug].model_copy(update={"model": DEFAULT_MODELS[provider]})
            continue
        if env.get(key):
            if chosen[slug].model:
                raise InvalidConfig(_one_model_for_two(chosen[slug].model))
            chosen[slug] = chosen[slug].model_copy(update={"name": provider, "model": DEFAULT_MODELS[provider]})
        else:
            notices.append(f"{slug} \u2192 offline improviser: {key} is not set; map it with --cast {slug}=\u2026")
    return chosen, notices


def _one_model_for_two(model: str) -> str:
    pairs = " and ".join(f"--cast {slug}={provider}:MODEL" for slug, (provider, _) in HOME_PROVIDERS.items())
    defaults = ", ".join(f"{slug}: {provider}:{DEFAULT_MODELS[provider]}" for slug, (provider, _) in HOME_PROVIDERS.items())
    return (f"--model {model} names one model for every participant, but gpt runs on OpenAI and claude on "
            f"Anthropic: choose each one's model with {pairs} (the defaults are {defaults}), or run both on one "
            f"provider with --provider NAME --model {model}")
