"""One run, one folder: created atomically and uniquely, never reused by `--out`, private."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.core.record.folder_lock import LOCK_FILE, FolderBusy, FolderLock, holder
from helpers import CHARACTERS, ROOT, SCENES

APOLOGY = str(SCENES / "the-apology.yaml")


def batch(capsys, out, *flags: str) -> tuple[int, str]:
    """A short run of a copy of the example scene (so that its journal store sits in the test's folder)."""
    scene = shutil.copy(APOLOGY, out.parent) if out.parent.is_dir() else APOLOGY
    code = main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "1", "--max-beats", "2",
                 "--characters-dir", str(CHARACTERS), "--out", str(out), *flags])
    return code, capsys.readouterr().err


def test_sessions_built_in_the_same_second_never_share_a_folder(tmp_path):
    barrier, folders, errors = threading.Barrier(8), [], []

    def build() -> None:
        try:
            barrier.wait()
            options = RunOptions(isolation="b", coordinator="C", runs_root=tmp_path / "runs", seed=1,
                                 characters_dirs=[CHARACTERS], cwd=tmp_path)
            folders.append(build_session(Path(APOLOGY), options).recorder.run_dir)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(folders)) == 8
    assert all(folder.is_dir() and folder.name.startswith("the-apology-") for folder in folders)


def test_out_naming_an_existing_run_folder_is_refused_and_left_untouched(tmp_path, capsys):
    out = tmp_path / "run"
    assert batch(capsys, out)[0] == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, err = batch(capsys, out)
    assert code == 2
    assert f"--out {out}: already holds files" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_out_may_name_an_empty_existing_folder(tmp_path, capsys):
    out = tmp_path / "empty"
    out.mkdir()
    assert batch(capsys, out)[0] == 0
    assert (out / "events.jsonl").is_file()


def test_an_out_that_cannot_be_created_is_one_line_and_exit_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out, why in ((blocker / "run", "Not a directory"), (tmp_path / ("n" * 300), "File name too long"),
                     (blocker, "exists and is not a folder")):
        code, err = batch(capsys, out)
        assert code == 2, err
        assert why in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def test_the_run_folder_and_every_file_in_it_are_private(tmp_path, capsys):
    out = tmp_path / "run"
    assert batch(capsys, out)[0] == 0
    paths = [out, *out.rglob("*")]
    assert (out / "journals").is_dir() and (out / "prompts.jsonl").is_file()
    for path in paths:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), f"{path} is {oct(mode)}"


# -- one writer per folder ---------------------------------------------------------------------------------------

HOLD = ("import sys; from pathlib import Path; from promptdesk.core.record.folder_lock import FolderLock; "
        "lock = FolderLock.take(Path(sys.argv[1]), sys.argv[2]); print('held', flush=True); sys.stdin.read(); "
        "lock.release()")


class Holder:
    """Another process holding a folder's lock until told to finish (`close`) or killed (`kill`)."""

    def __init__(self, folder: Path, what: str = "run") -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), what], cwd=ROOT, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == "held"  # it holds the lock now (a pipe, no waiting on a clock)
        self.pid = self.proc.pid

    def close(self) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc.stdin.close()


def quick_batch(capsys, out: Path) -> tuple[int, str]:
    """`batch`, with the offline improviser's simulated latency cut to almost nothing."""
    scene = out.parent / "the-apology.yaml"
    text = Path(APOLOGY).read_text()
    assert "latency_ms: [150, 900]" in text
    scene.write_text(text.replace("latency_ms: [150, 900]", "latency_ms: [1, 2]"))
    code = main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "1", "--max-beats", "2",
                 "--characters-dir", str(CHARACTERS), "--out", str(out)])
    return code, capsys.readouterr().err


def digest(folder: Path) -> dict[str, str]:
    """Every file of a folder (hidden ones included) by its SHA-256."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_second_writer_is_refused_naming_the_holder_until_it_is_gone(tmp_path, capsys):
    out = tmp_path / "run"
    assert quick_batch(capsys, out)[0] == 0
    assert not (out / LOCK_FILE).exists(), "a finished run leaves no lock file behind"
    holder_ = Holder(out, "resume")
    before = digest(out)
    assert main(["rebuild", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"FOLDER_BUSY: {out} is being written by process {holder_.pid}, a resume" in err
    assert f"kill {holder_.pid}" in err
    assert main(["resume", str(out)]) == 2
    assert f"process {holder_.pid}" in capsys.readouterr().err
    code, err = quick_batch(capsys, out)
    assert code == 2 and f"process {holder_.pid}" in err
    assert digest(out) == before
    with pytest.raises(FolderBusy, match=f"process {holder_.pid}"):
        FolderLock.take(out, "run")
    holder_.close()
    assert not (out / LOCK_FILE).exists()
    assert main(["rebuild", str(out)]) == 0


def test_a_lock_left_by_a_killed_process_never_blocks(tmp_path, capsys):
    out = tmp_path / "empty"
    out.mkdir()
    killed = Holder(out)
    killed.kill()
    assert (out / LOCK_FILE).read_text().split() == [str(killed.pid), "run"], "the file stays: only the lock went"
    assert holder(out) is None
    assert quick_batch(capsys, out)[0] == 0                        # an empty folder but for a dead lock is still empty
    assert not (out / LOCK_FILE).exists()
    Holder(out).kill()
    assert main(["rebuild", str(out)]) == 0
    assert not (out / LOCK_FILE).exists()


def test_one_process_cannot_take_a_folder_twice(tmp_path):
    with FolderLock.take(tmp_path, "sweep"):
        with pytest.raises(FolderBusy, match=r"\(this process\), a sweep"):
            FolderLock.take(tmp_path, "sweep")
    with FolderLock.take(tmp_path, "sweep") as again:
        assert again.held and holder(tmp_path) == f"{os.getpid()} sweep"
    assert not again.held and not (tmp_path / LOCK_FILE).exists()


def test_derived_files_are_replaced_whole_without_waiting_for_the_disk(tmp_path, monkeypatch):
    """The derived files are rebuilt from the events at need: replaced in one step, not synced; a
    file that is the only copy of what it holds (write_atomic's default) is synced before the rename."""
    import os
    from datetime import datetime

    from promptdesk.core.record import run_folder
    from promptdesk.core.record.events import GenericEvent
    from promptdesk.core.record.recorder import write_derived

    synced: list[int] = []
    monkeypatch.setattr(run_folder.os, "fsync", lambda fd: synced.append(fd))
    (tmp_path / "metadata.json").write_text("old")
    write_derived(tmp_path, [GenericEvent(t=0.0, **{"from": "coordinator"}, type="start", text="Scene x started")],
                  datetime(2026, 1, 1))
    assert synced == [] and (tmp_path / "metadata.json").read_text() != "old"
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]
    run_folder.write_atomic(tmp_path / "plan.json", "{}")
    assert len(synced) == 1 and (tmp_path / "plan.json").read_text() == "{}"
