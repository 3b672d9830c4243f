"""`promptdesk resume RUN_DIR [--base-url URL] [--quiet]`: continue a scene run that was killed.

The session is rebuilt from the run folder alone: the scene, the choices, the providers and each
actor's briefing from `private.json`, then the state from `events.jsonl`, replayed through the
engine's own routing rules: every actor's inbox and (isolation b) thread, the coordinator's counters
(turns, nudges, silent streak, fired events), the public lines, tokens and cost, and the beat number.

Only one process writes a run folder at a time: `prepare` takes the folder's lock
(`promptdesk.core.record.folder_lock`) before it reads the log, and a second `resume` (or a resume of a run
still being played) is refused, exit 2, naming the holder's pid.

A run killed during its journal step (the close is on the log) finishes that step instead:
`promptdesk.core.casting.journal_resume`.

A beat that finished is on the log with its `beat_end` (flushed before anyone saw its lines go by):
the resumed run never plays it again. It makes the coordinator's check after it again (the kill came
during or after that check, whose records move aside) and goes on with the next beat. A beat cut off
before its end is replayed from its start. What follows the cut moves from `events.jsonl` to
`superseded.jsonl` and one `resume` event (`reason: "restart"`) marks the seam
(`promptdesk.core.record.seams`), so no beat number is repeated and no actor speaks twice in one beat,
for any reader of the log. The requests sent after the cut stay in `prompts.jsonl` (each was recorded
before it was sent); the seam names them (`unfinished_requests`). The run then closes normally and
writes every file.

Exit codes: 0 when the scene closed, 1 when it ended on an error, 2 when the folder is not a run,
was closed cleanly (nothing to resume) or is of a format that cannot be resumed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from promptdesk.core.engine.actors import Actor, make_actor
from promptdesk.core.characters.loading import Character
from promptdesk.core.engine.coordinator import JudgeCoordinator, RuleCoordinator
from promptdesk.core.errors import InvalidConfig, PromptdeskError, ProviderError
from promptdesk.core.record.folder_lock import FolderLock
from promptdesk.core.record.private import read_private
from promptdesk.core.casting import evaluators
from promptdesk.core.casting.build import clock_for
from promptdesk.core.casting.journal_resume import finished, journal_step, scores_owed
from promptdesk.core.casting.pool import ProviderPool
from promptdesk.core.casting.scene_file import Scene
from promptdesk.core.formats.registry import get
from promptdesk.core.providers.spec import ProviderSpec
from promptdesk.core.record.prompt_log import requests_since
from promptdesk.core.record.events import CallEvent, parse_event_json
from promptdesk.core.record.seams import RESTART, SUPERSEDED, Cut, find_cut, supersede
from promptdesk.core.record.takes import unbegun_take
from promptdesk.core.engine.session import Session
from promptdesk.core.protocol.bounded import json_lines


def _spec(data: dict[str, Any], base_url: str | None) -> ProviderSpec:
    spec = ProviderSpec.model_validate(data)
    return spec.model_copy(update={"base_url": base_url}) if base_url and spec.name != "offline" else spec


def _journal_path(member: dict[str, Any], run_dir: Path, slug: str) -> Path | None:
    """Where the character's journal is appended; None for a run without memory (recorded as null,
    or as "None" by earlier versions)."""
    if "journal_path" not in member:
        return run_dir / "journals" / f"{slug}.md"
    raw = member["journal_path"]
    return None if raw in (None, "", "None") else Path(raw)


def _notes(run_dir: Path) -> str:
    """`notes.md` as it stands (a byte that is not UTF-8 read as U+FFFD); empty when it is missing:
    everything a resume needs is in `private.json`, and the notes added from now on are written anew."""
    try:
        return (run_dir / "notes.md").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def rebuild_session(run_dir: Path, base_url: str | None = None, *, realtime: bool = False,
                    clock_start: float = 0.0) -> Session:
    """A session for the run folder, every actor briefed as it was at the start, at the pace it was
    played at; nothing replayed yet. `realtime` and `clock_start`: the clock's (`clock_for`)."""
    record = read_private(run_dir)
    scene = Scene.model_validate(record["scene"])
    fmt = get(scene.format)
    if not fmt.resumable():
        raise InvalidConfig(f"{run_dir} is a {scene.format} run: only scene runs can be resumed")
    judge = _spec(record["judge"], base_url) if record.get("judge") else None
    specs = {slug: _spec(record["providers"][slug], base_url) for slug in record["cast"]}
    clock = clock_for([*specs.values(), *([judge] if judge else []), *evaluators.specs_of(record)], realtime=realtime,
                      start=clock_start)
    pool = ProviderPool(record["seed"], clock)
    actors: list[Actor] = []
    characters: dict[str, Character] = {}
    for slug, member in record["cast"].items():
        journal = _journal_path(member, Path(run_dir), slug)
        character = Character(slug=slug, name=member["name"], description="", profile=member["profile"],
                              journal=member["journal"], profile_path=(journal or Path(run_dir) / slug).with_name("profile.md"),
                              journal_path=journal)
        spec = specs[slug]
        actor = make_actor(record["isolation"], character, member["briefing"], pool.get(spec),
                           window=scene.limits.window, thread_thinking=scene.thread_thinking)
        actor.turn_timeout_s = spec.turn_timeout_s
        actor.journal_timeout_s = spec.journal_turn_timeout_s
        actors.append(actor)
        characters[slug] = character
    role = record["coordinator"]
    coordinator = (RuleCoordinator() if role == "C" else
                   JudgeCoordinator(role, goal=scene.goal or "", operator_context=record.get("operator_context", "")))
    session = Session(scene, actors, fmt=fmt, isolation=record["isolation"], coordinator=coordinator, run_dir=Path(run_dir),
                   notes=_notes(Path(run_dir)), start_info=record.get("start", {}), clock=clock,
                   max_beats=record["max_beats"], budget_usd=record.get("budget_usd"), characters=characters,
                   write_character_journals=bool(record.get("write_character_journals", False)),
                   judge_provider=pool.get(judge) if judge else None,
                   pace_s=float(record.get("start", {}).get("pace_s") or 0.0))
    session.journal_step = bool(record.get("journal_step", True))
    evaluators.from_record(session, scene, record, pool, base_url)
    session.private_record = record  # on disk already: read by the leak check of suggestions, never rewritten
    return session


