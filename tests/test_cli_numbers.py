"""The command line's number types: each takes what it names and refuses the rest, saying both."""

from __future__ import annotations

import argparse

import pytest

from promptdesk.core.cli.numbers import budget_usd, pace_seconds, positive_int, timeout_seconds


@pytest.mark.parametrize("kind, text, value", [
    (positive_int, "3", 3), (pace_seconds, "0", 0.0), (pace_seconds, "60", 60.0), (budget_usd, "0", 0.0),
    (budget_usd, "2.5", 2.5), (timeout_seconds, "0.5", 0.5)])
def test_a_number_it_takes(kind, text, value):
    assert kind(text) == value


@pytest.mark.parametrize("kind, text, wanted", [
    (positive_int, "0", "a positive whole number"), (positive_int, "2.5", "a positive whole number"),
    (positive_int, "", "a positive whole number"), (pace_seconds, "61", "from 0 to 60"),
    (pace_seconds, "-1", "from 0 to 60"), (pace_seconds, "nan", "from 0 to 60"),
    (budget_usd, "-0.01", "0 or more"), (budget_usd, "inf", "finite"), (budget_usd, "nan", "finite"),
    (timeout_seconds, "0", "more than 0"), (timeout_seconds, "inf", "finite"), (timeout_seconds, "soon", "finite"),
    # what Python's own int() and float() also read, and a typist rarely means: digit separators, other scripts' digits
    (budget_usd, "1_0", "finite"), (positive_int, "1_000", "a positive whole number"),
    (positive_int, "\u0663", "a positive whole number"), (timeout_seconds, "\uff15", "finite")])
def test_a_number_it_refuses_names_what_it_wanted_and_what_it_got(kind, text, wanted):
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        kind(text)
    assert wanted in str(refused.value) and repr(text) in str(refused.value)
