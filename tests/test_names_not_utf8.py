"""Files and folders named in another encoding than UTF-8 (a folder from an old archive or a share named
in Latin-1, `caf\\xe9`): Python reads such a name with a lone surrogate in it, which UTF-8 cannot hold.
Run through the real entry point (`python -m promptdesk`), from such a folder and on such files: a run
is played and recorded whole, a take is made of it, its report is written, and a sweep, whose plan
file could not be read back, is refused up front with what to do, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

PLAY = ["--isolation", "b", "--coordinator", "C", "--provider", "offline", "--seed", "3", "--quiet", "--max-beats", "3"]
LATIN = os.fsdecode(b"caf\xe9")
"""`café` as Latin-1 wrote it: a name whose bytes are not UTF-8."""

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a name of any bytes needs a Linux file system")


def promptdesk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command as a person runs it: journals in `.promptdesk/journals/` of the working folder (the
    suite's own journal store is not passed on)."""
    env = {k: v for k, v in os.environ.items() if k != "PROMPTDESK_JOURNAL_STORE"}
    return subprocess.run([sys.executable, "-m", "promptdesk", *args], cwd=cwd, stdin=subprocess.DEVNULL, env=env,
                          capture_output=True, text=True, errors="backslashreplace", timeout=120)


def test_a_run_played_from_a_folder_named_in_latin_1_is_recorded_whole(tmp_path):
    """The journals' paths (beside the working folder) are in `private.json`: its write ended in a
    UnicodeEncodeError traceback (exit 1), leaving an empty log and a start record cut in the middle."""
    here = tmp_path / LATIN
    here.mkdir()
    done = promptdesk("--batch", "the-apology", *PLAY, "--out", "run", cwd=here)
    assert done.returncode == 0, done.stderr[-1500:]
    text = (here / "run" / "private.json").read_text(encoding="utf-8")
    assert "caf\\udce9" in text and LATIN in json.dumps(json.loads(text), ensure_ascii=False)  # the path, read back
    audit = promptdesk("audit", "run", cwd=here)
    assert audit.returncode == 0 and "Audit clean" in audit.stderr + audit.stdout, audit.stderr


def test_a_take_and_a_report_of_a_run_named_in_latin_1(tmp_path):
    """`branch` wrote the parent's name into the take's `notes.md` and refused ("cannot branch
    run\\udce9: 'utf-8' codec can't encode"); `report` of a scene file so named ended in a traceback."""
    (tmp_path / f"{LATIN}.yaml").write_text((ROOT / "scenes" / "the-apology.yaml").read_text(encoding="utf-8"),
                                           encoding="utf-8")
    (tmp_path / "characters").symlink_to(ROOT / "characters")
    played = promptdesk("--batch", f"{LATIN}.yaml", *PLAY, "--out", f"run-{LATIN}", cwd=tmp_path)
    assert played.returncode == 0, played.stderr[-1500:]
    take = promptdesk("branch", f"run-{LATIN}", "--at-beat", "1", "--note", "Say it plainly", "--out", "take",
                      "--quiet", cwd=tmp_path)
    assert take.returncode == 0, take.stderr[-1500:]
    assert "run-caf\\udce9" in (tmp_path / "take" / "notes.md").read_text(encoding="utf-8")
    assert promptdesk("audit", "take", cwd=tmp_path).returncode == 0
    for args in ([f"run-{LATIN}"], [f"run-{LATIN}", "take"]):
        page = promptdesk("report", *args, "--html", "page.html", cwd=tmp_path)
        assert page.returncode == 0 and "Traceback" not in page.stderr, page.stderr[-1500:]
        assert "caf\\udce9" in (tmp_path / "page.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["scene", "takes"])
def test_a_sweep_naming_a_latin_1_file_is_refused_before_anything_is_written(tmp_path, kind):
    """Its plan (`sweep.yaml`, `takes.yaml`) held the name as an escape YAML cannot read back: the sweep
    played, then `compare` and `report` of it, and the same sweep run again, were refused as damaged;
    a sweep of takes ended every take in an error, then in an AttributeError traceback."""
    (tmp_path / f"{LATIN}.yaml").write_text((ROOT / "scenes" / "the-apology.yaml").read_text(encoding="utf-8"),
                                           encoding="utf-8")
    (tmp_path / "characters").symlink_to(ROOT / "characters")
    if kind == "scene":
        args = ["sweep", f"{LATIN}.yaml", "--isolation", "b", "--coordinator", "C", "--seeds", "1-2"]
        named, plan = "scene: the name 'caf\\xe9.yaml'", "sweep.yaml"
    else:
        assert promptdesk("--batch", "the-apology", *PLAY, "--out", f"run-{LATIN}", cwd=tmp_path).returncode == 0
        args = ["sweep", "--branch-from", f"run-{LATIN}", "--at-beat", "1", "--note", "Say it", "--seeds", "1-2"]
        named, plan = "parent: the name '", "takes.yaml"
    done = promptdesk(*args, "--out", "swept", cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-1500:]
    assert done.stderr.startswith(f"INVALID_CONFIG: {named}") and "caf\\xe9" in done.stderr, done.stderr
    assert f"is not UTF-8 (its bytes were written in another encoding, Latin-1 perhaps); a sweep records it in {plan}" \
        in done.stderr and "rename it to a UTF-8 name" in done.stderr
    assert not (tmp_path / "swept").exists()


def test_a_take_of_a_sweep_that_crashes_is_recorded_as_a_failed_run(tmp_path, monkeypatch, capsys):
    """A take that raised something unforeseen was to be recorded as a run ended on an error; the row's
    making asked the take for a scene it has not, and the sweep ended in an AttributeError traceback."""
    from promptdesk.core.cli.main import main
    from promptdesk.core.experiments import take_sweep
    from promptdesk.core.experiments.sweep import read_results

    assert main(["--batch", "the-apology", *PLAY, "--out", str(tmp_path / "parent")]) == 0
    real = take_sweep.prepare_branch

    def crashing(parent, beat, change, **kw):  # noqa: ANN001, ANN202 - prepare_branch's
        if kw.get("out") is not None and Path(kw["out"]).name == "change-seed2":
            raise RuntimeError("an unforeseen fault")
        return real(parent, beat, change, **kw)

    monkeypatch.setattr(take_sweep, "prepare_branch", crashing)
    code = main(["sweep", "--branch-from", str(tmp_path / "parent"), "--at-beat", "1", "--note", "Say it",
                 "--seeds", "1-2", "--out", str(tmp_path / "swept")])
    assert code == 1
    rows = {row["run"]: row for row in read_results(tmp_path / "swept")}
    assert rows["change-seed2"]["close_reason"] == "error"
    assert rows["change-seed2"]["error"] == "RuntimeError: an unforeseen fault"
    assert rows["change-seed2"]["condition"] == "change" and rows["change-seed2"]["seed"] == 2
    assert {rows[name]["close_reason"] for name in ("retake-seed1", "retake-seed2", "change-seed1")} != {"error"}
    assert "Failed runs count as done" in capsys.readouterr().err
