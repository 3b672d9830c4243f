"""Without the optional `claude-code` extra, choosing that provider says how to install it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import INSTALL_BY_NAME, ROOT, SCENES


def test_claude_code_without_the_extra_exits_2_with_the_install_line(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        sys.modules["claude_agent_sdk"] = None  # as if the extra were not installed
        from promptdesk.core.cli.main import main
        sys.exit(main(["--batch", {str(SCENES / "the-apology.yaml")!r}, "--isolation", "a", "--coordinator", "C",
                       "--provider", "claude-code", "--model", "claude-sonnet-4-6", "--out", {str(tmp_path / "run")!r}]))
    """)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "pipx inject promptdesk 'claude-agent-sdk>=" in result.stderr, "the line for a pipx-installed Promptdesk"
    assert "uv tool install --reinstall --with 'claude-agent-sdk>=" in result.stderr, "the line for uv tool"
    assert not INSTALL_BY_NAME.search(result.stderr), "`promptdesk` on PyPI is another project"
    assert "in a checkout: make .venv/.test-installed" in result.stderr, "a checkout's uv-made .venv has no pip"
    assert not (tmp_path / "run").exists()


def test_the_install_line_names_the_extra_pyproject_declares():
    import tomllib

    from promptdesk.core.providers.claude_code import EXTRA_REQUIREMENT

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["claude-code"] == [EXTRA_REQUIREMENT]
    docs = (ROOT / "docs" / "guide" / "claude-code.md").read_text()
    assert f"pipx inject promptdesk '{EXTRA_REQUIREMENT}'" in docs
