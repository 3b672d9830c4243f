"""Provider settings only some providers read (`latency_ms`, `effort`, `schema_format`...): given to
another provider they do nothing, and the run says so; a provider switched by a flag or a `cast:`
entry does not take over the settings only the first one reads, as it does not take its model."""

from __future__ import annotations

import pytest

from promptdesk.core.casting.build import RunOptions, idle_notices, provider_spec
from promptdesk.core.casting.scene_file import scene_from_dict
from promptdesk.core.providers.spec import OWN_SETTINGS, ProviderSpec, carried, idle_settings


def scene(provider: dict, cast: dict | None = None):
    return scene_from_dict({"name": "s", "prompt": "A scene.", "characters": ["ann", "ben", "cal"],
                            "provider": provider, "cast": cast or {}})


@pytest.mark.parametrize("key, value", [("latency_ms", [1, 2]), ("effort", "high"), ("thinking_tokens", 500),
                                        ("max_processes", 2), ("first_byte_timeout_s", 9), ("schema_format", "json_object")])
def test_a_setting_is_idle_exactly_on_the_providers_that_do_not_read_it(key, value):
    for name in ("offline", "anthropic", "openai", "openai-compatible", "claude-code"):
        spec = ProviderSpec.model_validate({"name": name, "model": "m", key: value})
        assert idle_settings(spec) == ([] if name in OWN_SETTINGS[key] else [key]), name


def test_a_default_is_never_called_idle():
    assert idle_settings(ProviderSpec(name="anthropic", model="m")) == []
    assert idle_settings(scene({"name": "claude-code", "model": "m", "effort": "high"},
                               {"ann": {"name": "claude-code", "max_retries": 1}}).provider_for("ann")) == []


def test_a_cast_entry_that_switches_provider_leaves_the_first_ones_own_settings_behind():
    s = scene({"name": "claude-code", "model": "sonnet", "effort": "high", "timeout_s": 5},
              {"ann": {"name": "offline"}, "ben": {"name": "offline", "effort": "low"}})
    assert s.provider_for("ann") == ProviderSpec(name="offline", timeout_s=5)
    assert idle_settings(s.provider_for("ann")) == []
    assert idle_settings(s.provider_for("ben")) == ["effort"], "given by the entry itself: said"
    assert idle_settings(s.provider_for("cal")) == []


def test_carried_keeps_what_every_provider_reads():
    given = {"timeout_s": 5, "latency_ms": (1, 2), "effort": "high", "schema_format": "json_object"}
    assert carried(given, "openai") == {"timeout_s": 5, "schema_format": "json_object"}
    assert carried(given, "offline") == {"timeout_s": 5, "latency_ms": (1, 2)}


def test_the_notice_names_the_setting_its_readers_and_who_plays_where():
    specs = [("ann", ProviderSpec(effort="high")), ("ben", ProviderSpec(effort="high")),
             ("the judge", ProviderSpec(name="anthropic", model="m", schema_format="json_object"))]
    assert idle_notices(specs) == [
        "effort does nothing here: only claude-code reads it, and ann, ben play on offline",
        "schema_format does nothing here: only openai and openai-compatible read it, and the judge plays on anthropic"]


def test_a_provider_flag_leaves_the_scenes_own_settings_behind_and_keeps_the_rest():
    s = scene({"name": "offline", "latency_ms": [5, 9], "timeout_s": 7, "effort": "high"})
    spec = provider_spec(s, "ann", RunOptions(provider="anthropic", model="claude-x"))
    assert spec == ProviderSpec(name="anthropic", model="claude-x", timeout_s=7)
    assert idle_settings(spec) == []
    same = provider_spec(s, "ann", RunOptions(provider="offline"))
    assert idle_settings(same) == ["effort"], "the same provider keeps what the scene gave it, and it is said"


def test_a_run_says_so_on_stderr_and_in_its_notes(tmp_path, capsys):
    from promptdesk.core.cli.main import main

    for slug in ("alice", "bob"):
        (tmp_path / "characters").mkdir(exist_ok=True)
        (tmp_path / "characters" / f"{slug}.md").write_text(f"# {slug.title()} - Neighbour\n\n## Personality\n- Kind\n")
    (tmp_path / "s.yaml").write_text(
        "name: s\nprompt: Two old friends meet again.\ncharacters: [alice, bob]\nlimits: {max_beats: 2}\n"
        "provider: {name: offline, latency_ms: [5, 9], thinking_tokens: 800}\n")
    out = tmp_path / "run"
    assert main(["--batch", str(tmp_path / "s.yaml"), "--isolation", "b", "--coordinator", "C", "--journals", "none",
                 "--out", str(out), "--quiet"]) == 0
    said = "thinking_tokens does nothing here: only claude-code reads it, and alice, bob play on offline"
    assert said in capsys.readouterr().err and said in (out / "notes.md").read_text()
    assert "latency_ms does nothing" not in (out / "notes.md").read_text()
