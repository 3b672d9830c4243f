"""The `collaborate` format (spec 001): its section (`settings`), the JSON envelope (`envelope`),
the context window (`context`), the participants' personas (`personas`), their briefing, the one
guarded call (`ask`), the turn loop (`policy`), its state, record lines, flags and improviser part
(`improv`). The registry reaches it through this package: `add_flags` (its command-line flags, light) and
`load()` (its `format.CollaborateFormat`).

May import the engine and the rooms below it; never another format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptdesk.core.formats.collaborate.flags import add_flags

if TYPE_CHECKING:
    from promptdesk.core.engine.format import Format

__all__ = ["add_flags", "load"]


def load() -> Format:
    """The format, imported on first use (`promptdesk.core.formats.registry`)."""
    from promptdesk.core.formats.collaborate.format import CollaborateFormat

    return CollaborateFormat()
