"""Cards cast directly in a scene (`characters: [card.json]`): reading them once, saying what they
drop (on stderr and in `notes.md`, as `promptdesk import` does), and, when the scene opts in with
`card_scenario: true`, offering their scenario and first message where the scene leaves them unset."""

from __future__ import annotations

from pathlib import Path

from promptdesk.core.characters.importers.cast import CastCard, cast_card
from promptdesk.core.engine.scene import Scene


def read_cards(scene: Scene, cwd: Path) -> dict[str, CastCard]:
    """Every card of the scene's cast, by slug."""
    return {slug: cast_card(slug, card, scene.folder, cwd) for slug, card in scene.cards.items()}


def card_notices(scene: Scene, cards: dict[str, CastCard]) -> list[str]:
    """What each card left out, for the operator and `notes.md`."""
    return [notice for card in cards.values() for notice in card.notices(scene.card_scenario)]


def offered(scene: Scene, cards: dict[str, CastCard]) -> Scene:
    """The scene with its cards' scenario and first message where it leaves them unset, when it opts
    in (`card_scenario: true`): the first card with a scenario gives the setting (its first line) and
    the prompt; each card's first message becomes its character's perspective, as `import`'s snippet
    suggests. Without the key, the scene as it is."""
    if not scene.card_scenario:
        return scene
    update: dict[str, object] = {}
    scenario = next((c.scenario for c in cards.values() if c.scenario), "")
    if scenario and not scene.setting:
        update["setting"] = scenario.splitlines()[0][:200]
    if scenario and not scene.prompt:
        update["prompt"] = scenario
    perspectives = dict(scene.perspectives)
    for slug, card in cards.items():
        if card.opener and slug not in perspectives:
            perspectives[slug] = f"You open the scene. In the original card you began with: {card.opener}"
    if perspectives != scene.perspectives:
        update["perspectives"] = perspectives
    return scene.model_copy(update=update) if update else scene
