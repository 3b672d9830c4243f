"""Fixtures for the console's tests (helpers live in `tui_support`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import make_workspace


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example scenes and characters; the test runs with it as the working folder."""
    monkeypatch.chdir(tmp_path)
    return make_workspace(tmp_path)
