"""Text is safe everywhere it is written: no escape or control character from a model or a file
reaches the transcripts, notes.md, journals or the batch's stderr; display names are one printable
line, and no two cast members share one."""

from __future__ import annotations

import re

import pytest

from promptdesk.core.cli.main import main
from helpers import CHARACTERS, SCENES, example_scene
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, remote_cast, turn  # noqa: F401  (fixture)

HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[31mred\x08\x00\x07\x9b1m"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def written(run_dir) -> dict[str, str]:
    names = ["transcript.md", "transcript.txt", "notes.md"]
    texts = {name: (run_dir / name).read_text() for name in names}
    texts.update({f"journals/{p.name}": p.read_text() for p in (run_dir / "journals").glob("*.md")})
    return texts


async def test_model_text_with_escape_sequences_is_stripped_from_every_written_file(run_scene, loopback, tmp_path):
    loopback.default = Reply(text=turn(f'[TONE: calm{HOSTILE}] "Hello {HOSTILE} there."', f"secret {HOSTILE}"))
    scene = example_scene("the-apology", cast=remote_cast(loopback, "alice", "bob", "charlie"), limits={"max_beats": 2})
    run = await run_scene(scene, isolation="b", coordinator="C")
    texts = written(run.dir)
    assert any("Hello" in text for text in texts.values())
    assert texts.keys() >= {"journals/alice.md"}
    for name, text in texts.items():
        assert not CONTROL.search(text), f"{name} holds a control character"


def test_scene_text_with_escape_sequences_reaches_no_file_and_no_stderr(tmp_path, capsys):
    scene = tmp_path / "s.yaml"
    scene.write_text(SCENES.joinpath("the-apology.yaml").read_text().replace(
        "title: The Apology", 'title: "The \\e]52;c;aGk=\\a \\e[2JApology"', 1))
    code = main(["--batch", str(scene), "--isolation", "b", "--coordinator", "C", "--seed", "1", "--max-beats", "2",
                 "--characters-dir", str(CHARACTERS), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 0
    assert not CONTROL.search(err)
    texts = written(tmp_path / "run")
    assert "Apology" in texts["notes.md"]
    for name, text in texts.items():
        assert not CONTROL.search(text), f"{name} holds a control character"


def cast_of(tmp_path, alice: str, bob: str = "# Bob\n\nBob bakes.\n"):
    chars = tmp_path / "chars"
    for slug, text in (("alice", alice), ("bob", bob)):
        (chars / slug).mkdir(parents=True)
        (chars / slug / "profile.md").write_text(text)
    scene = tmp_path / "s.yaml"
    scene.write_text("name: s\nprompt: A scene.\ncharacters: [alice, bob]\nisolation: b\ncoordinator: C\n")
    return ["--batch", str(scene), "--characters-dir", str(chars), "--out", str(tmp_path / "run")]


@pytest.mark.parametrize("alice", ['---\nname: "Al\\nice"\n---\nAlice audits.\n',
                                   "# Al\x1b[31mice\n\nAlice audits.\n",
                                   '---\nname: "Alice\\u0007"\n---\nAlice audits.\n'])
def test_a_display_name_with_a_newline_or_control_character_is_refused(tmp_path, capsys, alice):
    assert main(cast_of(tmp_path, alice)) == 2
    err = capsys.readouterr().err
    assert "display name" in err and "profile.md" in err and not CONTROL.search(err)
    assert not (tmp_path / "run").exists()


def test_two_cast_members_with_the_same_display_name_are_refused(tmp_path, capsys):
    args = cast_of(tmp_path, "---\nname: code-reviewer\n---\nReviews code.\n", "---\nname: Code-Reviewer\n---\nAlso reviews.\n")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "both called" in err and "'alice'" in err and "'bob'" in err
