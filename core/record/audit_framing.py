"""The engine's framing, as the audit learns it from the requests themselves.

A request holds, besides routed lines and the recipient's own material, the engine's own words
around them: `BEAT 3 of at most 30`, `Respond in character, or stay silent.`, a thread's `(your last
private thought: only you ever see it)`, a roundtable's YAML keys, JSON field names. A model that
copies some of them into its thinking or journal would make a match look like a leak where it
crosses them. So a run of `COVER` words that the run sent to two recipients or more is framing,
unless it is a run of the owner's own private texts (so that one owner's material sent to everyone
else never excuses itself). A suspect match whose every unexcused word sits in such a run is not a
leak. The decision waits for the end of the scan, when every request has been seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from promptdesk.core.record.audit_material import COVER, Material, Needs

_MANY = "\0"


class Framing:
    """Which runs of `COVER` words the run sent to two recipients or more (by hash, to stay small)."""

    def __init__(self) -> None:
        self._first: dict[int, str] = {}

    def add(self, recipient: str, tokens: list[str]) -> None:
        """The words of (the new part of) one request to `recipient`."""
        seen = self._first
        for key in map(hash, zip(*(tokens[i:] for i in range(COVER)))):  # the words' own hashes: no new string
            first = seen.get(key)
            if first is None:
                seen[key] = recipient
            elif first != recipient:
                seen[key] = _MANY

    def frames(self, run: str) -> bool:
        """Whether `run` (its words joined by single spaces) went to two recipients or more."""
        return self._first.get(hash(tuple(run.split(" ")))) == _MANY


@dataclass(eq=False)
class Suspect:
    """A match of an owner's material that only framing could still excuse."""

    owner: str
    kind: str
    excerpt: str
    needs: Needs
    shown: str = ""
    """The excerpt as the request wrote it (empty: as `excerpt` reads)."""

    def confirmed(self, framing: Framing, material: Material) -> bool:
        """True when some word of the match sits in no framing run (the match is a leak)."""
        own = material.private_units.get(self.owner)
        return any(not any(framing.frames(run) and not (own and run in own.runs) for run in need) for need in self.needs)
