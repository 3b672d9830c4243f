"""The flags that set how every provider of a run is called: `--max-concurrency N`, `--timeout S`,
`--journal-timeout S` (the console, `--batch` and `sweep` alike). Each wins over the scene file's
`provider:`, `cast:` and `judge:` settings of the same name, for every provider of the run."""

from __future__ import annotations

import argparse
import math
from typing import Any

FLAGS = {"max_concurrency": "--max-concurrency", "timeout_s": "--timeout", "journal_timeout_s": "--journal-timeout"}
"""Provider setting -> its flag."""


def add(p: argparse.ArgumentParser) -> None:
    """Add the three flags to a command's parser."""
    p.add_argument("--max-concurrency", dest="max_concurrency", type=positive_int, metavar="N",
                   help="at most N calls at once to each provider's server, the others queued in arrival order "
                        "(default: no limit; 1 for a server that serves one request at a time, e.g. llama.cpp)")
    p.add_argument("--timeout", dest="timeout_s", type=_timeout, metavar="SECONDS",
                   help="seconds one attempt of a call may take, for every provider (default: the scene's, else 60)")
    p.add_argument("--journal-timeout", dest="journal_timeout_s", type=_timeout, metavar="SECONDS",
                   help="seconds one attempt of a journal call may take (default: the call timeout)")


def settings(ns: argparse.Namespace) -> dict[str, Any]:
    """The provider settings the flags give (only those given)."""
    return {key: getattr(ns, key) for key in FLAGS if getattr(ns, key, None) is not None}


def positive_int(text: str) -> int:
    """An argparse type: a whole number above 0 (a bad one is named in argparse's error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text!r}")
    return value


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds more than 0, not {text!r}")
    return value