def _whole(run_dir: Path) -> bool:
    """Whether the log is closed with nothing of its journal or evaluation step missing (the run is
    finished: `resume` says so, whether or not its providers could be built)."""
    from types import SimpleNamespace

    from promptdesk.core.record.cut import cut_of
    from promptdesk.core.record.recorder import read_events

    try:
        events, record = read_events(run_dir, warn=lambda _: None), read_private(run_dir)
        owed = scores_owed(SimpleNamespace(evaluators=evaluators.specs_of(record), actors=record["cast"]), events)
        closed = any(event.type == "close" for event in events)
        return closed and not owed and cut_of(run_dir, events, record) is None
    except (PromptdeskError, OSError, ValueError, KeyError, TypeError):
        return False


def resumable(run_dir: Path, stopped_too: bool = False) -> bool:
    """Whether `prepare` could continue the run in `run_dir` (read only: nothing is changed or locked):
    a scene run with its start record whose log was cut off (or, `stopped_too`, closed by a stop), and
    not a take cut off before it began (a sweep sets that aside and takes it again)."""
    try:
        record = read_private(Path(run_dir))
        cut = find_cut(Path(run_dir), reopen_stopped=stopped_too)
        return (get(Scene.model_validate(record["scene"]).format).resumable() and not cut.closed
                and not unbegun_take(Path(run_dir), record, cut.kept))
    except (PromptdeskError, OSError, ValueError, KeyError, TypeError):
        return False


