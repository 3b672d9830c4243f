"""A sweep the size a study is: the work done per finished run must not grow with the runs already done
(each result line is appended, never after rereading the whole `results.jsonl`)."""

from __future__ import annotations

import builtins
import io
import json
from pathlib import Path

import pytest

from promptdesk.core.experiments import sweep as sweep_module
from promptdesk.core.experiments.sweep import Sweep, SweepPlan, read_results
from test_sweep import scene_file


class Counting:
    """Counts the bytes read from `results.jsonl`, however the code reads it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        real_open, real_bytes, real_text = builtins.open, Path.read_bytes, Path.read_text
        counter = self

        class Handle:
            def __init__(self, handle, counted: bool) -> None:
                self._h, self._counted = handle, counted

            def read(self, *args):
                data = self._h.read(*args)
                counter.read += len(data) if self._counted else 0
                return data

            def __getattr__(self, name):
                return getattr(self._h, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return self._h.__exit__(*exc)

        def counted(path) -> bool:
            return str(path).endswith("results.jsonl")

        def opening(path, *args, **kwargs):
            return Handle(real_open(path, *args, **kwargs), counted(path))

        def read_bytes(path):
            data = real_bytes(path)
            counter.read += len(data) if counted(path) else 0
            return data

        def read_text(path, *args, **kwargs):
            data = real_text(path, *args, **kwargs)
            counter.read += len(data) if counted(path) else 0
            return data

        monkeypatch.setattr(sweep_module, "open", opening, raising=False)
        monkeypatch.setattr(Path, "read_bytes", read_bytes)
        monkeypatch.setattr(Path, "read_text", read_text)


def test_appending_a_result_reads_no_more_of_results_jsonl_however_long_it_is(tmp_path, monkeypatch):
    """Rereading the file for each line made a sweep of N runs read O(N²) bytes (a 36,000-run benchmark
    sweep: hundreds of GB). Appending 200 lines to a 4 MB file now reads a byte or so per line."""
    plan = SweepPlan(scene=str(scene_file(tmp_path)), isolations=["a"], coordinators=["C"], seeds=[1])
    sweep = Sweep(plan, tmp_path / "sweep")
    sweep.folder.mkdir()
    filler = json.dumps({"run": "x", "pad": "p" * 400}) + "\n"
    (sweep.folder / "results.jsonl").write_text(filler * 10_000 + '{"run": "torn')  # 4 MB, a torn last line
    counting = Counting(monkeypatch)
    for k in range(200):
        sweep._append({"run": f"r{k}", "close_reason": "natural"})
    assert counting.read < 2_000, f"{counting.read:,} bytes of results.jsonl read for 200 appends"
    monkeypatch.undo()
    rows = read_results(sweep.folder)
    assert [r["run"] for r in rows[-200:]] == [f"r{k}" for k in range(200)]  # the torn line kept apart
    assert len(rows) == 10_200


def test_casting_from_a_big_characters_folder_reads_each_file_once_however_many_runs_cast_from_it(tmp_path, monkeypatch):
    """A benchmark sweep casts two of 60 imported characters in every run: each run parsed the front matter
    of all 60 files (for each of its two characters), so 300 runs made 36,000 parses and the cost of a
    run grew with the folder. A file is now parsed once per version; an edited file is read again."""
    from promptdesk.core.characters import front_matter, search
    from promptdesk.core.characters.loading import load_cast

    folder = tmp_path / "characters"
    folder.mkdir()
    for k in range(60):
        (folder / f"person-{k:02d}.md").write_text(f"---\nname: Person Number {k}\n---\nA person who talks.\n")
    parses = 0
    real_split = front_matter.split

    def counting_split(text, *args, **kwargs):
        nonlocal parses
        parses += 1
        return real_split(text, *args, **kwargs)

    monkeypatch.setattr(front_matter, "split", counting_split)
    monkeypatch.setattr(search, "FRONT_NAMES", {}, raising=False)
    for run in range(300):
        cast = load_cast([f"person-{run % 60:02d}", f"person-{(run + 7) % 60:02d}"], [folder])
        assert [c.name for c in cast] == [f"Person Number {run % 60}", f"Person Number {(run + 7) % 60}"]
    lookups = parses
    assert lookups <= 60 + 2 * 300, f"{lookups:,} front matter parses for 300 casts of 2 from 60 files"
    (folder / "person-03.md").write_text("---\nname: Someone Else Entirely\n---\nRenamed.\n")
    assert search.find("someone-else-entirely", [folder]) is not None  # an edited file is read again


def test_redrawing_the_bars_moves_up_over_every_row_a_wide_line_wrapped_into():
    """A benchmark run's name (`case-0009-…--openai-gpt-4o-mini--b-C-seed3: … — 119/120 done, …`) is wider
    than an 80- or 100-column terminal and wraps: the redraw moved up one row per line, so every finished
    run left a stale row behind and a 4,800-run sweep scrolled thousands of broken bars."""
    from promptdesk.core.experiments.progress import Progress
    from promptdesk.core.experiments.sweep_plan import Combination

    class Terminal(io.StringIO):
        def fileno(self) -> int:
            raise OSError("not a real terminal: 80 columns assumed")

    stream = Terminal()
    progress = Progress(stream, tty=True, now=lambda: 0.0)
    plan = SweepPlan(scene="s.yaml", isolations=["a", "b"], coordinators=["C"], seeds=[1, 2])
    progress.begin(plan, [], 4)
    combo = Combination("a", "C", 1, scene="case-0009-olege-yusufe", model="openai:gpt-4o-mini")
    progress.finished(combo, {"run": combo.name, "close_reason": "max_beats_exceeded", "cost_usd": 0.01}, 0.01)
    block = stream.getvalue().rsplit("\x1b[J", 1)[1].rstrip("\n").split("\n")
    assert len(block[0]) > 80  # the finished run's line wraps
    rows = sum(-(-len(line) // 80) for line in block)
    progress.note("a provider's wait")  # the next redraw moves up over every row of the last block
    assert stream.getvalue().rsplit("\x1b[J", 1)[0].endswith(f"\x1b[{rows}F"), (rows, len(block))
