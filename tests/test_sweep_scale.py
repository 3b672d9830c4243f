"""A sweep the size a study is: the work done per finished run must not grow with the runs already done
(each result line is appended, never after rereading the whole `results.jsonl`)."""

from __future__ import annotations

import builtins
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
