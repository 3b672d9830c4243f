"""Journals live where Promptdesk may write: beside a `<slug>/profile.md` the user owns, else in
Promptdesk's own store beside the scene; the shipped examples are never changed by a run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from promptdesk.core.record.prompt_log import read_requests

from promptdesk.core.cli.main import main
from helpers import ROOT

PROFILE = "# {name}\n\n{name} is a careful sort who keeps a notebook.\n"


@pytest.fixture(autouse=True)
def default_store(monkeypatch):
    """These tests check where the store is by default: beside the scene (every scene here is in a
    temporary folder), not where the suite's hermetic fixture moves it."""
    monkeypatch.delenv("PROMPTDESK_JOURNAL_STORE", raising=False)


def scene_file(folder, characters=("ann", "ben"), extra: str = "") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "meet.yaml"
    path.write_text(f"name: meet\nsetting: A kitchen.\nprompt: Talk.\ncharacters: [{', '.join(characters)}]\n"
                    f"isolation: b\ncoordinator: C\nlimits: {{max_beats: 2}}\n{extra}")
    return str(path)


def own_character(folder, slug: str, journal: str | None = None):
    (folder / slug).mkdir(parents=True)
    (folder / slug / "profile.md").write_text(PROFILE.format(name=slug.title()))
    if journal is not None:
        (folder / slug / "journal.md").write_text(journal)


def agent_file(agents, slug: str):
    agents.mkdir(parents=True, exist_ok=True)
    (agents / f"{slug}.md").write_text(f"---\nname: {slug}\ndescription: A helper.\n---\n\nYou are {slug}, terse and kind.\n")


def batch(scene: str, out, *flags: str) -> int:
    return main(["--batch", scene, "--seed", "2", "--out", str(out), *flags])


def system_prompts(run) -> dict[str, str]:
    return {line["to"]: line["request"]["system"] for line in read_requests(run) if line["purpose"] != "journal"}


