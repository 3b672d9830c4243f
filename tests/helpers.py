"""Test support: the repository's example scenes and characters, real sessions on a virtual
clock, and the isolation audit that every engine run in the suite goes through."""

from __future__ import annotations

import atexit
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptdesk.core.record.audit import audit_run
from promptdesk.core.clock import VirtualClock
from promptdesk.core.record.prompt_log import read_prompts, read_requests
from promptdesk.core.record.recorder import read_events
from promptdesk.core.casting.scene_file import Scene, load_scene, scene_from_dict
from promptdesk.core.engine.session import Session, SessionResult
from promptdesk.core.casting.build import RunOptions, build_session

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"


def pristine_characters() -> Path:
    """A private copy of the example characters, each with a distinctive private journal.

    Runs append to journals, so tests never read the repository's own (which a `make demo`
    changes), and every character has journal text the isolation audit can look for.
    """
    copy = Path(tempfile.mkdtemp(prefix="promptdesk-cast-")) / "characters"
    shutil.copytree(ROOT / "characters", copy, ignore=shutil.ignore_patterns("*journal.md"))
    atexit.register(shutil.rmtree, copy.parent, True)
    for profile in [*copy.glob("*/profile.md"), *copy.glob("*.md")]:
        slug = profile.parent.name if profile.name == "profile.md" else profile.stem
        journal = profile.with_name("journal.md") if profile.name == "profile.md" else profile.with_name(f"{slug}.journal.md")
        journal.write_text(f"## 2026-01-01 09:00 — Earlier\n\nPrivate memory of {slug}: the blue umbrella by the door was never mine.\n")
    return copy


CHARACTERS = pristine_characters()


@dataclass
class Run:
    """A finished run: the session, its result and its folder."""

    session: Session
    result: SessionResult

    @property
    def dir(self) -> Path:
        return self.result.run_dir

    def events(self) -> list:
        return read_events(self.dir)

    def records(self, name: str = "events.jsonl") -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.dir / name).read_text().splitlines() if line.strip()]

    def prompts(self) -> list[dict[str, Any]]:
        """Every request sent, rebuilt whole from `prompts.jsonl` (which stores deltas)."""
        return read_requests(self.dir)


def requests_text(run_dir: Path) -> str:
    """Every request a run sent, rebuilt whole, as one text (for "never sent" checks)."""
    return "\n".join(record.text for record in read_prompts(run_dir))


def example_scene(name: str, **update: Any) -> Scene:
    """An example scene from `scenes/`, re-validated with fields replaced; no simulated latency
    unless `provider={"latency_ms": ...}` asks for it."""
    data = load_scene(SCENES / f"{name}.yaml").model_dump(mode="json", by_alias=True, exclude_none=True)
    data["provider"] = {**data.get("provider", {}), "latency_ms": None, **update.pop("provider", {})}
    if "limits" in update:
        update["limits"] = {**data.get("limits", {}), **update["limits"]}
    return Scene.model_validate({**data, **update})


def make_scene(**data: Any) -> Scene:
    """A scene from a dict (the same validation as a file)."""
    return scene_from_dict({"name": "test-scene", "prompt": "A scene.", "characters": ["alice", "bob", "charlie"], **data})


async def run_session(tmp_path: Path, scene: Scene, *, audit: bool = True, before_run=None, **options: Any) -> Run:
    """Build and run a real session on a virtual clock; audit its prompts for isolation leaks."""
    opts = RunOptions(runs_root=tmp_path / "runs", characters_dirs=[CHARACTERS], cwd=tmp_path,
                      clock=options.pop("clock", VirtualClock()),
                      write_character_journals=options.pop("write_character_journals", False),
                      seed=options.pop("seed", 1), **options)
    session = build_session(scene, opts)
    if before_run:
        before_run(session)
    result = await session.run()
    run = Run(session, result)
    if audit:
        assert_isolated(run)
    return run


def assert_isolated(run: Run) -> None:
    """No request holds another actor's thinking, profile, journal or perspective, nor the
    coordinator notes: the product's own audit (`promptdesk.core.record.audit`) over the run folder alone."""
    report = audit_run(run.dir)
    assert report.requests > 0 or not (run.dir / "prompts.jsonl").stat().st_size
    assert report.clean, "\n".join([report.summary(), *(leak.describe() for leak in report.leaks[:10]), *report.problems])


def served_scene(tmp_path: Path, server, name: str = "openai-compatible", model: str = "gemma",
                 **provider: Any) -> Path:
    """The Apology as a scene file whose every actor is on one loopback `server`: two beats, no retries
    (a cut call fails), `provider` fields over those."""
    import yaml

    data = yaml.safe_load((SCENES / "the-apology.yaml").read_text())
    data["provider"] = {"name": name, "model": model, "base_url": server.url("/v1"), "max_retries": 0,
                        "timeout_s": 10, **provider}
    data.pop("cast", None)
    data["limits"] = {**data.get("limits", {}), "max_beats": 2}
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def batch_run(capsys, tmp_path: Path, scene: Path, *flags: str) -> tuple[int, str, Path]:
    """`promptdesk --batch` of `scene` (isolation a, coordinator C, seed 1, no journals) into
    `tmp_path/run`: its exit code, its stderr and the run folder."""
    from promptdesk.core.cli.main import main

    out = tmp_path / "run"
    code = main(["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--seed", "1", "--out", str(out),
                 "--characters-dir", str(CHARACTERS), "--journals", "none", *flags])
    return code, capsys.readouterr().err, out


INSTALL_BY_NAME = re.compile(r"(?:pipx install|uv tool install|pip install)[^\n`]*?(?<![\w./@+-])['\"]?promptdesk"
                             r"(?:\[[\w,-]+\])?['\"]?(?![\w./-])")
"""An install line that fetches `promptdesk` by name from an index: on PyPI that name is another,
unrelated project (a prompt-management SDK with no `promptdesk` command)."""


def titled_cast(folder: Path, people: tuple[tuple[str, str], ...]) -> list[str]:
    """Characters `p0`, `p1`... under `folder/characters`, each a profile titled `# Name - Title` with two
    plain bullets (a cast whose roles are in the titles): their slugs."""
    slugs = []
    for i, (name, title) in enumerate(people):
        slug = f"p{i}"
        (folder / "characters" / slug).mkdir(parents=True, exist_ok=True)
        (folder / "characters" / slug / "profile.md").write_text(
            f"# {name} - {title}\n\n## Personality\n- Direct, and tired of waiting\n- Keeps notes on everything\n")
        slugs.append(slug)
    return slugs


def played_offline(folder: Path, slugs: list[str], goal: str, seeds: range, *, beats: int = 14,
                   setting: str = "A small office, late afternoon",
                   prompt: str = "Two people who have put this conversation off for too long."):
    """Run folders of a sequential offline scene of `slugs` with `goal`, one per seed (isolation a, role C)."""
    import asyncio

    for seed in seeds:
        scene = scene_from_dict({"name": "played", "turns": "sequential", "characters": slugs, "goal": goal,
                                 "setting": setting, "prompt": prompt, "limits": {"max_beats": beats}})
        yield asyncio.run(run_session(folder, scene, seed=seed, isolation="a", coordinator="C")).dir
