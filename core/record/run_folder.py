"""One run, one folder: created atomically and uniquely, never reused, private to its owner.

A run folder is made with a single `mkdir` (which fails if the name is taken), so two runs started
in the same second get two folders. `--out` may name a new or an empty folder, never one that
already holds files. Claiming a folder takes its writer's lock (`promptdesk.core.record.folder_lock`), kept by
the run's recorder until its files are written. The folder is 0700 and every file in it 0600:
`prompts.jsonl` holds every actor's private perspective and profile. Files that are rewritten whole
(the derived files) are replaced in one step (`write_atomic`), so a crash mid-write leaves the old one.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from promptdesk.core.errors import InvalidConfig
from promptdesk.core.record.folder_lock import LOCK_FILE, FolderLock, busy, holder

DIR_MODE, FILE_MODE = 0o700, 0o600

RUN_FILES: dict[str, str] = {
    "notes.md": "Written before any actor is spawned. Its first two lines are the two choices "
                "(`Isolation:        (a|b) — …`, `Coordinator role: (A|B|C) — …`); then the provider, model, seed, cast, "
                "and the operator's decisions.",
    "events.jsonl": "The authoritative log: one event per line, appended and flushed as it happens (the event types "
                    "below). The transcripts, `events.json`, `metadata.json`, `journals/` and `evaluation.json` can be "
                    "rebuilt from it (`promptdesk rebuild`); a roundtable's `session.yaml` and `summary.md` are not "
                    "(they are written as it plays and at its close).",
    "events.json": "The same events as one JSON array (spec 000's format), written at the close.",
    "transcript.md": "Spec 000's transcript: a header, `**NAME:** speech` lines, `*[end of scene]*`, post-scene notes.",
    "transcript.txt": "Spec 004's transcript: bracket headers, `[EVENT: …]`, `[SCENE END - Goal: …]`, statistics.",
    "metadata.json": "Spec 004's SceneResult metadata: name, duration, beats, goal, close reason, errors, salvaged "
                     "replies, costs (tokens, USD) and per-actor counts.",
    "prompts.jsonl": "Every request sent to every actor and judge, one per line (a delta against the same actor's "
                     "previous request when that is its prefix); never an API key. What `promptdesk audit` checks.",
    "private.json": "The run's private material (each actor's perspective, profile and journal, the coordinator "
                    "notes), which the audit looks for in every request.",
    "debug.log": "Warnings and errors, with their context.",
    "evaluation.json": "What the evaluator scored after the close (`evaluate:` in the scene, or `promptdesk evaluate`): "
                       "per rubric and evaluator, each actor's scores (null: unknown, with why), reasoning and overall "
                       "mean, and the mean over the actors; rebuilt from the `evaluation` events.",
    "journals/": "This run's journal entries, one file per character (each is also appended to the character's "
                 "own journal, under a dated heading).",
    LOCK_FILE: "Held while a process writes the folder (its pid): a second writer is refused, naming it.",
}
"""Every file a run folder holds, and what it is (the run-folder reference lists them)."""


def _refuse(path: Path, why: str) -> InvalidConfig:
    return InvalidConfig(f"--out {path}: {why}; give a new or empty folder.", out=str(path))


def claim_out(path: Path) -> FolderLock:
    """Create `--out` (or take it if it is an empty folder) and lock it; refuse a folder that holds
    anything (naming the process writing it, if one is). A `.lock` left by a dead process is no content."""
    try:
        path.mkdir(parents=True, mode=DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise _refuse(path, "exists and is not a folder") from None
        _check_empty(path)
    except OSError as exc:
        raise _refuse(path, f"cannot be created ({exc.strerror or exc})") from None
    lock = _lock(path)
    try:
        _check_empty(path)
    except BaseException:
        lock.release()
        raise
    _chmod(path, DIR_MODE)
    return lock


def _check_empty(path: Path) -> None:
    try:
        if any(p.name != LOCK_FILE for p in path.iterdir()):
            if (who := holder(path)) is not None:
                raise busy(path, who)
            raise _refuse(path, "already holds files (a run folder is never reused)")
    except OSError as exc:
        raise _refuse(path, f"cannot be read ({exc.strerror or exc})") from None


def _lock(path: Path) -> FolderLock:
    try:
        return FolderLock.take(path, "run")
    except OSError as exc:
        raise _refuse(path, f"cannot be locked ({exc.strerror or exc})") from None


def claim_fresh(root: Path, name: str, when: datetime | None = None) -> FolderLock:
    """Create `root/<name>-<YYYYmmdd-HHMMSS>`, suffixed `-2`, `-3`… when taken, in one atomic step
    each, and lock it."""
    stamp = f"{name}-{(when or datetime.now()):%Y%m%d-%H%M%S}"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidConfig(f"cannot create the runs folder {root} ({exc.strerror or exc}); "
                            f"give --out DIR somewhere writable.", out=str(root)) from None
    n = 1
    while True:
        candidate = root / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            candidate.mkdir(mode=DIR_MODE)
        except FileExistsError:
            n += 1
            continue
        except OSError as exc:
            raise InvalidConfig(f"cannot create the run folder {candidate} ({exc.strerror or exc}); "
                                f"give --out DIR somewhere writable.", out=str(candidate)) from None
        _chmod(candidate, DIR_MODE)
        return _lock(candidate)


def open_private(path: Path, mode: str = "a"):
    """Open a text file of the run folder, created 0600. A lone surrogate (a path whose bytes are not
    UTF-8, such as a folder named in Latin-1, `caf\xe9/`) is written as its `\\udce9` escape, as
    `recorder.storable` writes it: inside a JSON string it reads back as the same path; in plain text it
    shows what was there, instead of a traceback that leaves the file half written."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    handle = os.fdopen(os.open(path, flags, FILE_MODE), mode, encoding="utf-8", errors="backslashreplace")
    _chmod(path, FILE_MODE)
    return handle


def write_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Replace `path` with `text` (UTF-8, 0600) in one step: written (and, when `durable`, synced to
    disk) to a temporary file beside it, then renamed over it. A crash (or a full disk) mid-write
    leaves the old file whole.

    `durable=False` is for files rebuilt from the run's events (the derived files): the rename keeps
    them whole when the process dies, and what a power cut may leave of them `promptdesk rebuild`
    writes again, so they need not wait for the disk (a sweep writes five per run; the sync of each
    cost more than the run's own work)."""
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE), "w",
                       encoding="utf-8", errors="backslashreplace") as handle:  # as `open_private`
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def lock_down(run_dir: Path) -> None:
    """Make the folder and everything in it private (0700 folders, 0600 files)."""
    _chmod(run_dir, DIR_MODE)
    for folder, dirs, files in os.walk(run_dir):
        for name in dirs:
            _chmod(Path(folder) / name, DIR_MODE)
        for name in files:
            _chmod(Path(folder) / name, FILE_MODE)


def _chmod(path: Path, mode: int) -> None:
    try:
        os.chmod(path, mode, follow_symlinks=False)
    except (NotImplementedError, OSError):
        try:
            if not path.is_symlink():
                os.chmod(path, mode)
        except OSError:
            pass
