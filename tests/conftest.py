"""Fixtures shared by the whole suite, and its hermeticity: no test writes inside the checkout.

- Every test runs in a working folder of its own (so `runs/`, `sweeps/` and any other default made
  relative to the working folder land in a temporary folder), with its own journal store
  (`PROMPTDESK_JOURNAL_STORE`, which the engine honours instead of `.promptdesk/journals/` beside the
  scene: the example scenes' store in the checkout is never read or written, and no test's memories
  brief a later run). Both reach the child processes tests start, through the environment and the
  working folder they inherit.
- Hypothesis keeps its example database in a temporary folder too.
- The session compares the checkout's file tree (ignored files included; only Python's `__pycache__`,
  pytest's own `.pytest_cache`, `.git` and `.venv` are left out) before and after, and fails the run
  naming every path a test created, changed or removed (`tests/test_hermetic.py` tests the guard).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from helpers import ROOT, Run, run_session

SCRATCH = Path(tempfile.mkdtemp(prefix="promptdesk-suite-"))
atexit.register(shutil.rmtree, SCRATCH, True)

try:
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:  # pragma: no cover - hypothesis is a dev dependency
    pass
else:
    set_hypothesis_home_dir(SCRATCH / "hypothesis")

UNWATCHED = frozenset({"__pycache__", ".pytest_cache", ".git", ".venv"})


def checkout_tree(root: Path = ROOT) -> dict[str, tuple[int, int] | None]:
    """Every path under `root` but the unwatched ones: files with (mtime_ns, size), folders with None."""
    tree: dict[str, tuple[int, int] | None] = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for path in entries:
            if path.name in UNWATCHED:
                continue
            key = str(path.relative_to(root))
            try:
                if path.is_dir() and not path.is_symlink():
                    tree[key] = None
                    stack.append(path)
                else:
                    info = path.lstat()
                    tree[key] = (info.st_mtime_ns, info.st_size)
            except OSError:
                continue
    return tree


def tree_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two `checkout_tree`s, one line a path."""
    lines = [f"created  {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"removed  {p}" for p in sorted(before.keys() - after.keys())]
    lines += [f"changed  {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return lines


def _controller(config: pytest.Config) -> bool:
    """True in the process that sees the whole session (not an xdist worker)."""
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session.config):
        session.config.stash[_BEFORE] = checkout_tree()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    changes = tree_changes(before, checkout_tree())
    if changes:
        session.config.stash[_CHANGES] = changes
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    changes = config.stash.get(_CHANGES, None)
    if changes:
        terminalreporter.section("the suite wrote inside the checkout", red=True)
        for line in changes[:50]:
            terminalreporter.write_line(line)


_BEFORE = pytest.StashKey[dict]()
_CHANGES = pytest.StashKey[list]()


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's own working folder and journal store, both temporary."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    monkeypatch.setenv("PROMPTDESK_JOURNAL_STORE", str(tmp_path_factory.mktemp("journal-store")))


@pytest.fixture
def run_scene(tmp_path):
    """`await run_scene(scene, **options)`: a real run in this test's tmp folder."""
    async def _run(scene, **options: Any) -> Run:
        return await run_session(tmp_path, scene, **options)
    return _run