def prepare(run_dir: Path, base_url: str | None = None, *, stopped_too: bool = False) -> Session:
    """The killed run's session, its state replayed from the log up to the cut beat, ready to `run()`.

    The folder's writer lock is taken first (`FolderBusy` while another process writes it) and held
    by the session's recorder until the run's files are written. Nothing in the folder changes until
    the run is known to be resumable; then the cut beat's lines move to `superseded.jsonl`
    (`promptdesk.core.record.seams`). `stopped_too`: a run closed by a stop resumes too (a sweep's budget)."""
    run_dir = Path(run_dir)
    try:
        session = rebuild_session(run_dir, base_url, clock_start=_cut_time(find_cut(run_dir, reopen_stopped=stopped_too)))
    except ProviderError:  # no API key, say: a run with nothing to resume says that, not what it would need
        if not stopped_too and _whole(run_dir):
            raise InvalidConfig(finished(run_dir)) from None
        raise
    if session.private_record is not None and (unbegun := unbegun_take(run_dir, session.private_record,
                                                                        find_cut(run_dir).kept)):
        raise InvalidConfig(unbegun)
    lock = FolderLock.take(run_dir, "resume")
    try:
        cut = find_cut(run_dir, reopen_stopped=stopped_too)
        session.notices += [f"NOTICE: {text}" for text in cut.unreadable]
        if not (run_dir / "notes.md").exists():
            session.notices.append(f"NOTICE: {run_dir / 'notes.md'} is missing: the run is resumed from private.json, "
                                   "which holds all it needs, but the notes it held are not written again")
        if cut.closed:
            session = journal_step(run_dir, session)
            count_superseded(session, run_dir)
            session.recorder.lock = lock
            return session
        at = cut.beat
        session.format.restore(session, cut.kept, at, cut.finished)
        if cut.finished is not None:
            session.first_beat = (cut.finished.beat or 0) + 1
            began = next((e.t for e in cut.kept if e.type == "beat" and e.beat == cut.finished.beat), None)
            if began is not None:  # the finished beat's pace is still kept before the next begins
                session.pace.began(session.clock.now() - (_cut_time(cut) - began))
            text = (f"Run resumed after an interruption; beat {cut.finished.beat} had finished (the coordinator's "
                    f"check after it is made again); beat {session.first_beat} begins")
        else:
            session.first_beat = (at.beat or 0) if at else 0
            text = f"Run resumed after an interruption; beat {session.first_beat} is replayed from its start"
        session.state.beat = session.first_beat
        session.t_offset = _cut_time(cut)
        session.seam = {"text": text, "reason": RESTART, "beat": session.first_beat, "superseded": len(cut.moved),
                        "unfinished_requests": requests_since(run_dir, cut.since, cut.kept)}
        supersede(run_dir, cut)
        count_superseded(session, run_dir)
        session.recorder.lock = lock
        session.recorder.reopen(cut.kept)
    except BaseException:
        lock.release()
        raise
    return session


def _cut_time(cut: Cut) -> float:
    """Where a resumed run's time goes on: the cut's. Simulated time starts there (as a take's does at its beat),
    not at 0 shifted after, so a paced scene goes on to the tick as the run would have played."""
    return max([0.0, *(e.t for e in cut.kept), cut.beat.t if cut.beat else 0.0])


def count_superseded(session: Session, run_dir: Path) -> None:
    """The calls of the beats a resume played again (`superseded.jsonl`, this resume's and any
    before it) were paid for: their tokens and cost count in the resumed run's state, so that its
    summary says what the run cost and its budget stops it where the whole run's spend reaches it
    (`metadata.json` counts them too). A torn line (the kill's) is not a call."""
    path = Path(run_dir) / SUPERSEDED
    if not path.is_file():
        return
    for line in json_lines(path.read_text(encoding="utf-8", errors="replace")):
        try:
            event = parse_event_json(line)
        except ValueError:
            continue
        if isinstance(event, CallEvent):
            state = session.state
            state.tokens, state.cost_usd = state.tokens + event.tokens, state.cost_usd + (event.cost_usd or 0.0)
            state.unknown_usage += event.unknown
