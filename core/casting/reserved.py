"""Names no cast member may be listed under: the senders and recipients the engine keeps for itself.

A request's `to` and an event's `from` name a cast member by its slug, and the engine's own parties by
these words: `coordinator` (every event the engine emits, and the owner of the coordinator notes),
`operator` (the director's controls), `judge` and `facilitator` (the coordinator's model calls, which may
read the operator context) and `evaluator` (the evaluation step, which reads every goal and secret by
design). A cast member listed under one of them would be taken for that party by the record and the
audit: another actor's secret sent to a character called `evaluator` would pass as the evaluator's. So
the cast check refuses them (`check_reserved`), and an importer names such a character otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.protocol.evaluation import EVALUATOR
from promptdesk.core.record.events import COORDINATOR, OPERATOR

RESERVED = frozenset({COORDINATOR, OPERATOR, EVALUATOR, "facilitator", "judge"})
"""(`facilitator` is the roundtable's, which no module outside its format imports.)"""


def check_reserved(slugs: Iterable[str]) -> None:
    """Refuse a cast member listed under a name the engine keeps for itself (see the module docstring)."""
    for slug in slugs:
        if slug in RESERVED:
            kept = ", ".join(sorted(RESERVED))
            raise InvalidConfig(f"The cast lists '{slug}', a name the engine keeps for itself ({kept}): the record "
                                f"would take the character for the engine's own {slug}. List it under "
                                f"another name (rename its folder or file, e.g. '{slug}-1').", slug=slug)
