"""The sweep's progress on stderr: a bar per condition redrawn in place on a terminal, plain lines
otherwise (a pipe, a log file, CI, a `TERM=dumb` terminal), nothing without a stderr."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from promptdesk.core.experiments.sweep_plan import failed_run

BAR = 20


def planned_rows(plan: Any, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The result row of each run the plan holds, its last when `results.jsonl` gives it more than once (a
    file appended to twice, a run retried), and the rows that name no run (counted by their condition): a row
    of a run the plan does not hold (another seed range, a line edited or pasted in) counts for nothing;
    each had been counted, and a sweep said `4/2 done`."""
    planned = {c.name for c in plan.combinations()}
    named = {row["run"]: row for row in results if row.get("run") in planned}
    return [*named.values(), *(row for row in results if row.get("run") is None)]


class _Nowhere:
    """Where the progress goes when there is no stderr at all (started with `2>&-`)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _redrawable(stream: Any) -> bool:
    """Whether the bars can be redrawn in place: a terminal that moves its cursor (`TERM=dumb`, Emacs's
    shell or a compile buffer, shows `\x1b[3F` as text: plain lines there, as on a pipe)."""
    import os

    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """Counts runs done and failed per condition, spend so far and an ETA, and shows them."""

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None, now: Any = time.monotonic) -> None:
        self.stream = stream or sys.stderr or _Nowhere()  # stderr closed (`2>&-`): the sweep runs all the same
        self.tty = _redrawable(self.stream) if tty is None else tty
        self.now = now
        self.done: dict[str, int] = {}
        self.failed: dict[str, int] = {}
        self.total: dict[str, int] = {}
        self.spent = 0.0
        self.unscored = 0
        """Agents the runs of this invocation left unscored (a failed evaluation call, an unreadable answer)."""
        self.ended = False
        self._drawn = 0

    def begin(self, plan: Any, results: list[dict[str, Any]], todo: int, spent: float | None = None,
              resumed: int = 0) -> None:
        """The sweep starts: `spent` is what it spent in earlier invocations (default: its results'
        costs), `resumed` how many of the `todo` runs continue where they stopped."""
        per = len(plan.seeds) * max(1, len(getattr(plan, "scenes", None) or ()))
        self.total = dict.fromkeys(plan.conditions(), per)
        self.done = dict.fromkeys(plan.conditions(), 0)
        self.failed = dict.fromkeys(plan.conditions(), 0)
        planned = {c.name: c.condition for c in plan.combinations()}
        for row in planned_rows(plan, results):  # by the planned run it is (a crashed run's line may name no condition)
            self._count(planned.get(row.get("run")) or row.get("condition")
                        or f"{row.get('isolation')}-{row.get('coordinator')}", row)
        self.spent = sum(row.get("cost_usd") or 0.0 for row in results) if spent is None else spent
        self.started, self.todo, self.finished_now = self.now(), todo, 0
        failed = sum(self.failed.values())
        self._say(f"sweep: {sum(self.total.values())} runs, {sum(self.done.values())} already done"
                  + (f" ({failed} of them failed)" if failed else "") + f", {todo} to run"
                  + (f" ({resumed} continuing where they stopped)" if resumed else "")
                  + (f", ${self.spent:.4f} already spent" if self.spent else ""))

    def _count(self, condition: str, row: dict[str, Any]) -> None:
        if condition in self.done:
            self.done[condition] += 1
            self.failed[condition] += failed_run(row)

    def finished(self, combo: Any, row: dict[str, Any], spent: float) -> None:
        self._count(combo.condition, row)
        self.spent, self.finished_now = spent, self.finished_now + 1
        self.unscored += row.get("unscored") or 0
        goal = {True: "goal achieved", False: "goal not achieved"}.get(row.get("goal_achieved"), "goal unknown")
        self._say(f"{combo.name}: {row.get('close_reason')} ({goal}) — {self.summary()}")

    def stopped(self, combo: Any, spent: float | None = None) -> None:
        if spent is not None:
            self.spent = spent
        self._say(f"{combo.name}: stopped before its close; it continues where it stopped when the sweep is run again")

    def end(self, stopping: str | None, spent: float | None = None, budget: float | None = None) -> None:
        """The sweep ends: finished, or stopped (by the budget, `spent` of `budget`, or a signal)."""
        if spent is not None:
            self.spent = spent
        of = f" (${self.spent:.4f} of ${budget:.4f})" if budget is not None else ""
        why = {"budget": f"stopped: the sweep's --budget-usd is spent{of}; run it again with a higher --budget-usd "
                         f"to go on", "stop": "stopped by a signal",
               "record-error": "stopped: a file could not be written (below)",
               "unknown-usage": "stopped: a call sent no token usage, so its cost is unknown and --budget-usd "
                                "cannot be kept; run without a budget, or on a server that reports usage"}.get(stopping or "")
        self.ended = True   # nothing runs on: no time left to estimate
        self._say(f"sweep {why or 'finished'} — {self.summary()}" + (
            f"\n{self.unscored} agent evaluation{'s' if self.unscored != 1 else ''} of these runs could not be recorded "
            "(a failed or stopped evaluation call, or an answer that could not be read): `promptdesk evaluate` on the sweep folder "
            "asks again for them, and `compare` counts them as unknown" if self.unscored else ""))

    def note(self, line: str) -> None:
        """Say something the operator should know now (a provider's wait), on a line of its own."""
        self._say(line)

    def eta_s(self) -> float | None:
        left = self.todo - self.finished_now
        if not self.finished_now or left <= 0:
            return None
        return (self.now() - self.started) / self.finished_now * left

    def summary(self) -> str:
        """Runs done and failed, the spend, and while the sweep runs the time it still needs."""
        done, failed, total = sum(self.done.values()), sum(self.failed.values()), sum(self.total.values())
        eta = None if self.ended else self.eta_s()
        return (f"{done}/{total} done, {failed} failed"
                + (f", {self.unscored} agent{'s' if self.unscored != 1 else ''} not scored" if self.unscored else "")
                + f", ${self.spent:.4f} spent"
                + (f", ETA {eta:.0f}s" if eta is not None else ""))

    def bars(self) -> list[str]:
        """One bar per condition, as drawn on a terminal."""
        lines = []
        for condition, total in self.total.items():
            filled = round(BAR * self.done[condition] / total) if total else BAR
            lines.append(f"{condition:>5} {'█' * filled}{'░' * (BAR - filled)} {self.done[condition]}/{total}"
                         f"{f'  {self.failed[condition]} failed' if self.failed[condition] else ''}")
        return lines

    def _say(self, line: str) -> None:
        if not self.tty:
            self._write(line + "\n")
            return
        up = f"\x1b[{self._drawn}F\x1b[J" if self._drawn else ""
        block = [line, *self.bars(), self.summary()]
        self._write(up + "\n".join(block) + "\n")
        width = self._columns()  # a line wider than the terminal takes several rows: move up over all of them
        self._drawn = sum(max(1, -(-len(text) // width)) for text in block)

    def _columns(self) -> int:
        """The terminal's width (80 when it cannot be told)."""
        import os

        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            return 80

    def _write(self, text: str) -> None:
        """Write and flush; a reader gone away (`2>&1 | head -1`) silences the progress, never the sweep
        (the write's BrokenPipeError stopped it after its first run, exit 1). The stream is pointed at
        /dev/null, so what else is said on it (the sweep's folder, a failure) is lost quietly too."""
        try:
            self.stream.write(text)
            self.stream.flush()
        except (ValueError, OSError):
            silence(self.stream)
            self.stream, self.tty = _Nowhere(), False


def silence(stream: Any) -> None:
    """Point the stream's file descriptor at the null device (a reader that went away, a closed stderr):
    later writes go nowhere instead of failing."""
    import os

    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
