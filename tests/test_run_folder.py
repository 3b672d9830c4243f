"""One run, one folder: created atomically and uniquely, never reused by `--out`, private."""

from __future__ import annotations

import shutil
import stat
import threading
from pathlib import Path

from core.cli.main import main
from core.casting.build import RunOptions, build_session
from helpers import CHARACTERS, SCENES

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
