"""The `scene` format (specs 000, 003, 004): parallel beats (`parallel`) or sequential turns
(`sequential`) on what both share (`common`), the notes on its context window (`context`), and
restoring a killed scene from its log (`restore`). The registry reaches it through this package: `add_flags` (its command-line flags, light) and
`load()` (its `format.SceneFormat`).

May import the engine and the rooms below it; never another format.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptdesk.core.engine.format import Format


def add_flags(parser: argparse.ArgumentParser) -> None:
    """The scene format has no flags of its own (`--isolation`, `--coordinator` are everyone's)."""


def load() -> Format:
    """The format, imported on first use (`promptdesk.core.formats.registry`)."""
    from promptdesk.core.formats.scene.format import SceneFormat

    return SceneFormat()
