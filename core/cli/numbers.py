"""The numbers the command line takes, as argparse types: each refusal names what was wanted and
what was given (argparse prints it after the flag's name)."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)


PLAIN = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number as written on a command line: ASCII digits, a point, an exponent. Python's own `int` and
`float` also read `1_0` (as 10), digits of other scripts and `inf`, which a typist rarely means."""


def number_type(parse: Callable[[str], N], ok: Callable[[N], bool], wanted: str) -> Callable[[str], N]:
    """An argparse type: `parse(text)` when `text` is a plain number (`PLAIN`) that `ok` accepts, else
    the error "must be <wanted>, not …"."""
    def convert(text: str) -> N:
        try:
            value = parse(text) if PLAIN.fullmatch(text.strip()) else None
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"must be {wanted}, not {text!r}")
        return value
    return convert


positive_int = number_type(int, lambda value: value > 0, "a positive whole number")
"""`--max-beats`, `--max-concurrency`."""
beat_number = number_type(int, lambda value: value >= 0, "a beat number (0 or more)")
"""`--at-beat`."""
pace_seconds = number_type(float, lambda value: 0 <= value <= 60, "a number of seconds from 0 to 60")
"""`--pace`."""
budget_usd = number_type(float, lambda value: math.isfinite(value) and value >= 0,
                         "a finite amount in USD of 0 or more")
"""`--budget-usd` (no NaN, no infinity, no negative)."""
sweep_budget_usd = number_type(float, lambda value: math.isfinite(value) and value > 0,
                               "a finite amount in USD more than 0")
"""A sweep's `--budget-usd`, of runs or of takes (a ceiling on the whole sweep: 0 would run nothing)."""
timeout_seconds = number_type(float, lambda value: math.isfinite(value) and value > 0,
                              "a finite number of seconds more than 0")
"""`--timeout`, `--journal-timeout`."""
