"""A benchmark sweep: several scenes × several actor models × the two choices × seeds, in one sweep folder,
each run scored after its close by the same evaluators.

`promptdesk sweep sotopia/scenes --models openai:gpt-4o-mini,anthropic:claude-haiku-4-5 --evaluator
openai:gpt-4o --isolation b --coordinator C --seeds 1-3` plans 300 scenes × 2 models × 3 seeds as one
ordinary sweep (`promptdesk.core.experiments.sweep`: resumable, concurrent, within its budget). A model is
`provider:model`, optionally `@base_url` (`openai-compatible:llama3@http://127.0.0.1:8080/v1`); every actor
of a run plays on its combination's model. Runs are named `<scene>--<model>--<isolation>-<coordinator>-seed<N>`,
and their condition (a comparison's column) is the model and the two choices, so `compare` pairs them by
scene and seed (`promptdesk.core.experiments.evaluation_compare`).

The evaluators (`--evaluator`, one or more models) score every run on its scene's rubric (`evaluate:`,
else `sotopia`) after its close, in the run itself (`promptdesk.core.engine.evaluation`): their calls are
the run's, priced and counted against the sweep's budget. Without `--evaluator`, each scene's own
`evaluator:` scores it; a sweep of remote models over evaluated scenes must name its evaluator, so that no
model under test scores itself by default.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from promptdesk.core.casting import evaluators as casting_evaluators
from promptdesk.core.casting.build import build_session, check_budget
from promptdesk.core.casting.places import find_scene
from promptdesk.core.casting.pool import ProviderPool
from promptdesk.core.clock import RealClock
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.providers.names import PROVIDER_NAMES
from promptdesk.core.providers.spec import ProviderSpec

_MODEL = re.compile(r"^(?P<provider>[a-z][a-z-]*)(?::(?P<model>[^@\s]+))?(?:@(?P<url>\S+))?$")
SCENE_SUFFIXES = (".yaml", ".yml")
OFFLINE, OFFLINE_MODEL = "offline", "improviser"
"""The offline improviser, and the model name the record gives it (`offline:improviser`)."""


def parse_model(text: str, flag: str = "--models") -> tuple[str, str | None, str | None]:
    """`provider:model[@base_url]` as (provider, model, base_url); InvalidConfig naming the flag. The
    offline improviser is `offline` (or `offline:improviser`, as the record names it): no model, no server."""
    match = _MODEL.match(text.strip())
    if not match or match.group("provider") not in PROVIDER_NAMES:
        raise InvalidConfig(f"{flag}: {text!r} is not provider:model[@base_url] with a provider of "
                            f"{', '.join(PROVIDER_NAMES)} (e.g. openai:gpt-4o-mini, "
                            f"openai-compatible:llama3@http://127.0.0.1:8080/v1, offline)")
    provider, model, url = match.group("provider"), match.group("model"), match.group("url")
    if provider == OFFLINE:
        if url or model not in (None, OFFLINE_MODEL):
            raise InvalidConfig(f"{flag}: {text!r}: the offline improviser takes no model and no server; write "
                                f"`offline`, or name a provider that has models (e.g. openai:gpt-4o-mini)")
        return provider, None, None
    return provider, model, url


def parse_models(text: str | None, flag: str) -> list[str]:
    """A comma-separated list of models, each checked; [] for None."""
    models = [m.strip() for m in (text or "").split(",") if m.strip()]
    for model in models:
        parse_model(model, flag)
    if len(set(models)) != len(models):
        raise InvalidConfig(f"{flag} names a model twice: {text}")
    if flag == "--evaluator":  # the record tells evaluators apart by provider:model alone (not by server)
        labels = [":".join(p for p in parse_model(m, flag)[:2] if p) for m in models]
        if twice := sorted({label for label in labels if labels.count(label) > 1}):
            raise InvalidConfig(f"--evaluator names {', '.join(twice)} twice (on two servers): their scores would be "
                                "recorded as one evaluator's; give one model per evaluator")
    return models


def model_labels(models: list[str]) -> list[str]:
    """Each model's label, `provider:model` (its server left out; `#2` after a label two models share)."""
    labels: list[str] = []
    for text in models:
        provider, model, _ = parse_model(text)
        label = f"{provider}:{model}" if model else provider
        labels.append(label if label not in labels else f"{label}#{labels.count(label) + 1}")
    return labels


