"""`promptdesk resume RUN_DIR [--base-url URL] [--quiet]`: continue a scene run that was killed.

The session is rebuilt from the run folder alone: the scene, the choices, the providers and each
actor's briefing from `private.json`, then the state from `events.jsonl`, replayed through the
engine's own routing rules: every actor's inbox and (isolation b) thread, the coordinator's counters
(turns, nudges, silent streak, fired events), the public lines, tokens and cost, and the beat number.

The last beat on the log was cut off (a finished beat is always followed by the next one's `beat`
event, or by the close): it is replayed from its start. Its partial events move from `events.jsonl`
to `superseded.jsonl` and one `resume` event (`reason: "restart"`) marks the seam (`core.seams`), so
no beat number is repeated and no actor speaks twice in one beat, for any reader of the log. The
run then closes normally and writes every file.

Exit codes: 0 when the scene closed, 1 when it ended on an error, 2 when the folder is not a run,
was closed cleanly (nothing to resume) or is of a format that cannot be resumed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from core.actors import Actor, make_actor
from core.briefing import BEGIN_NOTE, note_line
from core.characters import Character
from core.clock import RealClock
from core.coordinator import JudgeCoordinator, RuleCoordinator
from core.errors import EXIT_CLOSED, EXIT_FAILED, EXIT_INVALID, InvalidConfig, PromptdeskError
from core.recorder import read_events
from core.policies.common import initial_speaker
from core.restore import Replay
from core.run_record import read_private
from core.scenes import ProviderSpec, Scene
from core.seams import RESTART, find_cut, is_seam, supersede
from core.session import Session


def _spec(data: dict[str, Any], base_url: str | None) -> ProviderSpec:
    spec = ProviderSpec.model_validate(data)
    return spec.model_copy(update={"base_url": base_url}) if base_url and spec.name != "offline" else spec


def rebuild_session(run_dir: Path, base_url: str | None = None) -> Session:
    """A session for the run folder, every actor briefed as it was at the start; nothing replayed yet."""
    from core.setup import ProviderPool, turn_timeout

    record = read_private(run_dir)
    scene = Scene.model_validate(record["scene"])
    if scene.format != "scene":
        raise InvalidConfig(f"{run_dir} is a {scene.format} run: only scene runs can be resumed")
    clock = RealClock()
    pool = ProviderPool(record["seed"], clock)
    actors: list[Actor] = []
    characters: dict[str, Character] = {}
    for slug, member in record["cast"].items():
        journal = Path(member.get("journal_path") or run_dir / "journals" / f"{slug}.md")
        character = Character(slug=slug, name=member["name"], description="", profile=member["profile"],
                              journal=member["journal"], profile_path=journal.with_name("profile.md"), journal_path=journal)
        spec = _spec(record["providers"][slug], base_url)
        actor = make_actor(record["isolation"], character, member["briefing"], pool.get(spec))
        actor.turn_timeout_s = turn_timeout(spec)
        actors.append(actor)
        characters[slug] = character
    role = record["coordinator"]
    coordinator = (RuleCoordinator() if role == "C" else
                   JudgeCoordinator(role, goal=scene.goal or scene.prompt or "", operator_context=record.get("operator_context", "")))
    judge = _spec(record["judge"], base_url) if record.get("judge") else None
    return Session(scene, actors, isolation=record["isolation"], coordinator=coordinator, run_dir=Path(run_dir),
                   notes=(Path(run_dir) / "notes.md").read_text(encoding="utf-8"), start_info=record.get("start", {}), clock=clock,
                   max_beats=record["max_beats"], budget_usd=record.get("budget_usd"), characters=characters,
                   write_character_journals=bool(record.get("write_character_journals", False)),
                   judge_provider=pool.get(judge) if judge else None)


def prepare(run_dir: Path, base_url: str | None = None) -> Session:
    """The killed run's session, its state replayed from the log up to the cut beat, ready to `run()`.

    Nothing in the folder changes until the run is known to be resumable; then the cut beat's lines
    move to `superseded.jsonl` (`core.seams`)."""
    run_dir = Path(run_dir)
    session = rebuild_session(run_dir, base_url)
    cut = find_cut(run_dir)
    if cut.closed:
        raise InvalidConfig(f"{run_dir} was closed cleanly: there is nothing to resume (rebuild its files with "
                            f"`promptdesk rebuild {run_dir}`)")
    replay = Replay(session)
    session.actors[initial_speaker(session)].receive(note_line(BEGIN_NOTE))
    for event in cut.kept:
        if not is_seam(event):
            replay.apply(event)
    replay.end_beat()
    at = cut.beat
    session.first_beat = session.state.beat = (at.beat or 0) if at else 0
    session.resumed_speaker = at.target if at and session.scene.turns == "sequential" else None
    session.t_offset = max([0.0, *(e.t for e in cut.kept), at.t if at else 0.0])
    session.seam = {"text": f"Run resumed after an interruption; beat {session.first_beat} is replayed from its start",
                    "reason": RESTART, "beat": session.first_beat, "superseded": len(cut.moved)}
    supersede(run_dir, cut)
    session.recorder.reopen(cut.kept)
    return session


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="promptdesk resume", description="Continue a scene run that was killed.")
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    p.add_argument("--base-url", dest="base_url", help="a new address for the run's remote providers")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    return p


def main(args: list[str]) -> int:
    """The command; exit 0 closed, 1 ended on an error, 2 not resumable."""
    from core.batch import TurnPrinter, _run_with_signals

    try:
        ns = parser().parse_args(args)
    except SystemExit as exc:
        return EXIT_INVALID if exc.code else EXIT_CLOSED
    try:
        session = prepare(ns.run_dir, ns.base_url)
    except (PromptdeskError, OSError, ValueError) as exc:
        print(str(exc) if isinstance(exc, PromptdeskError) else f"NOT_A_RUN: cannot resume {ns.run_dir}: {exc}",
              file=sys.stderr)
        return EXIT_INVALID
    print(f"Resuming {ns.run_dir} at beat {session.first_beat}.", file=sys.stderr)
    session.subscribe(TurnPrinter(session.state.cast, sys.stderr, quiet=ns.quiet))
    result = asyncio.run(_run_with_signals(session))
    print(f"Scene closed: {result.close_reason} after {result.beats} beats, {session.state.tokens:,} tokens, "
          f"${session.state.cost_usd:.4f}, {result.errors} actor failures.\nRun folder: {result.run_dir}", file=sys.stderr)
    return EXIT_FAILED if result.close_reason == "error" else EXIT_CLOSED
