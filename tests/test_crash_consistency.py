"""A run folder as a crash or a full disk leaves it, and what each command makes of it (qa10 crash pass)."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from promptdesk.core.cli.batch import run_batch
from promptdesk.core.cli.main import parser
from promptdesk.core.record.recorder import Recorder
from helpers import CHARACTERS, SCENES
from test_engine_records import FillsUp


@pytest.mark.skipif(not shutil.os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(("scene", "coordinator", "lines"), [
    ("morning-kitchen", "B", 9), ("morning-kitchen", "B", 12), ("morning-kitchen", "A", 15),
    ("morning-kitchen", "C", 0), ("roundtable-free", "A", 0), ("fairy-tale", "B", 0)])
def test_a_disk_that_fills_is_exit_1_not_a_traceback(tmp_path, monkeypatch, scene, coordinator, lines):
    """With a judge (coordinator A or B) the goal verdict was asked after the record had failed: the judge's
    request could not be recorded, and the recording error escaped as a traceback (the run's result,
    exit code and metadata lost). So did a disk that filled on the `start` event, in every format.
    A run whose record failed asks no judge and plays nothing more: exit 1, RECORDING_ERROR."""
    original = Recorder.open

    def open_on_a_small_disk(self):
        original(self)
        self._files["events.jsonl"] = FillsUp(self._files["events.jsonl"], lines)

    monkeypatch.setattr(Recorder, "open", open_on_a_small_disk)
    out = tmp_path / "run"
    ns = parser().parse_args(["--batch", str(SCENES / f"{scene}.yaml"), "--isolation", "b", "--coordinator", coordinator,
                              "--characters-dir", str(shutil.copytree(CHARACTERS, tmp_path / "characters")),
                              "--journals", "none", "--out", str(out), "--seed", "4"])
    stream = io.StringIO()
    assert run_batch(ns, stream) == 1
    said = stream.getvalue()
    assert "RECORDING_ERROR: could not write events.jsonl" in said and "the disk is full" in said
    assert "Scene closed" not in said
    kept = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert len(kept) == lines and not any(e["type"] in ("close", "stop") for e in kept)
    assert json.loads((out / "metadata.json").read_text())["reason"] == "incomplete"


def test_a_sweep_compared_or_reported_while_it_runs_says_it_is_running_not_to_run_it_again(tmp_path, monkeypatch, capsys):
    """`compare` and `report` of a sweep folder another process is sweeping said "run the sweep's command
    again to finish it" (or "run the sweep first"), which a second sweep refuses (the folder is locked):
    they say the sweep is running, by which process, and to look again when it has finished."""
    import os

    from promptdesk.core.cli.main import main
    from promptdesk.core.record.folder_lock import FolderLock

    monkeypatch.chdir(tmp_path)
    sweep = tmp_path / "sw"
    assert main(["sweep", str(SCENES / "morning-kitchen.yaml"), "--isolation", "a,b", "--coordinator", "C",
                 "--seeds", "1-2", "--max-beats", "2", "--out", str(sweep),
                 "--characters-dir", str(shutil.copytree(CHARACTERS, tmp_path / "characters"))]) == 0
    results = sweep / "results.jsonl"
    rows = results.read_text().splitlines()
    results.write_text(rows[0] + "\n")  # three runs still to come
    capsys.readouterr()
    with FolderLock.take(sweep, "sweep"):
        assert main(["compare", str(sweep)]) == 0
        said = " ".join(capsys.readouterr().out.split())
        assert f"the sweep is still running (process {os.getpid()})" in said and "command again" not in said
        assert main(["compare", str(sweep), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["left_out"][0]["sweeping"] == f"{os.getpid()} sweep"
        results.write_text("")
        for argv in (["compare", str(sweep)], ["report", str(sweep), "--html", str(tmp_path / "r.html")]):
            assert main(argv) == 2
            err = " ".join(capsys.readouterr().err.split())
            assert f"it is being swept now (process {os.getpid()})" in err and "run the sweep first" not in err
    assert main(["compare", str(sweep)]) == 2
    assert "run the sweep first" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["missing", "empty", "cut short"])
def test_rebuild_refuses_when_superseded_jsonl_lacks_what_the_seams_moved_there(tmp_path, monkeypatch, capsys, damage):
    """A resumed run's costs count the calls of the beat it played again, kept in `superseded.jsonl`. With
    that file gone (or cut short), `rebuild` silently rewrote a good `metadata.json` with fewer tokens and
    `cutCalls: 0`: a different record. It refuses instead (exit 2, every file as it was), naming the file."""
    from promptdesk.core.cli.main import main

    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C", "--seed", "5",
                 "--max-beats", "4", "--journals", "none", "--quiet", "--out", str(run),
                 "--characters-dir", str(shutil.copytree(CHARACTERS, tmp_path / "characters"))]) == 0
    log = run / "events.jsonl"
    lines = log.read_text().splitlines()
    cut = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "beat" and json.loads(line)["beat"] == 2)
    log.write_text("\n".join(lines[:cut + 4]) + "\n")  # killed in beat 2, after some of its calls
    assert main(["resume", str(run), "--quiet"]) == 0
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["costs"]["cutCalls"] > 0
    superseded = run / "superseded.jsonl"
    kept = superseded.read_text().splitlines()
    if damage == "missing":
        superseded.unlink()
    else:
        superseded.write_text("" if damage == "empty" else "\n".join(kept[:-1]) + "\n")
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    capsys.readouterr()
    assert main(["rebuild", str(run)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "superseded.jsonl" in err and "nothing was changed" in err
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before


def test_a_resume_killed_before_it_replaced_the_log_does_not_count_the_cut_calls_twice(tmp_path, monkeypatch, capsys):
    """`resume` writes the cut beat's lines to `superseded.jsonl`, then replaces `events.jsonl` by its kept
    part. Killed between the two, the log still held those lines, and the next `resume` appended them to
    `superseded.jsonl` again: their calls counted twice in `metadata.json` (`cutCalls`, tokens) and the
    summary. The next resume finds them already there, and the record is the one a single resume makes."""
    import os

    from promptdesk.core.cli.main import main
    from promptdesk.core.record import seams

    monkeypatch.chdir(tmp_path)
    characters = shutil.copytree(CHARACTERS, tmp_path / "characters")
    full = tmp_path / "full"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C", "--seed", "5",
                 "--max-beats", "4", "--journals", "none", "--quiet", "--out", str(full),
                 "--characters-dir", str(characters)]) == 0
    lines = (full / "events.jsonl").read_text().splitlines()
    cut = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "beat" and json.loads(line)["beat"] == 2)
    runs = {}
    for name in ("once", "twice"):
        runs[name] = shutil.copytree(full, tmp_path / name)
        for derived in ("events.json", "metadata.json", "transcript.md", "transcript.txt"):
            (runs[name] / derived).unlink()
        (runs[name] / "events.jsonl").write_text("\n".join(lines[:cut + 4]) + "\n")
    assert main(["resume", str(runs["once"]), "--quiet"]) == 0

    class Killed(BaseException):
        pass

    def killed(*args):
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(seams.os, "replace", killed)
        with pytest.raises(Killed):
            main(["resume", str(runs["twice"]), "--quiet"])
    assert main(["resume", str(runs["twice"]), "--quiet"]) == 0
    def written(run: Path, name: str) -> str:
        """The file, its moment of writing aside (`GENERATED:` of transcript.txt: the resumes ran at two times)."""
        return re.sub(r"(?m)^GENERATED: .*$", "GENERATED: <when>", (run / name).read_text())

    for name in ("superseded.jsonl", "events.jsonl", "metadata.json", "transcript.txt"):
        assert written(runs["twice"], name) == written(runs["once"], name).replace(str(runs["once"]), str(runs["twice"])), name
    assert os.path.exists(runs["twice"] / "events.jsonl")


def test_a_sweep_run_that_closed_without_its_result_line_is_read_not_played_again(tmp_path, monkeypatch, capsys):
    """A killed sweep's run finished by hand (`promptdesk resume RUN`, as the audit's CUT line says), or a
    kill between a run's close and its result line, left a whole, closed run with no line in
    `results.jsonl`: running the sweep again set it aside as `<run>.partial-1` and played (and paid for) it
    again from its start. Its result is now read from its folder."""
    from promptdesk.core.cli.main import main
    from promptdesk.core.experiments.sweep import read_results

    monkeypatch.chdir(tmp_path)
    sweep = tmp_path / "sw"
    args = ["sweep", str(SCENES / "morning-kitchen.yaml"), "--isolation", "a,b", "--coordinator", "C", "--seeds", "1-2",
            "--max-beats", "3", "--out", str(sweep),
            "--characters-dir", str(shutil.copytree(CHARACTERS, tmp_path / "characters"))]
    assert main(args) == 0
    rows = read_results(sweep)
    (sweep / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows if r["run"] != "b-C-seed1"))
    played = (sweep / "b-C-seed1" / "events.jsonl").read_bytes()
    assert main(args) == 0
    assert "0 failed" in capsys.readouterr().err
    assert not list(sweep.glob("*.partial-*"))
    assert (sweep / "b-C-seed1" / "events.jsonl").read_bytes() == played
    assert sorted(read_results(sweep), key=lambda r: r["run"]) == sorted(rows, key=lambda r: r["run"])


def test_a_resume_on_a_full_disk_names_the_file_and_leaves_the_folder_as_it_was(tmp_path, monkeypatch, capsys):
    """On a full disk, `resume` refused "cannot resume RUN: No space left on device" without naming the file,
    and left part of the cut beat's lines appended to `superseded.jsonl` (or a partial `events.jsonl.tmp`).
    The refusal names the file, and every file is as it was, so the resume after freeing space is the one
    an untroubled resume makes."""
    import errno

    from promptdesk.core.cli.main import main
    from promptdesk.core.record import seams

    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C", "--seed", "5",
                 "--max-beats", "4", "--journals", "none", "--quiet", "--out", str(run),
                 "--characters-dir", str(shutil.copytree(CHARACTERS, tmp_path / "characters"))]) == 0
    lines = (run / "events.jsonl").read_text().splitlines()
    cut = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "beat" and json.loads(line)["beat"] == 2)
    (run / "events.jsonl").write_text("\n".join(lines[:cut + 4]) + "\n")
    for name in ("events.json", "metadata.json", "transcript.md", "transcript.txt"):
        (run / name).unlink()
    (run / "superseded.jsonl").write_text("")
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    real_fsync = seams.os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    for step in ("superseded", "log"):
        with monkeypatch.context() as m:
            if step == "superseded":
                m.setattr(seams.os, "fsync", full)
            else:
                m.setattr(seams.os, "fsync", lambda fd: real_fsync(fd) if os_size(fd) != len(
                    "".join(line + "\n" for line in lines[:cut])) else full(fd))
            capsys.readouterr()
            assert main(["resume", str(run), "--quiet"]) == 2
            err = " ".join(capsys.readouterr().err.split())
            assert "the disk is full" in err and ("superseded.jsonl" in err if step == "superseded" else "events.jsonl" in err)
        assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file() and p.name != ".lock"} == before, step
    assert main(["resume", str(run), "--quiet"]) == 0
    calls = sum(json.loads(line)["type"] == "call" for line in lines[cut:cut + 4])
    assert json.loads((run / "metadata.json").read_text())["costs"]["cutCalls"] == calls > 0


def os_size(fd: int) -> int:
    import os
    return os.fstat(fd).st_size
