"""Without the optional `claude-code` extra, choosing that provider says how to install it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import ROOT, SCENES


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
    assert "pipx install --force 'promptdesk[claude-code]'" in result.stderr, "the line for an installed Promptdesk"
    assert "in a checkout: make .venv/.test-installed" in result.stderr, "a checkout's uv-made .venv has no pip"
    assert not (tmp_path / "run").exists()
