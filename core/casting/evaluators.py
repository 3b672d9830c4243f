"""Who evaluates a run (`evaluate:` in the scene): the evaluator's provider, its line in `notes.md`, and
the session's evaluators (`promptdesk.core.engine.evaluation`).

The evaluator is a provider setting of its own (`evaluator:` in the scene), priced and budgeted like
any call; unset, it is the coordinator's judge (`judge:`), else the scene's `provider:` as the flags
set it. A benchmark keeps the models under test apart from the one that scores them by setting it
(or, in a sweep, `--evaluator`). `private.json` records it, so that a resumed run is evaluated by the
same evaluator.
"""

from __future__ import annotations

from typing import Any

from promptdesk.core.casting.notes import model_name
from promptdesk.core.casting.pool import ProviderPool
from promptdesk.core.engine.evaluation import evaluator_for
from promptdesk.core.engine.scene import Scene
from promptdesk.core.protocol.rubrics import RUBRICS
from promptdesk.core.providers.spec import ProviderSpec

RECORD_KEY = "evaluators"
"""The key of `private.json` that holds the rubric and the evaluators' specs (absent: the run is not evaluated)."""


def spec_for(scene: Scene, judge: ProviderSpec) -> ProviderSpec | None:
    """The evaluator's spec: the scene's `evaluator:`, else `judge` (the judge or provider as the flags
    set them); None when the scene is not evaluated."""
    if scene.evaluate is None:
        return None
    return scene.evaluator or judge


def notes_lines(scene: Scene, spec: ProviderSpec | None) -> str:
    """The line `notes.md` gives the evaluation ("" when there is none)."""
    if spec is None or scene.evaluate is None:
        return ""
    return f"- Evaluation: {RUBRICS[scene.evaluate].title} after the close, by provider {spec.name}, model {model_name(spec)}\n"


def attach(session: Any, scene: Scene, spec: ProviderSpec | None, pool: ProviderPool) -> None:
    """Give the session its evaluator (none when the scene is not evaluated), and record it."""
    if spec is None or scene.evaluate is None:
        session.evaluators = []
        return
    attach_all(session, scene.evaluate, [spec], pool)


def attach_all(session: Any, rubric: str, specs: list[ProviderSpec], pool: ProviderPool) -> None:
    """Give the session these evaluators on `rubric` (a benchmark sweep's), and record them."""
    session.evaluators = [evaluator_for(RUBRICS[rubric], pool.get(spec), spec) for spec in specs]
    if session.private_record is not None:
        session.private_record[RECORD_KEY] = {"rubric": rubric, "specs": [s.model_dump(mode="json") for s in specs]}


def specs_of(record: dict[str, Any], base_url: str | None = None) -> list[ProviderSpec]:
    """The evaluators' specs `private.json` recorded ([] when the run is not evaluated); `base_url`
    replaces a remote one's server, as `promptdesk resume --base-url` does for every provider."""
    data = record.get(RECORD_KEY)
    if not isinstance(data, dict) or data.get("rubric") not in RUBRICS or not isinstance(data.get("specs"), list):
        return []
    specs = [ProviderSpec.model_validate(item) for item in data["specs"]]
    return [s if not base_url or s.name == "offline" else s.model_copy(update={"base_url": base_url}) for s in specs]


def from_record(session: Any, scene: Scene, record: dict[str, Any], pool: ProviderPool, base_url: str | None) -> None:
    """A resumed run's evaluators, as `private.json` recorded them."""
    specs = specs_of(record, base_url)
    session.evaluators = []
    if specs:
        attach_all(session, record[RECORD_KEY]["rubric"], specs, pool)