def model_choice(models: list[str], label: str) -> tuple[str, str | None, str | None] | None:
    """The (provider, model, base_url) a combination's model label stands for; None for "" (no models)."""
    if not label:
        return None
    return parse_model(models[model_labels(models).index(label)])


def scene_key(path: str) -> str:
    """A scene file's name in run names: its file name without the suffix, as a slug."""
    return re.sub(r"[^a-z0-9]+", "-", Path(path).stem.lower()).strip("-") or "scene"


def factors(scenes: list[str], models: list[str]) -> list[tuple[str, str]]:
    """Every (scene, model) of a plan, scene by scene; ("", "") for a plain sweep."""
    return [(s, m) for s in ([scene_key(p) for p in scenes] or [""]) for m in (model_labels(models) or [""])]


def run_name(scene: str, model: str, choices: str) -> str:
    """`<scene>--<model>--<choices>` (the parts a plain sweep has not left out)."""
    return "--".join(p for p in (scene, re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-"), choices) if p)


def scene_files(given: list[str], cwd: Path) -> list[str]:
    """The scene files that scene arguments name: a folder's `*.yaml` files (sorted), a file, or a scene's
    name; two files with one name are refused (their runs would share names)."""
    files: list[Path] = []
    for text in given:
        path = cwd / text
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in SCENE_SUFFIXES and p.is_file())
            if not found:
                raise InvalidConfig(f"{text} is a folder with no scene file (.yaml) in it")
            files += [Path(text) / p.name for p in found]
        else:
            files.append(find_scene(text, cwd))
    keys: dict[str, Path] = {}
    for file in files:
        if scene_key(str(file)) in keys and keys[scene_key(str(file))] != file:
            raise InvalidConfig(f"two scene files are both named {scene_key(str(file))!r} ({keys[scene_key(str(file))]} "
                                f"and {file}): give them different file names")
        keys[scene_key(str(file))] = file
    return [str(f) for f in dict.fromkeys(files)]


def evaluator_specs(evaluators: list[str], settings: dict[str, Any] | None = None) -> list[ProviderSpec]:
    """The evaluators' provider specs (the plan's provider settings, timeouts and the like, apply)."""
    specs = []
    for text in evaluators:
        provider, model, url = parse_model(text, "--evaluator")
        data = {"name": provider, "model": model, "base_url": url, **(settings or {})}
        specs.append(ProviderSpec.model_validate({k: v for k, v in data.items() if v is not None}))
    return specs


def attach_evaluators(session: Any, evaluators: list[str], settings: dict[str, Any] | None = None) -> None:
    """Give a run the sweep's evaluators, on its scene's rubric (else `sotopia`); none given: its own."""
    if not evaluators:
        return
    rubric = session.scene.evaluate or "sotopia"
    pool = ProviderPool(int((session.private_record or {}).get("seed") or 0), RealClock())  # its retries wait for real
    casting_evaluators.attach_all(session, rubric, evaluator_specs(evaluators, settings), pool)


def check_benchmark(scenes: dict[str, Any], plan: Any, unpriced: list[str]) -> list[str]:
    """Refuse a benchmark plan that cannot run: a scene whose first run cannot be built (its cast, its
    providers), evaluators whose cost a budget cannot know, remote models scoring themselves by default.
    Returns the models with no known price that `unpriced` does not name yet."""
    specs = evaluator_specs(plan.evaluators, plan.provider_settings)
    remote = any(parse_model(m)[0] != "offline" for m in plan.models)
    evaluated = [key for key, scene in scenes.items() if scene.evaluate]
    if remote and evaluated and not plan.evaluators:
        raise InvalidConfig("--models plays remote models on scenes that are evaluated after their close (e.g. "
                            f"{evaluated[0]}): give --evaluator PROVIDER:MODEL, the model that scores every run, so "
                            "that no model under test scores itself")
    added = [m for m in check_budget(plan.budget_usd, specs) if m not in unpriced]
    pool = ProviderPool(0, RealClock())
    for spec in specs:  # an evaluator that cannot be built (no API key, a setting its provider refuses) is
        pool.get(spec)  # refused now, before any run starts, not by every run of the sweep in turn
    firsts = {}
    for combo in plan.combinations():
        firsts.setdefault(combo.scene, combo)
    scratch = Path(tempfile.mkdtemp(prefix="promptdesk-benchmark-check-"))
    try:
        for key, combo in list(firsts.items())[1:]:
            session = build_session(scenes[key], replace(plan.run_options(combo, scratch / combo.name),
                                                         budget_usd=plan.budget_usd))
            session.recorder.release()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return added
