"""Honest outcomes, end to end through `promptdesk --batch` and the real SDKs: a run whose calls all
fail exits 1 with the cause on stderr and closes with reason `provider-error` (never 0 with
`stall`), stops early, and the three formats agree; a malformed `--base-url` is refused with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from promptdesk.core.cli.main import main
from helpers import CHARACTERS, SCENES
from loopback import CANARY, Reply, loopback  # noqa: F401 - fixture

FORMATS = {"scene": "the-apology.yaml", "roundtable": "roundtable-free.yaml", "collaborate": "hiking-plan.yaml"}
REFUSED = "http://127.0.0.1:9"
"""Nothing listens on the discard port: every connection is refused."""


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)


def scene_file(tmp_path: Path, fmt: str, provider: dict) -> Path:
    """An example scene of the format, on `provider` with no retries (so a failing run is fast)."""
    data = yaml.safe_load((SCENES / FORMATS[fmt]).read_text())
    data["provider"] = {"max_retries": 0, "timeout_s": 5, **provider}
    data.pop("cast", None)
    path = tmp_path / f"{fmt}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def batch(capsys, tmp_path: Path, scene: Path, *flags: str) -> tuple[int, str, Path]:
    out = tmp_path / "run"
    code = main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "1", "--out", str(out),
                 "--characters-dir", str(CHARACTERS), *flags])
    return code, capsys.readouterr().err, out


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_rejected_key_stops_the_run_at_once_with_exit_1_and_the_cause(tmp_path, capsys, loopback, fmt):
    loopback.default = Reply(status=401, error_message="invalid x-api-key")
    scene = scene_file(tmp_path, fmt, {"name": "anthropic", "model": "claude-sonnet-4-6",
                                       "base_url": loopback.url()})
    code, err, out = batch(capsys, tmp_path, scene)
    assert code == 1
    assert "Run failed:" in err and "401" in err and "ANTHROPIC_API_KEY" in err
    assert CANARY not in err
    close = [r for r in records(out) if r["type"] == "close"]
    assert [c["reason"] for c in close] == ["provider-error"]
    assert "401" in close[0]["text"]
    rows = records(out)
    stop = [i for i, r in enumerate(rows) if r["type"] == "system" and r["text"].startswith("Run stopped")]
    assert len(stop) == 1, "the stop is said once"
    assert not [r for r in rows[stop[0]:] if r["type"] == "system" and r.get("target")], \
        "the failure that stopped the run is told before the stop, never after it"
    assert loopback.hits == 1, "a rejected key is not worth a second call"
    assert json.loads((out / "metadata.json").read_text())["reason"] == "provider-error"


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_server_that_is_down_ends_the_run_early_with_exit_1(tmp_path, capsys, fmt):
    scene = scene_file(tmp_path, fmt, {"name": "openai", "model": "gpt-4o-mini", "base_url": REFUSED + "/v1"})
    code, err, out = batch(capsys, tmp_path, scene)
    assert code == 1
    assert "Run failed:" in err and "connection failed" in err
    events = records(out)
    assert [r["reason"] for r in events if r["type"] == "close"] == ["provider-error"]
    assert not [r for r in events if r["type"] == "close" and r["reason"] == "stall"]
    calls = [r for r in events if r["type"] == "call" and r["target"] != "facilitator"]  # role C: in code
    assert calls and not any(c["ok"] for c in calls)
    per_actor = {c["target"]: sum(1 for d in calls if d["target"] == c["target"]) for c in calls}
    assert max(per_actor.values()) <= 4, "the run stops after a few beats of failures, not at its limit"


def test_the_scene_stops_after_three_beats_in_which_every_actor_failed(tmp_path, capsys):
    scene = scene_file(tmp_path, "scene", {"name": "anthropic", "model": "claude-sonnet-4-6", "base_url": REFUSED})
    code, err, out = batch(capsys, tmp_path, scene)
    events = records(out)
    assert code == 1
    assert max(r.get("beat", 0) for r in events) == 3
    assert "every actor's last 3 calls failed" in err
    assert not [r for r in events if r["type"] == "journal"]


def test_a_run_that_recovers_is_not_a_failure(tmp_path, capsys, loopback):
    line = '<thinking>Quiet.</thinking>\n<speech>[TONE: calm] "Go on."</speech>'
    loopback.script(Reply(status=503), Reply(status=503))
    loopback.default = Reply(text=line)
    scene = scene_file(tmp_path, "scene", {"name": "anthropic", "model": "claude-sonnet-4-6",
                                           "base_url": loopback.url()})
    code, err, out = batch(capsys, tmp_path, scene, "--max-beats", "3")
    assert code == 0 and "Run failed" not in err
    assert [r["reason"] for r in records(out) if r["type"] == "close"] == ["max_beats_exceeded"]


@pytest.mark.parametrize("url", ["localhost:8080", "ftp://example.com/v1", "http://", "http://host:99999",
                                 "http://exa mple.com"])
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_malformed_base_url_is_refused_before_anything_runs(tmp_path, capsys, fmt, url):
    scene = scene_file(tmp_path, fmt, {"name": "openai", "model": "gpt-4o-mini"})
    code, err, out = batch(capsys, tmp_path, scene, "--base-url", url)
    assert code == 2
    assert "invalid base URL" in err and repr(url) in err and "--base-url" in err
    assert not out.exists()
