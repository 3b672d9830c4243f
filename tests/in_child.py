"""Run one call in a forked child with a wall-clock and a memory ceiling, so that a reader that hangs
or balloons fails its test (the child is killed) instead of hanging or swapping the suite."""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import resource
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Outcome:
    """What the call did: returned `value` (its repr), or raised `error` (the exception's type name)."""

    value: str | None
    error: str | None
    message: str
    stderr: str
    traceback: str


def _vm_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def in_child(call: Callable[[], Any], seconds: float = 10.0, memory_mb: int = 600) -> Outcome:
    """Run `call()` in a forked child allowed `seconds` and `memory_mb` more address space; fail the
    test when it takes longer (the child is killed)."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child() -> None:
        limit = _vm_bytes() + memory_mb * 1_048_576
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                value = call()
            send.send(Outcome(repr(value)[:2000], None, "", err.getvalue(), ""))
        except BaseException as exc:  # noqa: BLE001 (reported to the parent, which judges it)
            send.send(Outcome(None, type(exc).__name__, str(exc)[:4000], err.getvalue(), traceback.format_exc()[-4000:]))

    process = context.Process(target=child, daemon=True)
    process.start()
    send.close()
    try:
        if not receive.poll(seconds):
            raise AssertionError(f"the call took more than {seconds} s (killed)")
        try:
            return receive.recv()
        except EOFError:
            raise AssertionError("the child died without an answer (out of memory or a crash)") from None
    finally:
        process.kill()
        process.join()
