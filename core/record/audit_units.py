"""When a text could excuse a match: the audit's cover (public units, a recipient's own) with the time
each piece of it came to exist.

Words excuse a match in a request only if the recipient could have seen them when the request was
sent. A secret a request leaked, which the recipient then says aloud or thinks, is public (or its
own) from that moment on, never before: otherwise every leak a recipient reacts to would excuse
itself. Each piece of cover keeps its birth: the `t` and beat of the event that made it (`ALWAYS`
for what existed before the run's first request: the scene's shared fields, the cast's names, each
actor's briefing and start material, the engine's fixed words). On a clock that stood still (every
record stamped alike) the beats order them, as they order a thought and a request
(`promptdesk.core.record.audit_material.Material.existed`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

Born = tuple[float, float]
"""When a text came to exist: its `t` and its beat (`-inf` for a beat unknown: the earliest)."""
ALWAYS: Born = (-math.inf, -math.inf)
"""Existed before the run's first request."""
NEVER: Born = (math.inf, math.inf)
"""Later than any text: what a text not yet known compares as."""
COVER = 3
"""Words of a run that places a word inside a public unit (a unit shorter than this counts whole)."""


def stamp(t: float | None, beat: int | None) -> Born:
    """The birth of a text recorded at `t` in `beat` (no `t`: before the first request)."""
    return ALWAYS if t is None else (t, -math.inf if beat is None else beat)


def by(born: Born | None, t: float | None, beat: int | None, strict: bool = False) -> bool:
    """Whether a text born at `born` (None: never) existed when a request was sent at `t` in `beat`
    (None: whenever, as for a text checked live, when everything recorded so far exists). At the same
    instant, a text of a later beat did not exist yet; one of the same beat, or a beat unknown, may have.
    `strict`: existed before a text written at `t` in `beat` (so not that text itself): at the same
    instant, only a text of an earlier beat did."""
    if born is None:
        return False
    if t is None:
        return True
    if strict:
        return born[0] < t or (born[0] == t and beat is not None and born[1] < beat)
    return born[0] < t or (born[0] == t and (beat is None or born[1] <= beat))


def earliest(into: dict[str, Born], key: str, born: Born) -> None:
    """Keep the earliest birth of `key`."""
    if born < into.get(key, NEVER):
        into[key] = born


@dataclass
class Units:
    """Text as cover: its runs of `COVER` words, and the whole of each text shorter than that, each
    with the earliest time it existed."""

    runs: dict[str, Born] = field(default_factory=dict)
    short: dict[str, Born] = field(default_factory=dict)

    def add(self, tokens: list[str], *, short: bool = True, born: Born = ALWAYS) -> None:
        """The words of one text (see `promptdesk.core.record.audit_words.words`)."""
        if len(tokens) >= COVER:
            runs = self.runs
            if born == ALWAYS:  # the earliest there is: nothing to compare
                runs.update(dict.fromkeys(shingles(tokens), ALWAYS))
                return
            for run in shingles(tokens):
                if born < runs.get(run, NEVER):
                    runs[run] = born
        elif tokens and short:
            earliest(self.short, " ".join(tokens), born)

    def holds(self, tokens: list[str], at: int, t: float | None = None, beat: int | None = None,
              strict: bool = False) -> bool:
        """True when the word at `at` lies inside one of these units where it stands in `tokens`, a unit
        that existed at `t` in `beat` (None: whenever; `strict`: see `by`)."""
        return any(by(self.runs.get(run), t, beat, strict) for run in around(tokens, at)) or any(
            by(self.short.get(" ".join(tokens[start:start + size])), t, beat, strict)
            for size in range(1, COVER) for start in range(max(0, at - size + 1), min(at, len(tokens) - size) + 1))


def shingles(tokens: list[str]) -> Iterator[str]:
    """Every run of `COVER` words of `tokens`, joined by single spaces, in order."""
    return map(" ".join, zip(*(tokens[i:] for i in range(COVER))))


def around(tokens: list[str], at: int) -> tuple[str, ...]:
    """The runs of `COVER` words of `tokens` that hold the word at `at`."""
    return tuple(" ".join(tokens[start:start + COVER])
                 for start in range(max(0, at - COVER + 1), min(at, len(tokens) - COVER) + 1))
