"""Garbage collection that stays flat over a long run.

A run keeps every recorded event in memory until its close (the derived files are written from
them), so the heap grows with the beat number and each full collection of the cyclic garbage
collector walks all of it: measured on a 500-beat scene, that alone made the engine's time per
event grow about threefold. Between beats, `settle()` collects the young generations and freezes
what survived (`gc.freeze`): later collections skip those objects, so their cost follows what a
beat allocates, not how long the run has been going. Objects that are garbage at that point are
collected first; ordinary (acyclic) objects are freed by reference counting whether frozen or not.

A frozen object that becomes cyclic garbage is never collected, though: a finished run's session,
actors and events hold one another, so a process that plays run after run (a sweep) kept every
finished run's heap (a 200-run sweep peaked at 120 MB, half of it runs long over). `release()`,
called as a run ends, gives the collector its frozen objects back every `RELEASE_EVERY` runs and
collects them all once; the runs still playing are frozen again at their next beat.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


RELEASE_EVERY = 8
"""Finished runs between two full collections: their garbage waits at most that long, and a full
collection (which walks the heap of every run still playing) is paid once for that many runs."""
_released = 0


def release() -> None:
    """A run is over: every `RELEASE_EVERY`-th call, unfreeze and collect fully (see the module docstring)."""
    global _released
    _released += 1
    if _released % RELEASE_EVERY == 0:
        gc.unfreeze()
        gc.collect()


def settle() -> None:
    """Collect the young generations, then move every surviving object out of the collector's reach."""
    gc.collect(1)
    gc.freeze()


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector held off for the block, and on again after it unless it was off before
    (reference counting frees as always). A crowd's beat starts its turns in such a block: its
    requests allocate thousands of young objects, and measured at fifty actors the collections
    they set off (about seven a beat, one of them of the older generation) took 4 ms between the
    beat's first request and its last; what they would have collected waits for the next one."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
