"""A run folder as a crash or a full disk leaves it, and what each command makes of it (qa10 crash pass)."""

from __future__ import annotations

import io
import json
import shutil

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
