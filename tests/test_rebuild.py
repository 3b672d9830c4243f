"""`promptdesk rebuild RUN_DIR`: every derived file rewritten from `events.jsonl` alone, never for worse:
a log that cannot rebuild them whole is refused with nothing changed, and each file is replaced in one step."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from promptdesk.core.cli.main import main
from helpers import ROOT, example_scene

DERIVED = ("events.json", "transcript.md", "transcript.txt", "metadata.json")


async def test_rebuild_rewrites_every_derived_file_from_the_log(run_scene, capsys):
    run = await run_scene(example_scene("the-apology"), isolation="a", coordinator="C")
    before = {name: (run.dir / name).read_text() for name in DERIVED}
    journals = sorted(p.name for p in (run.dir / "journals").iterdir())
    for name in DERIVED:
        (run.dir / name).unlink()
    (run.dir / "transcript.md").write_text("damaged")
    for path in (run.dir / "journals").iterdir():
        path.unlink()
    assert main(["rebuild", str(run.dir)]) == 0
    assert "Rebuilt" in capsys.readouterr().err
    for name in ("events.json", "metadata.json"):
        assert json.loads((run.dir / name).read_text()) == json.loads(before[name])
    body = lambda text: text.split("\n", 6)[-1]  # noqa: E731 - the header carries the date
    assert body((run.dir / "transcript.md").read_text()) == body(before["transcript.md"])
    assert (run.dir / "transcript.txt").read_text().count("\n") == before["transcript.txt"].count("\n")
    assert sorted(p.name for p in (run.dir / "journals").iterdir()) == journals


def test_rebuild_of_a_folder_that_is_not_a_run_exits_2(tmp_path, capsys):
    assert main(["rebuild", str(tmp_path)]) == 2
    assert "NOT_A_RUN" in capsys.readouterr().err
    assert not (tmp_path / "transcript.md").exists()
    assert main(["rebuild"]) == 2


@pytest.mark.parametrize("damage, says", [
    (lambda log: log.write_bytes(b""), "events.jsonl is empty"),
    (lambda log: log.write_bytes(b"\xff\xfe\x00garbled\n" * 40), "not readable events (line 1, 2, 3, 4, 5 ...)"),
    (lambda log: log.write_text("".join(line for line in log.read_text().splitlines(keepends=True)
                                        if '"type": "start"' not in line)), "has no `start` event"),
    (lambda log: log.write_text(log.read_text().replace('"type": "speak"', '"type": "spe', 1)), "not readable events (line"),
], ids=["empty", "unreadable", "no-start", "a-garbled-line-inside"])
async def test_rebuild_refuses_a_log_that_would_make_things_worse_and_changes_nothing(run_scene, capsys, damage, says):
    from test_run_folder import digest

    run = await run_scene(example_scene("the-apology"), isolation="a", coordinator="C")
    damage(run.dir / "events.jsonl")
    before = digest(run.dir)
    assert main(["rebuild", str(run.dir)]) == 2
    err = capsys.readouterr().err
    assert says in err and "nothing was changed" in err and err.startswith("NOT_A_RUN")
    assert digest(run.dir) == before
    assert json.loads((run.dir / "metadata.json").read_text())["totalBeats"] > 0


async def test_a_torn_last_line_is_a_kill_mid_write_and_does_not_stop_a_rebuild(run_scene, capsys):
    run = await run_scene(example_scene("the-apology"), isolation="a", coordinator="C")
    log = run.dir / "events.jsonl"
    log.write_text(log.read_text() + '{"t": 9.0, "from": "alice", "te')
    assert main(["rebuild", str(run.dir)]) == 0
    assert len(json.loads((run.dir / "events.json").read_text())) == len(run.events())


REBUILD_UNDER_A_SIZE_LIMIT = """
import resource, signal, sys
from promptdesk.core.cli.main import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
sys.exit(main(["rebuild", sys.argv[1]]))
"""


async def test_a_write_that_fails_midway_leaves_every_old_file_whole(run_scene):
    """A real fault mid-write: the file-size limit (RLIMIT_FSIZE) stops `events.json` part way. Each
    derived file is replaced in one step, so the folder is exactly as it was."""
    from test_run_folder import digest

    run = await run_scene(example_scene("the-apology"), isolation="a", coordinator="C")
    assert main(["rebuild", str(run.dir)]) == 0           # the derived files as a rebuild writes them
    limit = 4096
    assert (run.dir / "events.json").stat().st_size > 2 * limit
    before = digest(run.dir)
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", REBUILD_UNDER_A_SIZE_LIMIT, str(run.dir),
                                                    str(limit)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "File too large" in done.stderr, done.stderr
    assert digest(run.dir) == before


async def test_the_files_rebuilt_for_a_run_cut_off_never_say_it_closed(run_scene, capsys):
    """A killed run's log has no close: its rebuilt transcripts say the scene was interrupted and never
    closed, never `SCENE END` or `closed: …`; a closed run's still end as the spec has them."""
    run = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C")
    assert "[SCENE END - Goal: " in (run.dir / "transcript.txt").read_text()
    log = run.dir / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:next(i for i, line in enumerate(lines) if '"type": "close"' in line)]))
    assert main(["rebuild", str(run.dir)]) == 0
    txt, md = ((run.dir / name).read_text() for name in ("transcript.txt", "transcript.md"))
    assert "SCENE END" not in txt
    assert "(closed: " not in txt + md
    assert "[SCENE INTERRUPTED - never closed: the record was cut off before the scene's close]" in txt
    assert "*[scene interrupted]*" in md and "- Goal: Unknown (never closed: the record was cut off" in md
    assert json.loads((run.dir / "metadata.json").read_text())["reason"] == "incomplete"


async def test_a_folder_the_system_will_not_let_us_write_is_refused_naming_the_file_and_what_to_do(run_scene, capsys):
    """A run folder that cannot be written (here its lock file cannot be opened: it is a folder; a
    read-only mount or a permission is alike) is refused by rebuild and resume, naming the file, why,
    and what to do: never a traceback, never a word of it changed."""
    from test_run_folder import digest

    run = await run_scene(example_scene("the-apology"), isolation="b", coordinator="C")
    log = run.dir / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:next(i for i, line in enumerate(lines) if '"type": "close"' in line)]))
    (run.dir / ".lock").mkdir()
    before = digest(run.dir)
    for verb in ("rebuild", "resume"):
        capsys.readouterr()
        assert main([verb, str(run.dir)]) == 2
        err = capsys.readouterr().err
        assert f"cannot {verb} {run.dir}: Is a directory: {run.dir / '.lock'}; make the run folder" in err
        assert f"then {verb} again" in err and "Errno" not in err
    assert digest(run.dir) == before
