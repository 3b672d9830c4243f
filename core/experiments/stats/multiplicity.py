"""Adjusting p-values across a family of tests, so that many tests do not make chance look real.

- `holm` (the default): Holm's step-down method, which keeps the chance of *any* false finding in
  the family at alpha (family-wise error rate). The k-th smallest of m p-values is multiplied by
  m − k + 1, made no smaller than the adjusted value before it, and capped at 1.
- `bh`: Benjamini and Hochberg's method (`scipy.stats.false_discovery_control`), which keeps the
  expected *share* of false findings among those declared at alpha (false discovery rate): more
  findings than Holm, each one less certain.
"""

from __future__ import annotations

ADJUSTMENTS = {"holm": "Holm", "bh": "Benjamini–Hochberg"}
"""The adjustments by their flag value, and how a reader names them."""

SHORT = {"holm": "Holm", "bh": "BH"}
"""Their names in a column header."""

WHAT = {"holm": "family-wise error rate", "bh": "false discovery rate"}
"""What each one keeps at alpha."""


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [1.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Benjamini–Hochberg's adjustment, in the order given (scipy's)."""
    if not p_values:
        return []
    from scipy.stats import false_discovery_control
    return [float(p) for p in false_discovery_control(p_values, method="bh")]


def adjust(p_values: list[float], method: str = "holm") -> list[float]:
    """The p-values adjusted by `method` (`holm` or `bh`) across all of them."""
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown adjustment {method!r}: give one of {', '.join(ADJUSTMENTS)}")
    return holm(p_values) if method == "holm" else benjamini_hochberg(p_values)
