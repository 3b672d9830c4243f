"""A third-party fault injector grades the client: whole scenes through the real SDKs against
`llmock` (a dev dependency, served in-process on a real socket) with truncated streams, dropped
connections, 429s with Retry-After and 5xx. Its verdict must hold no error finding and no `gave_up`.
(Backoff is capped at 0.1 s to keep the test fast, so llmock may warn `no_backoff`.)"""

from __future__ import annotations

import pytest

from helpers import example_scene

LINE = '<thinking>I keep my own counsel.</thinking>\n<speech>[TONE: calm] "Let us go through it again."</speech>'
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}


def cast(llmock, provider: str) -> dict:
    """Retries enough for the six scripted faults, which all land on the first call (beat 0 has one turn)."""
    spec = {"provider": provider, "model": MODELS[provider], "base_url": llmock.base_url(provider),
            "max_retries": 6, "retry_after_cap_s": 0.1, "timeout_s": 5}
    return {slug: dict(spec) for slug in ("alice", "bob", "charlie")}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_no_fail_finding_under_truncation_drops_429_and_5xx(run_scene, llmock, provider):
    from promptdesk.core.clock import RealClock

    llmock.truncate(after_chunks=2, times=2, provider=provider)
    llmock.disconnect(after_chunks=2, times=2, provider=provider)
    llmock.rate_limit(times=1, retry_after=0.05, provider=provider)
    llmock.fail(503, times=1, retry_after=0.05, provider=provider)
    llmock.reply(LINE, times=None, provider=provider)
    scene = example_scene("the-apology", cast=cast(llmock, provider), limits={"max_beats": 4})
    run = await run_scene(scene, isolation="b", coordinator="C", clock=RealClock())
    verdict = llmock.verdict()
    assert verdict.faults >= 6
    assert verdict.errors == (), verdict.errors
    assert not [f for f in verdict.warnings if f.code == "gave_up"]
    speeches = [r for r in run.records() if r["type"] == "speak"]
    assert speeches and all(s["text"] == "Let us go through it again." for s in speeches)
    assert not [r for r in run.records() if r["type"] == "system" and r.get("target")]
