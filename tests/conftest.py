"""Fixtures shared by the whole suite."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import Run, run_session


@pytest.fixture
def run_scene(tmp_path):
    """`await run_scene(scene, **options)`: a real run in this test's tmp folder."""
    async def _run(scene, **options: Any) -> Run:
        return await run_session(tmp_path, scene, **options)
    return _run
