"""Nothing sent to a model depends on where the project sits on the machine: the same scene played
from two folders sends byte-identical requests, for every coordinator role, and no request (an actor's,
a judge's, a journal step's) holds the working folder's path, the user's name or the host's name."""

from __future__ import annotations

import getpass
import shutil
import socket
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from promptdesk.core.record.prompt_log import read_requests
from helpers import ROOT

SCENE = "scenes/the-apology.yaml"


def project_at(folder: Path) -> Path:
    """A fresh copy of the example scene and characters at `folder` (journals included, as shipped)."""
    (folder / "scenes").mkdir(parents=True)
    shutil.copy(ROOT / SCENE, folder / SCENE)
    shutil.copytree(ROOT / "characters", folder / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
    return folder


def play(folder: Path, role: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One offline run of the scene from `folder`, its journals kept in the project, as a user's are."""
    monkeypatch.chdir(folder)
    monkeypatch.delenv("PROMPTDESK_JOURNAL_STORE", raising=False)
    out = folder / "runs" / f"apology-{role}"
    assert main(["--batch", SCENE, "--isolation", "a", "--coordinator", role, "--provider", "offline",
                 "--seed", "11", "--out", str(out)]) == 0
    return out


def machine_words(folder: Path) -> list[str]:
    """What would identify this machine in a request: the folder (and its parents below the root),
    the user's name and the host's name (when they are words long enough to mean something)."""
    words = [str(folder), str(folder.resolve())]
    for name in (getpass.getuser(), socket.gethostname()):
        if len(name) >= 5 and name not in {"local", "localhost"}:
            words.append(name)
    return words


@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_the_same_scene_from_two_folders_sends_the_same_requests(tmp_path, monkeypatch, role):
    first = play(project_at(tmp_path / "one" / "desk"), role, monkeypatch)
    second = play(project_at(tmp_path / "elsewhere" / "much" / "deeper" / "folder"), role, monkeypatch)
    assert (first / "prompts.jsonl").read_bytes() == (second / "prompts.jsonl").read_bytes()
    for run, folder in ((first, tmp_path / "one" / "desk"), (second, tmp_path / "elsewhere")):
        assert {to for to, _ in requests_of(run)} >= {"alice", "bob", "charlie"} | ({"judge"} if role != "C" else set())
        for word in machine_words(folder):
            leaking = [to for to, text in requests_of(run) if word in text]
            assert not leaking, f"{word!r} was sent to {sorted(set(leaking))}"


def requests_of(run: Path) -> list[tuple[str, str]]:
    """Every request of a run, rebuilt byte for byte, as (to whom, its whole text)."""
    import json
    return [(str(entry.get("to")), json.dumps(entry, ensure_ascii=False)) for entry in read_requests(run)]


def test_role_a_judges_notes_name_journals_without_the_machines_path(tmp_path, monkeypatch):
    run = play(project_at(tmp_path / "desk"), "A", monkeypatch)
    notes = (run / "notes.md").read_text()
    assert str(tmp_path) not in notes
    assert "    journal: .promptdesk/journals/alice.md\n" in notes     # beside the scene file, named from there



def test_a_take_names_its_parent_without_the_machines_path(tmp_path, monkeypatch):
    """A take's `notes.md` says whose take it is by the parent's folder name: role A's judge reads it."""
    folder = project_at(tmp_path / "desk")
    run = play(folder, "A", monkeypatch)
    take = folder / "runs" / "apology-take"
    assert main(["branch", str(run), "--at-beat", "3", "--note", "Say less.", "--out", str(take), "--quiet"]) == 0
    assert "- Take of apology-A from beat 3: " in (take / "notes.md").read_text()
    judged = [text for to, text in requests_of(take) if to == "judge"]
    assert judged and not [text for text in judged if str(tmp_path) in text]
