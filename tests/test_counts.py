"""Counts that agree: "actor failures" counts failed calls only; replies that came back but did not
keep the protocol (a scene turn salvaged to silence, a roundtable fallback line, a collaboration reply
that is no envelope) are their own count, `salvaged`, the same in every format; `--journals none`
takes no journal step at all."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from promptdesk.core.cli.main import main
from helpers import CHARACTERS, SCENES
from loopback import Reply, loopback  # noqa: F401 - fixture

FORMATS = {"scene": "the-apology.yaml", "roundtable": "roundtable-free.yaml", "collaborate": "hiking-plan.yaml"}
PLAIN = "Well, I suppose we could just talk it over."
"""A reply that keeps no format's protocol: no tags, no YAML block, no envelope."""


def scene_file(tmp_path: Path, fmt: str, server) -> Path:
    data = yaml.safe_load((SCENES / FORMATS[fmt]).read_text())
    data["provider"] = {"name": "openai-compatible", "model": "gemma", "base_url": server.url("/v1"),
                        "max_retries": 0, "timeout_s": 5}
    data.pop("cast", None)
    path = tmp_path / f"{fmt}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def batch(capsys, tmp_path: Path, scene: Path, *flags: str) -> tuple[str, Path]:
    out = tmp_path / "run"
    main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "1", "--out", str(out),
          "--characters-dir", str(CHARACTERS), "--max-beats", "3", "--journals", "none", *flags])
    return capsys.readouterr().err, out


def summary(err: str) -> tuple[int, int]:
    found = re.search(r"(\d+) actor failures, (\d+) salvaged replies", err)
    assert found, err
    return int(found[1]), int(found[2])


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_replies_that_keep_no_protocol_are_salvaged_not_failures(capsys, tmp_path, loopback, fmt):
    loopback.default = Reply(text=PLAIN)
    err, out = batch(capsys, tmp_path, scene_file(tmp_path, fmt, loopback))
    meta = json.loads((out / "metadata.json").read_text())
    calls = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert all(c["ok"] for c in calls if c["type"] == "call")
    assert meta["errors"] == []
    assert meta["salvaged"], "every reply was salvaged"
    assert summary(err) == (0, len(meta["salvaged"]))
    assert all(row.get("failures", 0) == 0 for row in meta["actors"].values())


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_failed_calls_are_the_failures_in_every_format(capsys, tmp_path, loopback, fmt):
    loopback.default = Reply(status=500)
    err, out = batch(capsys, tmp_path, scene_file(tmp_path, fmt, loopback))
    meta = json.loads((out / "metadata.json").read_text())
    failed = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    failed = [c for c in failed if c["type"] == "call" and not c["ok"]]
    assert failed and meta["salvaged"] == []
    assert summary(err) == (len(meta["errors"]), 0)
    assert len(meta["errors"]) == len(failed)


def test_journals_none_takes_no_journal_step(tmp_path):
    out = tmp_path / "run"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C", "--seed", "2",
                 "--max-beats", "3", "--characters-dir", str(CHARACTERS), "--journals", "none", "--out", str(out),
                 "--quiet"]) == 0
    records = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert not [r for r in records if r["type"] == "journal" or r.get("purpose") == "journal"]
    assert "journal" not in {json.loads(line).get("purpose") for line in (out / "prompts.jsonl").read_text().splitlines()}
    assert not any((out / "journals").glob("*.md")) if (out / "journals").exists() else True
    with_memory = tmp_path / "memory"
    assert main(["--batch", str(SCENES / "the-apology.yaml"), "--isolation", "a", "--coordinator", "C", "--seed", "2",
                 "--max-beats", "3", "--characters-dir", str(CHARACTERS), "--journals", str(tmp_path / "j"),
                 "--out", str(with_memory), "--quiet"]) == 0
    assert any(json.loads(line)["type"] == "journal" for line in (with_memory / "events.jsonl").read_text().splitlines())
