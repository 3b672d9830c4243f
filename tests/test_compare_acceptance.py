"""Acceptance checks of `compare` and the reports on inputs a researcher's folders hold: a cost that
is not a number in a record, and the commands a report gives to run the experiment again."""

from __future__ import annotations

import json
from pathlib import Path

from promptdesk.core.cli.main import main
from test_compare_design import write_sweep


def test_a_cost_that_is_not_a_number_is_unknown_not_a_crash(tmp_path, capsys):
    """A call whose recorded cost is NaN (a damaged or hand-edited record): that run's cost is unknown,
    left out of the mean and of its pair, and the rest of the comparison stands."""
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [3, 4, 5], "b-C": [6, 8, 7]})
    log = sweep / "a-C-seed2" / "events.jsonl"
    lines = log.read_text().splitlines()
    call = {"t": 1.0, "from": "coordinator", "target": "alice", "type": "call", "text": "turn call", "beat": 0,
            "provider": "offline", "model": "improviser", "input_tokens": 10, "output_tokens": 5, "cost_usd": float("nan")}
    log.write_text("\n".join([lines[0], json.dumps(call), *lines[1:]]) + "\n")
    assert main(["compare", str(sweep), "--json", "--metrics", "cost_usd,turns"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"]["cost_usd"]["a-C"] == {"mean": 0.0, "sd": 0.0, "n": 2, "unknown": 1}
    cost = next(d for d in data["differences"] if d["metric"] == "cost_usd")
    assert cost["pairs"] == 2 and cost["dropped"] == [2]
    turns = next(d for d in data["differences"] if d["metric"] == "turns")
    assert turns["pairs"] == 3 and turns["diff"] == 3.0
