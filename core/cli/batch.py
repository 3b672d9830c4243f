"""Headless runs: one scene to its close, a line per turn and a summary on stderr.

Exit codes: 0 when the scene closed (any reason, a stop included), 2 on invalid input (the
message names what to fix), 1 otherwise: an engine error, a run whose calls fail (close reason
`provider-error`, the cause on stderr; see `promptdesk.core.engine.outcome`), or a run folder that could not be
written (a full disk, a permission). Ctrl-C, SIGTERM and SIGHUP stop the scene gracefully: the log
is closed with a `stop` event and every file of the run folder is still written, during the
journal step too. A closed stderr (`2>&1 | head -1`) silences the printing, never the run.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

from promptdesk.core.cli import provider_flags
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, EXIT_INVALID, InvalidConfig, PromptdeskError
from promptdesk.core.record.events import BaseEvent, CloseEvent, SpeakEvent
from promptdesk.core.protocol.lines import folded, one_line, speech_line
from promptdesk.core.engine.outcome import PROVIDER_ERROR
from promptdesk.core.protocol.sanitize import strip_controls
from promptdesk.core.casting import places, scene_file
from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.record.outputs import fallback_notice
from promptdesk.core.engine.format import SceneReader
from promptdesk.core.formats.registry import FORMATS, get
from promptdesk.core.record.lines import PLAIN, FormatLines
from promptdesk.core.experiments.progress import silence

def options_from(ns: argparse.Namespace) -> RunOptions:
    """The run options a parsed command line asks for."""
    return RunOptions(isolation=ns.isolation, coordinator=ns.coordinator, provider=ns.provider, model=ns.model,
                      base_url=ns.base_url, characters_dirs=list(ns.characters_dirs), out=ns.out, seed=ns.seed,
                      max_beats=ns.max_beats, budget_usd=ns.budget_usd, journals=ns.journals,
                      on_escalate=getattr(ns, "on_escalate", None), headless=True,
                      pace=getattr(ns, "pace", None), suggested_events=getattr(ns, "suggested_events", None),
                      provider_settings=provider_flags.settings(ns), protocol=getattr(ns, "protocol", None))


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that stop the scene the way Ctrl-C does."""


def say(stream: TextIO, text: str) -> bool:
    """Print a line to `stream`; False (and never an exception) when the reader has gone away.
    A closed stderr is pointed at /dev/null so that the interpreter's last flush stays quiet."""
    try:
        print(strip_controls(text), file=stream, flush=True)
        return True
    except (BrokenPipeError, ValueError, OSError):
        silence(stream)
        return False


class TurnPrinter:
    """Prints one line per turn, world event, system line and close, with control sequences removed.
    Once the stream is closed it goes quiet; the run is unaffected. Quiet, it keeps the system lines
    written after the close (the journal step's failures), which the summary is followed by."""

    def __init__(self, cast: dict[str, str], stream: TextIO, quiet: bool = False, own: FormatLines = PLAIN) -> None:
        self.cast, self.stream, self.quiet, self.own = cast, stream, quiet, own
        self.unseen: list[str] = []
        self._closed = False

    def __call__(self, event: BaseEvent) -> None:
        if isinstance(event, CloseEvent):
            self._closed = True
        elif self._closed and self.quiet and event.type == "system":
            self.unseen.append(strip_controls(folded(event.text)))
        line = self.line(event)
        if line and not self.quiet:
            self.quiet = not say(self.stream, strip_controls(line))

    def line(self, event: BaseEvent) -> str | None:
        """The printed form of an event (always one line: what a model wrote is folded), or None for
        events not worth a line."""
        where = self.own.where(event.beat)
        if isinstance(event, SpeakEvent):
            name = self.cast.get(event.from_, event.from_)
            if event.action == "silent":
                return f"{where} {name} (silent{': ' + one_line(event.nonverbal) if event.nonverbal else ''})"
            return f"{where} {speech_line(name, event)}"
        if isinstance(event, CloseEvent):
            return f"{where} scene closed: {event.reason}"
        own = self.own.printed(event, self.cast)
        if own is not None:
            return own
        if event.type in ("event", "system", "note", "stop", "correct"):
            return f"{where} [{event.type.upper()}: {folded(event.text)}]"
        return None


def warn_unpriced(session: Any, stream: TextIO) -> None:
    """Say, before the run, each model whose cost will be unknown (never counted as $0)."""
    for model in session.start_info.get("unpriced_models", []):
        say(stream, f"WARNING: no price is known for {model}: its cost is unknown, left out of the totals, which "
            f"say so (+ unknown); metadata.json lists it under unpricedModels.")


