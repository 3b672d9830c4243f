"""A world event the coordinator suggests (roles A and B): checked, then held, injected or dropped.

A judge may have read what no actor may (role A's judge sees the coordinator notes), so its
suggestion is the coordinator's material until shown clean: before it is shown to the operator or
injected, it passes the isolation audit's leak check (`promptdesk.core.record.audit_coordinator.vet`)
against the run's private material (every actor's profile, journal and perspective, the coordinator
notes, the thinking so far). One that carries any is **withheld**: its `decision` event records
`withheld` (why), a `system` line (reason `withheld`) tells the operator whose material it carries
without its words, nothing is held for `y`, and no actor ever receives it. The check does not rely on
the judge remembering not to: it stands on the only path from a judge's words to an actor. A
suggestion the judge already made in the scene is withheld too (`REPEATED`): the same event twice is
not a new event.
"""

from __future__ import annotations

from typing import Any

from promptdesk.core.record.audit_coordinator import vet, whose

Stage = Any
"""A `promptdesk.core.engine.stage.Stage` (which calls this module, so it is not imported here)."""

WITHHELD = "withheld"
"""The `reason` of the `system` line that says a suggested world event was withheld."""
REPEATED = "it repeats a world event the coordinator suggested earlier in the scene"
"""Why a suggestion the judge made before (case, spacing and a closing full stop aside) is withheld: the
engine tells the judge what it suggested, and does not rely on it remembering."""


def why_withheld(stage: Stage, text: str) -> str | None:
    """Why the suggested world event `text` may not reach the actors (whose private material it
    carries), or None when it is clean. Checked once per text and beat."""
    key = (text, stage.state.beat)
    if stage.vetted is not None and stage.vetted[0] == key:
        return stage.vetted[1]
    earlier = stage.tally.update(stage.recorder.events, stage.state.cast).suggested
    if any(_plain(text) == _plain(before) for before in earlier):
        why: str | None = REPEATED
    elif stage.private_record is None:
        why = "it cannot be checked: the run holds no record of its private material"
    else:
        found = vet(stage.private_record, stage.recorder.events, text)
        owners = list(dict.fromkeys(whose(f, stage.state.cast) for f in found))
        why = f"it carries words of {_and(owners)}" if owners else None
    stage.vetted = (key, why)
    return why


def _plain(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!")


def withhold(stage: Stage, why: str) -> None:
    """Say (without its words) that the coordinator's suggestion was withheld; nothing is left to accept."""
    stage.state.suggestion = None
    stage.state.withheld = why
    stage.say("system", f"The coordinator's suggested world event was withheld: {why}. No actor receives it.",
              reason=WITHHELD)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
