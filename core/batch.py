"""Headless runs: one scene to its close, a line per turn and a summary on stderr.

Exit codes: 0 when the scene closed (any reason, a stop included), 2 on invalid input (the
message names what to fix), 1 otherwise. Ctrl-C stops the scene gracefully: the log is closed
with a `stop` event and every file of the run folder is still written.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import TextIO

from core.collab import lines as collab_lines
from core.roundtable import lines as roundtable_lines
from core.errors import EXIT_CLOSED, EXIT_FAILED, EXIT_INVALID, PromptdeskError
from core.events import BaseEvent, CloseEvent, SpeakEvent
from core.formatting import speech_line
from core.sanitize import strip_controls
from core.setup import RunOptions, build_session

def options_from(ns: argparse.Namespace) -> RunOptions:
    """The run options a parsed command line asks for."""
    return RunOptions(isolation=ns.isolation, coordinator=ns.coordinator, provider=ns.provider, model=ns.model,
                      base_url=ns.base_url, characters_dirs=list(ns.characters_dirs), out=ns.out, seed=ns.seed,
                      max_beats=ns.max_beats, budget_usd=ns.budget_usd,
                      on_escalate=getattr(ns, "on_escalate", None), headless=True,
                      pace=getattr(ns, "pace", None))


class TurnPrinter:
    """Prints one line per turn, world event, system line and close, with control sequences removed."""

    def __init__(self, cast: dict[str, str], stream: TextIO, quiet: bool = False) -> None:
        self.cast, self.stream, self.quiet = cast, stream, quiet

    def __call__(self, event: BaseEvent) -> None:
        line = self.line(event)
        if line and not self.quiet:
            print(strip_controls(line), file=self.stream, flush=True)

    def line(self, event: BaseEvent) -> str | None:
        """The printed form of an event, or None for events not worth a line."""
        where = f"[beat {event.beat}]" if event.beat is not None else "[-]"
        if isinstance(event, SpeakEvent):
            name = self.cast.get(event.from_, event.from_)
            if event.action == "silent":
                return f"{where} {name} (silent{': ' + event.nonverbal if event.nonverbal else ''})"
            return f"{where} {speech_line(name, event)}"
        if isinstance(event, CloseEvent):
            return f"{where} scene closed: {event.reason}"
        if collab_lines.is_public(event) and event.type != "human_message":
            return f"[round {(event.model_extra or {}).get('round', '-')}] {collab_lines.txt_line(event, self.cast)}"
        if roundtable_lines.is_public(event):
            return f"{where} {roundtable_lines.txt_line(event, self.cast)}"
        if event.type in ("event", "system", "note", "stop", "correct"):
            return f"{where} [{event.type.upper()}: {event.text}]"
        return None


def run_batch(ns: argparse.Namespace, stream: TextIO | None = None) -> int:
    """Run the scene of `--batch` and return the exit code."""
    stream = stream or sys.stderr
    try:
        from core.collab.headless import scene_for
        session = build_session(scene_for(ns), options_from(ns))
    except PromptdeskError as exc:
        print(str(exc), file=stream)
        return EXIT_INVALID
    session.subscribe(TurnPrinter(session.state.cast, stream, quiet=ns.quiet))
    result = asyncio.run(_run_with_sigint(session))
    goal = "goal achieved" if result.goal_achieved else "goal not achieved"
    unit = "rounds" if session.scene.format in ("collaborate", "roundtable") else "beats"
    played = len(session.roundtable.rounds) if session.roundtable is not None else result.beats
    print(f"Scene closed: {result.close_reason} ({goal}) after {played} {unit}, "
          f"{session.state.tokens:,} tokens, ${session.state.cost_usd:.4f}, {result.errors} actor failures.\n"
          f"Run folder: {result.run_dir}", file=stream)
    return EXIT_FAILED if result.close_reason == "error" else EXIT_CLOSED


async def _run_with_sigint(session):
    """Run the session; Ctrl-C asks it to stop instead of killing the process."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, session.stop)
    except (NotImplementedError, RuntimeError):
        pass
    try:
        return await session.run()
    finally:
        try:
            loop.remove_signal_handler(signal.SIGINT)
        except (NotImplementedError, RuntimeError):
            pass
