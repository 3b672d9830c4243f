"""The flags that set how every provider of a run is called: `--max-concurrency N`, `--timeout S`,
`--journal-timeout S` (the console, `--batch` and `sweep` alike). Each wins over the scene file's
`provider:`, `cast:` and `judge:` settings of the same name, for every provider of the run."""

from __future__ import annotations

import argparse
from typing import Any

from promptdesk.core.cli.numbers import positive_int, timeout_seconds

FLAGS = {"max_concurrency": "--max-concurrency", "timeout_s": "--timeout", "journal_timeout_s": "--journal-timeout"}
"""Provider setting -> its flag."""


def add(p: argparse.ArgumentParser) -> None:
    """Add the three flags to a command's parser."""
    p.add_argument("--max-concurrency", dest="max_concurrency", type=positive_int, metavar="N",
                   help="at most N calls at once to each provider's server, the others queued in arrival order "
                        "(default: no limit; 1 for a server that serves one request at a time, e.g. llama.cpp)")
    p.add_argument("--timeout", dest="timeout_s", type=timeout_seconds, metavar="SECONDS",
                   help="seconds one attempt of a call may take, for every provider (default: the scene's, else 60)")
    p.add_argument("--journal-timeout", dest="journal_timeout_s", type=timeout_seconds, metavar="SECONDS",
                   help="seconds one attempt of a journal call may take (default: the call timeout)")


def settings(ns: argparse.Namespace) -> dict[str, Any]:
    """The provider settings the flags give (only those given)."""
    return {key: getattr(ns, key) for key in FLAGS if getattr(ns, key, None) is not None}
