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
    """What each card left out, for the operator and `notes.md`, `scene` as written (before `offered`):
    under `card_scenario: true` too, a scenario or first message the scene does not take, and why."""
    return [notice for slug, card in cards.items()
            for notice in card.notices(scene.card_scenario, unused_because(scene, cards, slug))]


def unused_because(scene: Scene, cards: dict[str, CastCard], slug: str) -> dict[str, str]:
    """Under `card_scenario: true`, why this card's scenario or first message is not offered (`offered`
    takes one scenario, the first card's, where the scene leaves setting or prompt unset, and a first
    message where the scene gives no perspective)."""
    if not scene.card_scenario:
        return {}
    card, why = cards[slug], {}
    first = next((s for s, c in cards.items() if c.scenario), None)
    if card.scenario and scene.setting and scene.prompt:
        why["scenario"] = "the scene sets its own setting and prompt"
    elif card.scenario and first != slug:
        why["scenario"] = f"the scene takes one card's scenario: {cards[first].character.name}'s, the first cast with one"
    if card.opener and slug in scene.perspectives:
        why["first message"] = "the scene gives this character a perspective of its own"
    return why


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