def spent(session: Any) -> str:
    """What the run spent, for its summary: tokens and dollars, and what of it is unknown."""
    return f"{session.state.tokens:,} tokens, ${session.state.cost_usd:.4f}{unknown_spend(session)}"


def unknown_spend(session: Any) -> str:
    """What the summary's cost leaves out: `+ unknown (N calls sent no usage)`, `+ unknown (no price for M)`."""
    from promptdesk.core.record.outputs import costs, unknown_spend as unknown_words

    cut = costs(session.recorder.events)["cutOffInFlight"]
    unpriced = session.start_info.get("unpriced_models", [])
    spend = unknown_words({"unknownUsageCalls": session.state.unknown_usage, "cutOffInFlight": cut})
    return spend + (f" + unknown (no price for {', '.join(unpriced)})" if unpriced else "")


def run_batch(ns: argparse.Namespace, stream: TextIO | None = None) -> int:
    """Run the scene of `--batch` and return the exit code."""
    stream = stream or sys.stderr
    try:
        scene = scene_for(ns)
        escalations_answered(ns, scene)
        session = build_session(scene, options_from(ns))
    except PromptdeskError as exc:
        say(stream, str(exc))
        return EXIT_INVALID
    for notice in session.notices:
        say(stream, notice)
    warn_unpriced(session, stream)
    printer = TurnPrinter(session.state.cast, stream, quiet=ns.quiet, own=session.format.lines)
    session.subscribe(printer)
    result = asyncio.run(_run_with_signals(session))
    played = session.format.played(session, result)
    unit = session.format.unit.removesuffix("s") if played == 1 else session.format.unit
    cost = f"{spent(session)}, {result.counts}"
    if result.error is not None:
        say(stream, f"{result.error}\nThe run stopped after {played} {unit}, {cost}.\nRun folder: {result.run_dir}")
        return EXIT_FAILED
    say(stream, f"Scene closed: {session.format.outcome(session, result)} after {played} {unit}, {cost}.\n"
        f"Run folder: {result.run_dir}")
    for line in printer.unseen if ns.quiet else ():
        say(stream, f"NOTICE: {line}")
    if session.state.judge_fallbacks:
        say(stream, f"NOTICE: {fallback_notice(session.state.judge_fallbacks)}")
    for notice in session.state.closing_notices:
        say(stream, f"NOTICE: {notice}")
    for slug, cause in session.health.unavailable.items():
        others = ", the others played on" if result.close_reason != PROVIDER_ERROR else ""
        say(stream, f"NOTICE: {session.state.cast.get(slug, slug)} left the scene{others}: {cause}")
    if result.close_reason == PROVIDER_ERROR:
        say(stream, f"Run failed: {session.failure or session.health.cause}")
    return EXIT_FAILED if result.close_reason in ("error", PROVIDER_ERROR) else EXIT_CLOSED


def scene_for(ns: argparse.Namespace) -> Any:
    """The scene `--batch` runs: the file (or the scene a name means: `promptdesk.core.casting.places`),
    unless a format's flags make or change it."""
    if isinstance(ns.batch, Path):
        ns = argparse.Namespace(**{**vars(ns), "batch": places.find_scene(ns.batch, Path.cwd())})
    reader = SceneReader(scene_file.load_scene, lambda data, source: scene_file.scene_from_dict(data, source=source))
    for fmt in FORMATS.values():
        scene = fmt.scene_from_flags(ns, reader)
        if scene is not None:
            return scene
    if not isinstance(ns.batch, Path):
        raise InvalidConfig("--batch needs a scene file or a scene's name (promptdesk --batch SCENE ...)")
    return ns.batch


def escalations_answered(ns: argparse.Namespace, scene: Any) -> None:
    """`--on-escalate` answers a format's escalations (a roundtable's): for one that never escalates it
    would be ignored, so it is refused."""
    if getattr(ns, "on_escalate", None) is None:
        return
    fmt = get((scene if not isinstance(scene, Path) else scene_file.load_scene(scene)).format)
    if not fmt.escalates:
        raise InvalidConfig(f"--on-escalate answers a roundtable's escalations, and a {fmt.name} run never escalates: "
                            "drop the flag")


async def _run_with_signals(session):
    """Run the session; Ctrl-C, SIGTERM and SIGHUP ask it to stop instead of killing the process."""
    loop = asyncio.get_running_loop()
    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, session.stop)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        return await session.run()
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
