"""Building providers from specs, and keeping the SDKs out of every path that does not need them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from promptdesk.core.errors import InvalidConfig, ProviderError
from promptdesk.core.casting.pool import make_provider
from promptdesk.core.providers.registry import PROVIDER_NAMES
from loopback import CANARY, FakeSleep

ROOT = Path(__file__).resolve().parent.parent


def spec(**fields):
    return SimpleNamespace(**fields)


def run_python(code: str, **env: str) -> str:
    """Run `code` in a fresh interpreter at the repository root; return its stdout."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, env={"PATH": "/usr/bin:/bin", **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_importing_the_provider_layer_imports_no_sdk():
    out = run_python("""
        import sys
        import promptdesk.core.providers.registry, promptdesk.core.providers.retry, promptdesk.core.providers.pricing
        from promptdesk.core.casting.pool import make_provider
        from types import SimpleNamespace as S
        make_provider(S(name="anthropic", model="claude-haiku-4-5"))
        make_provider(S(name="openai", model="gpt-4o"))
        make_provider(S(name="openai-compatible", model="llama3", base_url="http://127.0.0.1:9/v1"))
        print(sorted(m for m in ("anthropic", "openai", "httpx2") if m in sys.modules))
    """, ANTHROPIC_API_KEY=CANARY, OPENAI_API_KEY=CANARY)
    assert out == "[]"


def test_the_offline_spec_gives_the_offline_provider():
    provider = make_provider(spec(name="offline", latency_ms=None), seed=7)
    assert provider.name == "offline" and provider.seed == 7


def test_an_unknown_name_lists_the_valid_ones():
    with pytest.raises(InvalidConfig) as caught:
        make_provider(spec(name="gemini", model="x"))
    for name in PROVIDER_NAMES:
        assert name in str(caught.value)


def test_spec_fields_reach_the_provider(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    sleep = FakeSleep()
    provider = make_provider(spec(name="anthropic", model="claude-sonnet-4-6", base_url="http://127.0.0.1:9",
                                  timeout_s=12.5, max_retries=5, retry_after_cap_s=7.0), sleep=sleep)
    assert provider.name == "anthropic" and provider.model == "claude-sonnet-4-6"
    assert (provider.timeout_s, provider.max_retries, provider.retry_after_cap_s) == (12.5, 5, 7.0)
    assert provider.base_url == "http://127.0.0.1:9" and provider._sleep is sleep


def test_missing_spec_fields_take_defaults(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    provider = make_provider(spec(name="openai", model="gpt-4o"))
    assert (provider.timeout_s, provider.max_retries, provider.retry_after_cap_s) == (60.0, 3, 30.0)


def test_openai_compatible_needs_a_base_url_but_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = make_provider(spec(name="openai-compatible", model="llama3", base_url="http://localhost:11434/v1"))
    assert provider.name == "openai-compatible"
    with pytest.raises(InvalidConfig, match="base URL"):
        make_provider(spec(name="openai-compatible", model="llama3", base_url=None))


def test_a_missing_key_is_a_provider_error_naming_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        make_provider(spec(name="anthropic", model="claude-haiku-4-5"))
