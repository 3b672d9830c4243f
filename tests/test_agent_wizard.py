"""Agent files in Claude Code's wizard style keep their whole description (its examples stay out of
the briefing unless asked), "did you mean" offers only names that can be cast, and a TinyTroupe
fragment is refused as a fragment."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.characters.loading import load_character, search_dirs
from promptdesk.core.cli.main import main
from promptdesk.core.errors import CharacterLoadError
from promptdesk.core.record.prompt_log import read_requests

WIZARD = """---
name: code-reviewer
description: Use this agent after code is written. Examples: <example>
Context: The user has just written a parser.
user: "Please review my parser"
assistant: "I'll use the code-reviewer agent to read every branch"
<commentary>
Since code was written, a review follows.
</commentary>
</example>
tools: Read, Grep
model: sonnet
---
You are a code reviewer who reads every branch twice.
"""


@pytest.fixture
def agents(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "code-reviewer.md").write_text(WIZARD)
    (folder / "story-teller.md").write_text("---\nname: story-teller\ndescription: Tells stories.\n---\nYou tell stories.\n")
    return folder


def test_a_wizard_description_is_kept_whole_past_its_user_and_assistant_lines(tmp_path, agents):
    character = load_character("code-reviewer", search_dirs([], tmp_path))
    assert character.description.startswith("Use this agent after code is written. Examples: <example>")
    for kept in ('user: "Please review my parser"', "assistant: \"I'll use the code-reviewer agent",
                 "Since code was written, a review follows.", "</example>"):
        assert kept in character.description
    assert "Read, Grep" not in character.description and "sonnet" not in character.description


def briefing(tmp_path, fields: str) -> str:
    scene = tmp_path / "s.yaml"
    scene.write_text(f"name: s\nprompt: A scene.\ncharacters: [code-reviewer, story-teller]\nisolation: b\ncoordinator: C\n"
                     f"character_fields: {fields}\n")
    out = tmp_path / f"run-{len(fields)}"
    assert main(["--batch", str(scene), "--out", str(out), "--max-beats", "1", "--seed", "1"]) == 0
    return next(json.dumps(p["request"]["system"]) for p in read_requests(out) if p["to"] == "code-reviewer")


def test_examples_stay_out_of_the_briefing_unless_asked(tmp_path, agents):
    plain = briefing(tmp_path, "[description]")
    assert "Description: Use this agent after code is written." in plain
    assert "<example>" not in plain and "Please review my parser" not in plain
    asked = briefing(tmp_path, "[description, examples]")
    assert "Examples: <example> Context: The user has just written a parser." in asked
    assert "Please review my parser" in asked and "</example>" in asked


def test_did_you_mean_offers_only_names_that_can_be_cast(tmp_path, agents):
    (agents / "ops-helper.md").write_text("---\nname: code/reviewer\n---\nYou help.\n")
    (agents / "code-reviewers.md").write_text("---\nname: code/reviewers\n---\nYou help too.\n")
    with pytest.raises(CharacterLoadError) as caught:
        load_character("code-reviewr", search_dirs([], tmp_path))
    near = caught.value.message.split("Did you mean", 1)[1]
    assert "`code-reviewer`" in near and "`code-reviewers`" in near
    assert "/" not in near.replace("`.claude/agents/", "").split("(from")[0]
    assert all("/" not in part.split("`")[1] for part in near.split(" or "))


FRAGMENT = {"type": "Fragment", "persona": {"preferences": {"interests": ["Labour rights"]},
                                           "beliefs": ["Public healthcare is a right."]}}
TRAITS_ONLY = {"beliefs": ["Markets work best when left alone."], "behaviors": {"general": ["Talks fast."]}}


@pytest.mark.parametrize("data", [FRAGMENT, TRAITS_ONLY], ids=["typed", "persona-less"])
def test_a_tinytroupe_fragment_is_refused_as_a_fragment_not_a_nameless_person(tmp_path, capsys, data):
    path = tmp_path / "leftwing.fragment.json"
    path.write_text(json.dumps(data))
    assert main(["import", str(path), "--to", str(tmp_path / "chars")]) == 2
    err = capsys.readouterr().err
    assert "this is a TinyTroupe fragment" in err and "not a person" in err
    assert "has no `name`" not in err and not (tmp_path / "chars").exists()
