"""A metric over one column of a comparison (a run, or a condition's runs) as its tables show it:
mean ± sd of the known values, and a yes/no metric of a single run as `yes` or `no`, as `metrics` says it."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean, stdev

YES_NO = ("goal_achieved", "success")
"""The metrics that are true or false for a run (a condition's mean of them is a rate)."""


@dataclass
class Stat:
    """A metric over the runs of one column: mean and sd of the known values, n of them, how many unknown.
    With no known value (n = 0) both mean and sd are None (unknown), never 0."""

    mean: float | None
    sd: float | None
    n: int
    unknown: int = 0

    def text(self, yes_no: bool = False) -> str:
        """`yes_no`: the metric is true or false for a run (`YES_NO`): one known value is `yes` or `no`."""
        if self.mean is None:
            return "unknown"
        missing = f"{self.unknown} unknown" if self.unknown else ""
        if self.n < 2:
            return (("yes" if self.mean else "no") if yes_no else number(self.mean)) + (f" ({missing})" if missing else "")
        return f"{number(self.mean)} ± {number(self.sd)} (n={self.n}{', ' + missing if missing else ''})"


def number(x: float) -> str:
    """A number as a reader wants it: thousands with separators, small values to 3 significant digits."""
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def stat(values: list[float | None]) -> Stat:
    present = [v for v in values if v is not None]
    if not present:
        return Stat(None, None, 0, len(values))
    return Stat(round(mean(present), 6), round(stdev(present), 6) if len(present) > 1 else 0.0, len(present),
                len(values) - len(present))
