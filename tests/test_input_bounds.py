"""Inputs stay inside their tree and within bounds: symlinks out of the characters folder, empty
profiles, oversized scene files and fields, scenes with thousands of keys, journal entries, budgets
and models without a price."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest
import yaml

from promptdesk.core.characters.loading import JOURNAL_ENTRY_MAX, append_journal, load_character
from promptdesk.core.cli.main import main
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.casting.scene_file import PROBLEMS_SHOWN, TEXT_MAX, load_scene
from promptdesk.core.casting.build import RunOptions, build_session
from helpers import CHARACTERS, SCENES
from loopback import Reply, loopback  # noqa: F401  (fixture)
from test_scene_faults import keys, turn  # noqa: F401  (fixture)

SCENE = "name: s\ncharacters: [ann, ben]\nisolation: b\ncoordinator: C\n"


def workspace(tmp_path, scene: str = SCENE + "prompt: A scene.\n"):
    chars = tmp_path / "chars"
    for slug in ("ann", "ben"):
        (chars / slug).mkdir(parents=True)
        (chars / slug / "profile.md").write_text(f"# {slug.title()}\n\n{slug.title()} keeps bees.\n")
    (tmp_path / "s.yaml").write_text(scene)
    return chars


def batch(tmp_path, chars, *flags: str) -> int:
    return main(["--batch", str(tmp_path / "s.yaml"), "--characters-dir", str(chars), "--out", str(tmp_path / "run"),
                 "--max-beats", "1", "--seed", "1", *flags])


def test_a_profile_symlinked_outside_the_characters_folder_is_refused(tmp_path, capsys):
    chars = workspace(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("root password hunter2")
    (chars / "ann" / "profile.md").unlink()
    (chars / "ann" / "profile.md").symlink_to(secret)
    assert batch(tmp_path, chars) == 2
    assert "resolves outside" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_journal_symlinked_outside_the_characters_folder_is_refused_and_never_appended(tmp_path, capsys):
    chars = workspace(tmp_path)
    target = tmp_path / "elsewhere.md"
    target.write_text("not a journal\n")
    (chars / "ann" / "journal.md").symlink_to(target)
    assert batch(tmp_path, chars) == 2
    assert "journal.md resolves outside" in capsys.readouterr().err
    assert target.read_text() == "not a journal\n"


def test_a_symlink_that_stays_inside_the_folder_is_read(tmp_path):
    chars = workspace(tmp_path)
    (chars / "shared.md").write_text("# Cy\n\nCy is Ann's twin.\n")
    (chars / "cy").mkdir()
    (chars / "cy" / "profile.md").symlink_to(chars / "shared.md")
    assert load_character("cy", [chars]).name == "Cy"


@pytest.mark.parametrize("profile", ["", "  \n\t\n", "---\nname: Ann\ndescription: x\n---\n\n   \n"])
def test_an_empty_or_whitespace_only_profile_is_refused(tmp_path, capsys, profile):
    chars = workspace(tmp_path)
    (chars / "ann" / "profile.md").write_text(profile)
    assert batch(tmp_path, chars) == 2
    assert "has no profile text" in capsys.readouterr().err


def test_a_scene_file_over_1_mb_is_refused_naming_the_limit(tmp_path, capsys):
    chars = workspace(tmp_path, SCENE + "setting: |\n" + "  a quiet room\n" * 80_000)
    assert batch(tmp_path, chars) == 2
    err = capsys.readouterr().err
    assert "over the limit of 1 MB" in err and "s.yaml" in err


def test_a_field_over_its_length_is_refused_naming_field_line_and_limit(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENE + "prompt: " + "x" * (TEXT_MAX + 1) + "\n")
    with pytest.raises(InvalidConfig) as caught:
        load_scene(path)
    assert f"{path}:5: prompt: text of {TEXT_MAX + 1:,} characters is over the limit of {TEXT_MAX:,}" in caught.value.message


@pytest.mark.parametrize("keys, refusal", [(20_000, "entries is over the limit"),
                                            (40_000, "the file holds more than 50,000 values")])
def test_thousands_of_unknown_keys_are_refused_fast(tmp_path, keys, refusal):
    """Under the YAML node budget the mapping's size is named; past it (80,000 values) the file is
    refused before any of it is built."""
    path = tmp_path / "s.yaml"
    path.write_text(SCENE + "".join(f"key{i}: {i}\n" for i in range(keys)))
    started = time.perf_counter()
    with pytest.raises(InvalidConfig) as caught:
        load_scene(path)
    assert time.perf_counter() - started < 20, "validation must stay linear in the number of keys"
    assert refusal in caught.value.message


def test_many_unknown_keys_list_a_few_problems_and_count_the_rest(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENE + "".join(f"key{i}: {i}\n" for i in range(900)))
    with pytest.raises(InvalidConfig) as caught:
        load_scene(path)
    lines = caught.value.message.splitlines()
    assert len(lines) == PROBLEMS_SHOWN + 1
    assert lines[0] == f"{path}:5: key0: unknown key 'key0' (allowed: " + lines[0].split("(allowed: ")[1]
    assert lines[-1] == f"... and {900 - PROBLEMS_SHOWN} more problems"


def test_a_journal_entry_is_capped_at_the_append_point(tmp_path):
    chars = workspace(tmp_path)
    ann = load_character("ann", [chars])
    append_journal(ann, "word " * 10_000, when=datetime(2026, 1, 2, 3, 4), scene_title="S")
    text = ann.journal_path.read_text()
    assert len(text) < JOURNAL_ENTRY_MAX + 200
    assert text.rstrip().endswith(f"[entry cut at {JOURNAL_ENTRY_MAX} characters]")


@pytest.mark.parametrize("budget", ["nan", "inf", "-inf", "-0.5", "lots"])
def test_budget_usd_rejects_nan_infinities_and_negatives(tmp_path, capsys, budget):
    chars = workspace(tmp_path)
    assert batch(tmp_path, chars, f"--budget-usd={budget}") == 2
    assert "--budget-usd" in capsys.readouterr().err
    with pytest.raises(InvalidConfig, match="finite amount"):
        build_session(SCENES / "the-apology.yaml", RunOptions(isolation="b", coordinator="C", budget_usd=float("nan"),
                                                              characters_dirs=[CHARACTERS], runs_root=tmp_path / "r"))


def remote_scene(loopback, model: str) -> str:
    return SCENE + (f"provider: {{name: anthropic, model: {model}, base_url: '{loopback.url()}', max_retries: 0}}\n"
                    "prompt: A scene.\n")


def test_a_model_without_a_price_is_flagged_on_stderr_and_in_metadata(tmp_path, capsys, loopback):
    loopback.default = Reply(text=turn('"Hello."'))
    chars = workspace(tmp_path, remote_scene(loopback, "mystery-model-7"))
    assert batch(tmp_path, chars) == 0
    err = capsys.readouterr().err
    assert "WARNING: no price is known for anthropic:mystery-model-7: its cost is unknown" in err
    assert "$0" not in err.split("Scene closed:")[0], "an unknown cost is never said to count as $0"
    assert "+ unknown (no price for anthropic:mystery-model-7)" in err.split("Scene closed:")[1], \
        "the closing line's cost is not all the cost"
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["unpricedModels"] == ["anthropic:mystery-model-7"]


def test_a_budget_with_an_unpriced_model_is_refused(tmp_path, capsys, loopback):
    chars = workspace(tmp_path, remote_scene(loopback, "mystery-model-7"))
    assert batch(tmp_path, chars, "--budget-usd", "0.5") == 2
    assert "no price is known for anthropic:mystery-model-7" in capsys.readouterr().err
    assert loopback.hits == 0 and not (tmp_path / "run").exists()
    chars2 = workspace(tmp_path / "priced", remote_scene(loopback, "claude-haiku-4-5"))
    assert main(["--batch", str(tmp_path / "priced" / "s.yaml"), "--characters-dir", str(chars2),
                 "--out", str(tmp_path / "run2"), "--max-beats", "1", "--budget-usd", "0.5"]) == 0


def test_a_budget_with_an_unpriced_roundtable_facilitator_is_refused(tmp_path, capsys):
    """Roles A and B play the facilitator with a model; its cost counts, so it must be priced."""
    import shutil

    from helpers import CHARACTERS, SCENES

    scene = yaml.safe_load((SCENES / "roundtable-disney.yaml").read_text())
    scene["roundtable"] = {**scene.get("roundtable", {}), "facilitator": {"name": "anthropic", "model": "mystery-model-7"}}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(scene))
    shutil.copytree(CHARACTERS, tmp_path / "characters")
    code = main(["--batch", str(tmp_path / "t.yaml"), "--isolation", "a", "--coordinator", "B", "--budget-usd", "1",
                 "--characters-dir", str(tmp_path / "characters"), "--out", str(tmp_path / "run")])
    assert code == 2
    assert "no price is known for anthropic:mystery-model-7" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
