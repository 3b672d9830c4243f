"""The `roundtable` format (spec 002) on the one engine: a facilitator asks, participants answer blind
(in parallel, or sequentially when a strategy asks for it), the facilitator synthesises, and the round
is written to `session.yaml` in one batch.

Modules, one reason each: `settings` (its scene-file section), `strategies` (phases from YAML files),
`answers` (YAML blocks and the deterministic fallbacks), `prompts` (what each call is told: blindness
is structural there), `escalation` (the triggers and the operator's desk), `decide` (asking the
operator), `record` (`session.yaml` and `summary.md`), `state` (where the discussion is), `table`
(the session's roundtable state), `calls` and `round` (the calls), `policy` (the turn policy),
`improv_*` (the offline improviser's facilitator and participants). The registry reaches it through this
package: `add_flags` (its command-line flags, light) and `load()` (its `format.RoundtableFormat`).

May import the engine and the rooms below it; never another format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptdesk.core.formats.roundtable.flags import add_flags

if TYPE_CHECKING:
    from promptdesk.core.engine.format import Format

__all__ = ["add_flags", "load"]


def load() -> Format:
    """The format, imported on first use (`promptdesk.core.formats.registry`)."""
    from promptdesk.core.formats.roundtable.format import RoundtableFormat

    return RoundtableFormat()
