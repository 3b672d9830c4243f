"""Honest `success`: recorded in `metadata.json` from the close reason, and read from there by
`metrics`, every form of `compare`, `results.jsonl` and both HTML reports. A run whose every call
failed (the real Anthropic SDK against the loopback server answering 500) is not a success."""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.experiments.sweep import read_results
from promptdesk.core.record import outputs
from promptdesk.core.record.events import parse_event
from helpers import CHARACTERS
from loopback import CANARY, Reply, loopback  # noqa: F401 - fixture
from test_honest_outcomes import scene_file

START = {"t": 0.0, "from": "coordinator", "type": "start", "text": "start", "beat": 0, "scene": {"name": "tea"},
         "cast": {"alice": "Alice"}}


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)


@pytest.mark.parametrize("reason, success", [
    ("stop", False), ("error", False), ("provider-error", False), ("record-error", False), ("budget", False),
    ("natural", True), ("explicit", True), ("soft-cap", True), ("hard-cap", True), ("max_beats_exceeded", True),
    ("stall", True), ("final", True), ("cap", True), ("no_handoff", True), ("max-rounds", True),
])
def test_success_is_true_only_for_a_scene_that_closed_on_its_own(reason, success):
    close = {"t": 1.0, "from": "coordinator", "type": "close", "reason": reason, "text": "closed", "goal_achieved": None}
    assert outputs.metadata([parse_event(START), parse_event(close)])["success"] is success


def test_a_run_that_never_closed_is_not_a_success():
    assert outputs.metadata([parse_event(START)])["success"] is False


class Cells(HTMLParser):
    """The rows of every table of a page, as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def table_rows(page: Path) -> list[list[str]]:
    cells = Cells()
    cells.feed(page.read_text())
    return cells.rows


def test_a_run_whose_every_call_failed_is_no_success_in_every_view(tmp_path, capsys, loopback):
    loopback.default = Reply(status=500, error_message="the server fell over")
    scene = scene_file(tmp_path, "scene", {"name": "anthropic", "model": "claude-sonnet-4-6",
                                           "base_url": loopback.url()})
    run = tmp_path / "run"
    assert main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "1", "--out", str(run),
                 "--characters-dir", str(CHARACTERS), "--quiet"]) == 1
    meta = json.loads((run / "metadata.json").read_text())
    assert (meta["reason"], meta["success"]) == ("provider-error", False)
    capsys.readouterr()
    assert main(["metrics", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["success"] is False
    assert main(["metrics", str(run)]) == 0
    assert re.search(r"^success +no$", capsys.readouterr().out, re.M)          # yes and no, never True and False

    sweep = tmp_path / "sweep"
    main(["sweep", str(scene), "--isolation", "b", "--coordinator", "C", "--seeds", "1-2", "--out", str(sweep),
          "--characters-dir", str(CHARACTERS)])
    rows = read_results(sweep)
    assert sorted((r["run"], r["close_reason"], r["success"]) for r in rows) == \
        [("b-C-seed1", "provider-error", False), ("b-C-seed2", "provider-error", False)]
    capsys.readouterr()
    assert main(["compare", str(sweep)]) == 0
    assert re.search(r"^success +0 ± 0 \(n=2\)$", capsys.readouterr().out, re.M)
    assert main(["compare", str(sweep), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"]["success"]["b-C"] == {"mean": 0.0, "sd": 0.0, "n": 2, "unknown": 0}
    assert [r["success"] for r in data["runs"]] == [False, False]
    assert main(["compare", str(sweep), "--csv"]) == 0
    assert [r["success"] for r in csv.DictReader(io.StringIO(capsys.readouterr().out))] == ["no", "no"]

    assert main(["report", str(sweep), "--html", str(tmp_path / "sweep.html")]) == 0
    runs = [r for r in table_rows(tmp_path / "sweep.html") if r and r[0].startswith("b-C-seed")]
    header = next(r for r in table_rows(tmp_path / "sweep.html") if r[:2] == ["run", "condition"])
    assert [r[header.index("success")] for r in runs] == ["no", "no"]
    assert main(["report", str(run), "--html", str(tmp_path / "run.html")]) == 0
    assert ["success", "no"] in table_rows(tmp_path / "run.html")
