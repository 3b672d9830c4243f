"""One writer per folder: an OS lock on `.lock` inside a run folder or a sweep folder.

A live run (console or `--batch`), a `resume`, a `rebuild` and a sweep each take the lock of the
folder they write before changing anything in it, and keep it until they are done. The lock is the
kernel's (`fcntl.flock` on `<folder>/.lock`), so it goes when its process goes, however it ends: a
`.lock` file left behind by a killed process is a plain file that never blocks anyone. The file
holds the holder's pid and what it is doing (`1234 resume`), for the message a second writer gets
(`FolderBusy`, exit 2). A holder that finishes removes the file, so a finished folder lists as before.

Readers (metrics, compare, audit, replay, reports) never take the lock: they read files that are
only ever appended to or replaced whole.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from promptdesk.core.errors import PromptdeskError

LOCK_FILE = ".lock"
FILE_MODE = 0o600


class FolderBusy(PromptdeskError):
    """Another process is writing the folder (exit 2: wait for it, or stop it, and run again)."""

    code = "FOLDER_BUSY"


class FolderLock:
    """The held lock of one folder; `release()` (or the end of the process) gives it up."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder, self._fd = Path(folder), fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    @classmethod
    def take(cls, folder: Path, what: str) -> FolderLock:
        """Lock `folder` for `what` (`run`, `resume`, `sweep`...) without waiting.

        Raises `FolderBusy` naming the holder when another process (or another writer of this one)
        holds it, `OSError` when the folder cannot hold a lock file."""
        folder = Path(folder)
        path = folder / LOCK_FILE
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _holder_text(fd)
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise busy(folder, holder) from None
                raise
            if _still_there(fd, path):
                break
            os.close(fd)  # the holder we waited on removed the file as it let go: lock the new one
        record = f"{os.getpid()} {what}\n".encode()
        os.pwrite(fd, record, 0)
        os.ftruncate(fd, len(record))
        return cls(folder, fd)

    def release(self) -> None:
        """Remove the lock file and let go of the lock (again: nothing)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.unlink(self.folder / LOCK_FILE)
        except OSError:
            pass
        os.close(fd)

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass


def holder(folder: Path) -> str | None:
    """Who holds `folder`'s lock (`"1234 resume"`), or None when no live process does.

    Creates nothing: a folder without a `.lock` file, or with one left by a dead process, has none."""
    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return _holder_text(fd) or "an unknown process"
        return None
    finally:
        os.close(fd)
    return None


def busy(folder: Path, held_by: str | None) -> FolderBusy:
    """The refusal a second writer gets, naming the holder and what to do."""
    pid, _, what = (held_by or "").partition(" ")
    if pid.isdigit():
        who = f"process {pid}" + (" (this process)" if int(pid) == os.getpid() else "") + (f", a {what}" if what else "")
        stop = f"wait for it to finish, or stop it (kill {pid}) and run again"
    else:
        who, stop = "another process", "wait for it to finish and run again"
    return FolderBusy(f"{folder} is being written by {who}; {stop}. (The lock is {Path(folder) / LOCK_FILE}; "
                      f"a lock left by a process that died never blocks.)", folder=str(folder), holder=held_by)


def _holder_text(fd: int) -> str | None:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace")
    except OSError:
        return None
    line = text.splitlines()[0].strip() if text.strip() else ""
    return line or None


def _still_there(fd: int, path: Path) -> bool:
    """True when `path` is still the file `fd` locked (a releasing holder unlinks it before letting go)."""
    try:
        now = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)