def tree(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_running_the_repository_example_changes_no_tracked_file(tmp_path):
    """The pre-submission check: a fresh copy of the repository, the demo run, `git status` clean."""
    repo = tmp_path / "repo"
    files = subprocess.run(["git", "ls-files", "-z", "scenes", "characters", ".gitignore"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, repo / name)
    shutil.copy2(ROOT / "characters" / ".promptdesk-examples", repo / "characters" / ".promptdesk-examples")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    subprocess.run(git + ["add", "-A"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-qm", "x"], cwd=repo, check=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "promptdesk.core.cli.main", "--batch", "scenes/the-apology.yaml", "--isolation", "b",
                           "--coordinator", "C", "--provider", "offline", "--seed", "1", "--max-beats", "3",
                           "--out", str(tmp_path / "x")], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""
    stored = (repo / "scenes" / ".promptdesk" / "journals" / "alice.md").read_text()
    assert "Friday status meeting" in stored and "— The Apology" in stored, "the store starts from the shipped journal"
    assert subprocess.run(["git", "check-ignore", "-q", "scenes/.promptdesk/journals/alice.md"], cwd=repo).returncode == 0


def test_claude_agents_journal_goes_to_the_store_beside_the_scene_never_into_the_agents_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    agents = tmp_path / ".claude" / "agents"
    agent_file(agents, "ann")
    agent_file(agents, "ben")
    before = tree(agents)
    scene = scene_file(tmp_path / "scenes")
    assert batch(scene, tmp_path / "run") == 0
    assert tree(agents) == before
    store = tmp_path / "scenes" / ".promptdesk" / "journals"
    assert "— Meet" in (store / "ann.md").read_text()
    assert "journal: .promptdesk/journals/ann.md\n" in (tmp_path / "run" / "notes.md").read_text()  # from the scene's folder
    assert batch(scene, tmp_path / "run2") == 0
    remembered = (tmp_path / "run" / "journals" / "ann.md").read_text().split("\n\n", 1)[1].strip()
    assert remembered[:200] in system_prompts(tmp_path / "run2")["ann"], "the next run reads where this one wrote"


def test_the_store_is_private_to_you_as_the_run_folder_is(tmp_path, monkeypatch):
    """A journal holds a character's private memory (the audit looks for it in other actors' requests):
    the store Promptdesk makes, and each journal it starts, are readable by you alone (0700, 0600),
    as the run folder's copy of the same entries is, whatever the umask."""
    monkeypatch.chdir(tmp_path)
    agents = tmp_path / ".claude" / "agents"
    agent_file(agents, "ann")
    agent_file(agents, "ben")
    old = os.umask(0o022)
    try:
        assert batch(scene_file(tmp_path / "scenes"), tmp_path / "run") == 0
    finally:
        os.umask(old)
    store = tmp_path / "scenes" / ".promptdesk" / "journals"
    assert {oct(p.stat().st_mode & 0o777) for p in (store, store.parent)} == {"0o700"}
    assert {oct(p.stat().st_mode & 0o777) for p in store.iterdir()} == {"0o600"}


def test_a_profile_folder_the_user_owns_keeps_its_journal_beside_the_profile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    chars = tmp_path / "characters"
    own_character(chars, "ann", "## 2026-01-01 — Before\n\nAnn's old memory of the lighthouse.\n")
    own_character(chars, "ben")
    assert batch(scene_file(tmp_path / "scenes"), tmp_path / "run") == 0
    journal = (chars / "ann" / "journal.md").read_text()
    assert journal.startswith("## 2026-01-01 — Before") and "— Meet" in journal
    assert "lighthouse" in system_prompts(tmp_path / "run")["ann"]
    assert not (tmp_path / "scenes" / ".promptdesk").exists()


def test_examples_marker_and_read_only_folders_send_journals_to_the_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    chars = tmp_path / "characters"
    own_character(chars, "ann", "Ann's shipped memory.\n")
    own_character(chars, "ben")
    (chars / ".promptdesk-examples").write_text("examples")
    before = tree(chars)
    scene = scene_file(tmp_path / "scenes")
    assert batch(scene, tmp_path / "run") == 0
    assert tree(chars) == before
    stored = (tmp_path / "scenes" / ".promptdesk" / "journals" / "ann.md").read_text()
    assert stored.startswith("Ann's shipped memory.") and "— Meet" in stored


def test_the_characters_promptdesk_ships_are_never_written_even_without_their_marker(tmp_path, monkeypatch):
    """An install is not a folder the operator owns: the package's own characters keep their journals
    in the store whether or not the marker file made it into the install (a writable site-packages,
    whose files may be hard links into an installer's cache, is never changed by a run)."""
    from promptdesk import resources
    monkeypatch.chdir(tmp_path)
    package = tmp_path / "site" / "promptdesk"
    shipped = package / "characters"
    own_character(shipped, "ann", "Ann's shipped memory.\n")
    own_character(shipped, "ben")
    monkeypatch.setattr(resources, "characters_dir", lambda: shipped)
    before = tree(shipped)
    scene = scene_file(tmp_path / "scenes")
    assert batch(scene, tmp_path / "run", "--characters-dir", str(shipped)) == 0
    assert tree(shipped) == before
    stored = (tmp_path / "scenes" / ".promptdesk" / "journals" / "ann.md").read_text()
    assert stored.startswith("Ann's shipped memory.") and "— Meet" in stored


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_a_read_only_character_folder_is_never_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    chars = tmp_path / "characters"
    own_character(chars, "ann")
    own_character(chars, "ben")
    for slug in ("ann", "ben"):
        (chars / slug).chmod(0o555)
    try:
        assert batch(scene_file(tmp_path / "scenes"), tmp_path / "run") == 0
        assert not (chars / "ann" / "journal.md").exists()
        assert (tmp_path / "scenes" / ".promptdesk" / "journals" / "ann.md").is_file()
    finally:
        for slug in ("ann", "ben"):
            (chars / slug).chmod(0o755)


def test_journals_none_runs_without_memory_and_writes_no_journal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    chars = tmp_path / "characters"
    own_character(chars, "ann", "Ann remembers the lighthouse keeper.\n")
    own_character(chars, "ben")
    before = tree(chars)
    assert batch(scene_file(tmp_path / "scenes"), tmp_path / "run", "--journals", "none") == 0
    assert tree(chars) == before
    assert "lighthouse" not in system_prompts(tmp_path / "run")["ann"]
    assert not (tmp_path / "scenes" / ".promptdesk").exists()
    assert "journal: none" in (tmp_path / "run" / "notes.md").read_text()


def test_journals_dir_flag_and_scene_key_hold_every_journal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    chars = tmp_path / "characters"
    own_character(chars, "ann", "Ann remembers the lighthouse keeper.\n")
    own_character(chars, "ben")
    before = tree(chars)
    assert batch(scene_file(tmp_path / "scenes"), tmp_path / "run", "--journals", "mem") == 0
    assert tree(chars) == before
    assert (tmp_path / "mem" / "ann.md").read_text().startswith("Ann remembers the lighthouse keeper.")
    scene = scene_file(tmp_path / "other", extra="journals: memory\n")
    assert batch(scene, tmp_path / "run2") == 0
    assert "— Meet" in (tmp_path / "other" / "memory" / "ben.md").read_text()
    assert tree(chars) == before


@pytest.mark.parametrize("named", ["../notes", "/tmp", "linked"])
def test_a_scene_cannot_name_a_journal_folder_outside_its_own_folder(tmp_path, monkeypatch, capsys, named):
    """The journals are read into briefings sent to models and written after each scene: a scene file
    someone hands you may not point them at another folder of yours (`--journals DIR` still can)."""
    monkeypatch.chdir(tmp_path)
    own_character(tmp_path / "characters", "ann", "Ann's private diary.\n")
    own_character(tmp_path / "characters", "ben")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "ann.md").write_text("My own private notes.\n")
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "linked").symlink_to(tmp_path / "notes")
    scene = scene_file(tmp_path / "scenes", extra=f"journals: {named}\n")
    assert batch(scene, tmp_path / "run") == 2
    err = capsys.readouterr().err
    assert f"the scene's `journals:` ({named!r}) is outside the scene file's folder" in err and "--journals DIR" in err
    assert not (tmp_path / "run").exists() and (tmp_path / "notes" / "ann.md").read_text() == "My own private notes.\n"
    assert batch(scene, tmp_path / "run", "--journals", str(tmp_path / "notes")) == 0


def test_two_characters_answering_to_one_slug_never_read_each_others_journal(tmp_path, monkeypatch, default_store):
    """An agent file `joker.md` (a comedian) and a card `cards/joker.json` (a villain), cast by two scenes of
    one folder, are both `joker`: the villain's briefing carried the comedian's journal, his private
    reflections included. Each store journal now names its owner; the other keeps its own file."""
    monkeypatch.chdir(tmp_path)
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "joker.md").write_text("---\nname: Jester Jo\n---\nYou tell office jokes.\n")
    (agents / "pat.md").write_text("---\nname: Pat\n---\nYou run the standup.\n")
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "joker.json").write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Gotham Villain", "description": "A criminal who laughs at everything."}}))
    (tmp_path / "office.yaml").write_text("name: office\nsetting: Office\nprompt: The build is broken.\n"
                                          "characters: [joker, pat]\nlimits: {max_beats: 2}\n")
    (tmp_path / "gotham.yaml").write_text("name: gotham\nsetting: A roof\nprompt: A heist at night.\n"
                                          "characters: [cards/joker.json, pat]\nlimits: {max_beats: 2}\n")

    def play(scene: str, out: str) -> dict[str, str]:
        assert main(["--batch", scene, "--isolation", "a", "--coordinator", "C", "--seed", "1", "--quiet",
                     "--out", str(tmp_path / out)]) == 0
        return {r["to"]: r["request"]["system"] for r in read_requests(tmp_path / out)}

    play("office.yaml", "run-1")
    store = tmp_path / ".promptdesk" / "journals"
    assert (store / "joker.md.owner").read_text() == "Jester Jo\n"
    assert "## " in (store / "joker.md").read_text()
    villain = play("gotham.yaml", "run-2")
    assert "## YOUR JOURNAL" not in villain["joker"] and "— office" not in villain["joker"].lower()
    theirs = [p.name for p in store.glob("joker--*.md")]
    assert len(theirs) == 1 and (store / f"{theirs[0]}.owner").read_text() == "Gotham Villain\n"
    assert ".promptdesk/journals/" + theirs[0] in (tmp_path / "run-2" / "notes.md").read_text()
    comedian = play("office.yaml", "run-3")
    assert "## YOUR JOURNAL" in comedian["joker"] and "heist" not in comedian["joker"].split("## YOUR JOURNAL")[1]
    assert "## YOUR JOURNAL" in villain["pat"], "Pat, one character in both scenes, keeps one memory"
