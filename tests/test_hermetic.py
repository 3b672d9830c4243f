"""The suite never writes inside the checkout: a run of representative engine tests (example scenes
from the checkout, run through the CLI, whose journals used to land in `scenes/.promptdesk/journals/`)
leaves the checkout's file tree, ignored files included, as it was. The session-wide guard in
`conftest.py` checks the same of every run of the suite."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import checkout_tree, tree_changes
from helpers import ROOT

REPRESENTATIVE = (
    "tests/test_engine_faults.py::test_the_batch_summary_counts_unexpected_turn_failures",
    "tests/test_collaborate_cli.py::test_a_collaboration_runs_headless_from_flags_alone",
    "tests/test_resume.py::test_a_closed_run_cannot_be_resumed",
)


def test_engine_tests_leave_the_checkout_as_it_was():
    before = checkout_tree()
    env = {k: v for k, v in os.environ.items() if k != "PROMPTDESK_JOURNAL_STORE"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist",
                           *REPRESENTATIVE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout
    assert tree_changes(before, checkout_tree()) == []


def test_the_tree_comparison_sees_an_ignored_file_appear_change_and_go(tmp_path):
    (tmp_path / "kept.txt").write_text("a")
    before = checkout_tree(tmp_path)
    (tmp_path / ".promptdesk" / "journals").mkdir(parents=True)
    (tmp_path / ".promptdesk" / "journals" / "alice.md").write_text("memory")
    (tmp_path / "kept.txt").write_text("ab")
    (tmp_path / "__pycache__").mkdir()
    assert tree_changes(before, checkout_tree(tmp_path)) == [
        "created  .promptdesk", "created  .promptdesk/journals", "created  .promptdesk/journals/alice.md",
        "changed  kept.txt"]
    (tmp_path / "kept.txt").unlink()
    assert "removed  kept.txt" in tree_changes(before, checkout_tree(tmp_path))
