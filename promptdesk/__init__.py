"""Promptdesk, a director's console for multi-agent dialogue: the one import package it installs.

Its rooms are the folders the design names at the top of a checkout, linked here (setuptools builds
them into this package): `promptdesk.core` (everything but the console; never imports the console),
`promptdesk.tui` (the Textual console), and the files Promptdesk ships beside its code, read through
`promptdesk.resources` (the actor system prompt, the themes, the roundtable strategies, the example
scenes and characters). `python -m promptdesk` is the `promptdesk` command.

Importing this package imports nothing else, so the command's fast paths (`--version`, `--help`)
stay fast.
"""

from __future__ import annotations

DISTRIBUTION = "promptdesk"
"""The distribution's name on PyPI, whose metadata holds the version (one source of truth)."""


def version() -> str:
    """The installed version, from the package metadata ("unknown" when Promptdesk runs from a
    checkout that was never installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"
