"""`promptdesk rebuild RUN_DIR`: every derived file rewritten from `events.jsonl` alone."""

from __future__ import annotations

import json

from core.cli.main import main
from helpers import example_scene

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
