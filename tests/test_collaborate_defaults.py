"""`--collaborate GOAL` with both keys set runs as the README writes it: `gpt` on OpenAI and `claude` on
Anthropic, each on its default model, overridable with `--cast`. Through the real SDKs against the
loopback server (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` point the SDKs at it)."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.formats.collaborate.personas import DEFAULT_MODELS
from loopback import CANARY, Recorded, Reply, loopback  # noqa: F401  (fixture)

GOAL = "Plan a picnic in three steps."


@pytest.fixture
def both_keys(monkeypatch, loopback):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_BASE_URL", loopback.url("/v1"))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", loopback.url())

    def reply(recorded: Recorded) -> Reply:
        if recorded.api == "anthropic":
            return Reply(text=json.dumps({"message": "Step one: a basket.", "handoff": {"to": "gpt", "task": "Finish."}}))
        return Reply(text=json.dumps({"message": "Steps two and three.", "handoff": None, "final": True}))

    loopback.default = reply
    return loopback


def collaborate(tmp_path, capsys, *flags: str) -> tuple[int, str]:
    code = main(["--batch", "--collaborate", GOAL, "--first", "claude", "--isolation", "a", "--coordinator", "C",
                 "--out", str(tmp_path / "run"), *flags])
    return code, capsys.readouterr().err


def models(server) -> dict[str, str]:
    return {r.api: r.body["model"] for r in server.requests}


def test_with_both_keys_the_default_pair_runs_on_its_default_models(tmp_path, capsys, both_keys):
    code, err = collaborate(tmp_path, capsys)
    assert code == 0, err
    assert "Scene closed: final (goal achieved) after 2 rounds" in err
    assert models(both_keys) == {"openai": DEFAULT_MODELS["openai"], "anthropic": DEFAULT_MODELS["anthropic"]}
    assert (DEFAULT_MODELS["openai"], DEFAULT_MODELS["anthropic"]) == ("gpt-4o-mini", "claude-sonnet-4-6")
    notes = (tmp_path / "run" / "notes.md").read_text()
    assert "openai" in notes and "gpt-4o-mini" in notes and "claude-sonnet-4-6" in notes
    assert "offline improviser" not in err


def test_cast_overrides_a_default_model_and_a_cast_without_a_model_takes_the_default(tmp_path, capsys, both_keys):
    code, err = collaborate(tmp_path, capsys, "--cast", "gpt=openai:gpt-4.1-mini", "--cast", "claude=anthropic")
    assert code == 0, err
    assert models(both_keys) == {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-6"}


def test_model_without_provider_is_refused_naming_cast_instead_of_being_dropped(tmp_path, capsys, both_keys):
    code, err = collaborate(tmp_path, capsys, "--model", "gpt-4.1")
    assert code == 2
    assert "--model gpt-4.1" in err and "--cast gpt=openai:MODEL" in err and "--cast claude=anthropic:MODEL" in err
    assert both_keys.hits == 0 and not (tmp_path / "run").exists()


def test_provider_and_model_together_put_both_participants_on_that_model(tmp_path, capsys, both_keys):
    code, err = collaborate(tmp_path, capsys, "--provider", "anthropic", "--model", "claude-haiku-4-5")
    assert code == 0, err
    assert {r.body["model"] for r in both_keys.requests} == {"claude-haiku-4-5"}
