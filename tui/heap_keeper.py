"""The console's heap, kept so that no key pays a full garbage collection of it.

A full pass of Python's cyclic garbage collector walks every object it tracks, and a console holds
many (modules, the app and its screens, a run's every recorded event): a pass that happens to start
during a key (any allocation can start one) adds a tenth of a second or more to it. Objects that
`gc.freeze()` moved out of the collector's reach are not walked, so the console keeps what is alive
frozen and walks it only when nobody is waiting:

- while a scene is live, the heap present when it started stays frozen (the engine freezes what
  each beat leaves, `promptdesk.core.engine.heap`); as the last live scene closes, the heap is
  collected once and what survives frozen again (`session_started`, `session_ended`);
- a screen's first frame drawn, what its opening made is settled (`settle`: the young generations
  collected, the survivors frozen, a millisecond or two), so the next key's passes walk only what
  that key makes;
- what was frozen and became garbage since (a closed screen) waits for `tidy` (everything handed
  back, collected, the survivors frozen again), which the console runs once it has had no input
  for `TIDY_AFTER_S`, or in place of every `SETTLES_PER_TIDY`-th settle, never while a scene is live;
- as the console closes, every frozen object goes back to the collector (`release`).
"""

from __future__ import annotations

import gc

TIDY_AFTER_S = 2.0
"""Seconds without input after which what was settled since the last tidy is collected."""

_live_sessions = 0
"""How many scenes are live in this console."""
_untidy = False
"""Whether anything was frozen since the last full collection."""
SETTLES_PER_TIDY = 10
"""Settles after which the next one is a full `tidy` (what frozen objects became garbage is bounded)."""
_settled = 0
"""Settles since the last tidy."""


def session_started() -> None:
    """A scene starts: leave everything alive now out of the collector's full passes while it plays
    (they would otherwise rescan the whole heap again and again while lines stream in)."""
    global _live_sessions, _untidy
    _live_sessions += 1
    if _live_sessions == 1:
        gc.freeze()
        _untidy = True


def session_ended() -> None:
    """A scene ended: once none is live, walk the heap once (it is the moment the run let go of most
    of what it held), not on the operator's next key."""
    global _live_sessions
    _live_sessions = max(0, _live_sessions - 1)
    if _live_sessions == 0:
        tidy()


def settle() -> None:
    """Collect the young generations and freeze what survives; every `SETTLES_PER_TIDY`-th time since
    the last tidy, when no scene is live, `tidy` instead (a console driven without a pause, by a
    script, still gets back what its closed screens held)."""
    global _untidy, _settled
    _settled += 1
    if _settled >= SETTLES_PER_TIDY and not _live_sessions:
        tidy()
        return
    gc.collect(1)
    gc.freeze()
    _untidy = True


def tidy() -> None:
    """Hand every frozen object back, collect all garbage, freeze the survivors (not while a scene is
    live: its own passes are the engine's)."""
    global _untidy, _settled
    if _live_sessions:
        return
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _untidy, _settled = False, 0


def tidy_if_untidy() -> None:
    """`tidy`, when something was frozen since the last one."""
    if _untidy:
        tidy()


def release() -> None:
    """The console is closing: hand every frozen object back to the collector."""
    global _untidy
    if _live_sessions == 0:
        gc.unfreeze()
        _untidy = False
