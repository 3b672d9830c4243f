"""The design of a comparison: which units (seeds, or whatever a caller pairs by) two conditions share.

A *sample* is one condition's values, each with its unit: `[(unit, value), ...]`, a value None when
it is unknown for that unit's run. A unit is anything hashable: a seed (`compare` pairs a sweep's
cells by seed), a (scenario, seed) pair, ... Two conditions are *paired* when they share units: the
same seed fixes the improviser's draw (and a replayed model's), so comparing seed with seed removes
the seed-to-seed spread from the difference.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

Unit = Hashable
Sample = list[tuple[Unit, "float | None"]]


@dataclass
class Pairs:
    """The units both samples know a value for, their values side by side, and the units dropped
    (missing on one side, or unknown on either)."""

    units: list[Unit] = field(default_factory=list)
    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    dropped: list[Unit] = field(default_factory=list)

    @property
    def differences(self) -> list[float]:
        """b − a, unit by unit."""
        return [y - x for x, y in zip(self.a, self.b)]


def known(sample: Sample) -> list[float]:
    """The sample's known values."""
    return [v for _, v in sample if v is not None]


def pair(a: Sample, b: Sample) -> Pairs:
    """The pairs two samples make, in the order their units first appear."""
    known_a = {u: v for u, v in a if v is not None}
    known_b = {u: v for u, v in b if v is not None}
    found = Pairs()
    for unit in dict.fromkeys([u for u, _ in a] + [u for u, _ in b]):
        if unit in known_a and unit in known_b:
            found.units.append(unit)
            found.a.append(known_a[unit])
            found.b.append(known_b[unit])
        else:
            found.dropped.append(unit)
    return found


def shares_units(samples: Mapping[str, Sample]) -> bool:
    """True when any two samples have a unit in common (the design is paired)."""
    seen: set[Unit] = set()
    for sample in samples.values():
        units = {u for u, _ in sample}
        if units & seen:
            return True
        seen |= units
    return False


def repeated(sample: Sample) -> list[Unit]:
    """The units that occur more than once in one sample (a paired analysis cannot tell which to use)."""
    seen: set[Unit] = set()
    twice: list[Unit] = []
    for unit, _ in sample:
        if unit in seen and unit not in twice:
            twice.append(unit)
        seen.add(unit)
    return twice


def unit_text(units: list[Unit]) -> str:
    """Units as a reader wants them: whole numbers in order, runs of them as ranges (`1-3, 7`); scenes and
    seeds by scene (`clock-shop seeds 1-3, ferry-slot seed 2`)."""
    if units and all(isinstance(u, tuple) and len(u) == 2 and isinstance(u[1], int) for u in units):
        by: dict[str, list[int]] = {}
        for scene, seed in sorted(units, key=lambda u: (str(u[0]), u[1])):  # type: ignore[misc]
            by.setdefault(str(scene), []).append(seed)
        return ", ".join(f"{scene} seed{'s' if len(seeds) > 1 else ''} {unit_text(seeds)}" for scene, seeds in by.items())
    if not all(isinstance(u, int) for u in units):
        return ", ".join(str(u) for u in units)
    spans: list[list[int]] = []
    for u in sorted(set(units)):  # type: ignore[type-var]
        if spans and spans[-1][1] == u - 1:  # type: ignore[operator]
            spans[-1][1] = u  # type: ignore[assignment]
        else:
            spans.append([u, u])  # type: ignore[list-item]
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
