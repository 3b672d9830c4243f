"""Against the real services: only when explicitly asked (PROMPTDESK_ONLINE=1) and given a key.

Everything else in the suite runs on loopback; these exist so that a person with a key can check
that the real APIs still answer the way the loopback server imitates.
"""

from __future__ import annotations

import os

import pytest

from helpers import example_scene

pytestmark = pytest.mark.online


def wanted(key: str) -> bool:
    return os.environ.get("PROMPTDESK_ONLINE") == "1" and bool(os.environ.get(key))


@pytest.mark.skipif(not wanted("ANTHROPIC_API_KEY"), reason="set PROMPTDESK_ONLINE=1 and ANTHROPIC_API_KEY")
async def test_a_short_scene_on_anthropic(run_scene):
    scene = example_scene("morning-kitchen", provider={"name": "anthropic", "model": "claude-haiku-4-5"},
                          limits={"max_beats": 2})
    run = await run_scene(scene, isolation="b", coordinator="C")
    assert [r for r in run.records() if r["type"] == "speak"]


@pytest.mark.skipif(not wanted("OPENAI_API_KEY"), reason="set PROMPTDESK_ONLINE=1 and OPENAI_API_KEY")
async def test_a_short_scene_on_openai(run_scene):
    scene = example_scene("morning-kitchen", provider={"name": "openai", "model": "gpt-4o-mini"},
                          limits={"max_beats": 2})
    run = await run_scene(scene, isolation="a", coordinator="C")
    assert [r for r in run.records() if r["type"] == "speak"]
