"""Claude Code agent files load as they are: tolerant front matter, found by file name or `name:`,
near matches when not found, only the name and (on request) the description reach an actor."""

from __future__ import annotations

import json

import pytest

from promptdesk.core.record.prompt_log import read_requests

from promptdesk.core.characters.loading import load_cast, load_character, search_dirs
from promptdesk.core.cli.main import main
from promptdesk.core.errors import CharacterLoadError, InvalidConfig

WIZARD = """---
name: code-reviewer
description: Use this agent when you need a careful review. Examples: <example>Context: the user just wrote a parser. user: "Can you check it?" assistant: "I'll use the code-reviewer agent: it reads every branch" <commentary>Reviews catch bugs.</commentary></example>
tools: Read, Grep, Glob
model: inherit
color: blue
---

You are a code reviewer who reads every branch twice and says what is wrong plainly.
"""
STARS = """---
name: powershell-5.1-expert
description: **Expert** in Windows PowerShell 5.1: modules, remoting, "quirks" and all.
tools: [Read, Bash]
---
You write PowerShell 5.1 that runs on a fresh Windows Server.
"""
FOLDED = """---
name: story-teller
description: >
  Tells stories: short ones,
  with "quotes" and emoji 🎭.
model: inherit: yes
color: purple
---
# Story Teller 🎭

You tell stories to anyone who stops by.
"""
RENAMED = """---
name: Data Wrangler
description: Cleans tables.
---
You clean tables and say which rows you dropped.
"""


@pytest.fixture
def agents(tmp_path):
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    for name, text in (("CodeReviewer.md", WIZARD), ("powershell-5.1-expert.md", STARS),
                       ("story_teller.md", FOLDED), ("helper-7.md", RENAMED)):
        (folder / name).write_text(text)
    return folder


def dirs(tmp_path):
    return search_dirs([], tmp_path)


def agent_folder(tmp_path, monkeypatch, files: dict[str, str]):
    """`.claude/agents/` under `tmp_path` (the working folder) holding `files` (name -> text)."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_agent_wizard_file_with_colons_quotes_and_examples_loads(tmp_path, agents):
    reviewer = load_character("code-reviewer", dirs(tmp_path))
    assert reviewer.name == "code-reviewer"
    assert reviewer.description.startswith("Use this agent when you need a careful review. Examples: <example>")
    assert reviewer.profile.strip() == "You are a code reviewer who reads every branch twice and says what is wrong plainly."


def test_stars_dots_and_tools_as_a_list_load(tmp_path, agents):
    for typed in ("powershell-5.1-expert", "powershell-5-1-expert"):
        expert = load_character(typed, dirs(tmp_path))
        assert expert.name == "powershell-5.1-expert" and expert.slug == typed
        assert expert.description == '**Expert** in Windows PowerShell 5.1: modules, remoting, "quirks" and all.'


def test_a_folded_block_survives_a_front_matter_strict_yaml_refuses(tmp_path, agents):
    teller = load_character("story-teller", dirs(tmp_path))
    assert teller.name == "story-teller"
    assert teller.description == 'Tells stories: short ones, with "quotes" and emoji 🎭.'
    assert teller.profile.startswith("# Story Teller 🎭")


def test_a_character_is_found_by_file_name_folded_or_by_its_name(tmp_path, agents):
    found = {slug: c.profile_path.name for slug, c in
             ((s, load_character(s, dirs(tmp_path))) for s in ("code-reviewer", "codereviewer", "story-teller",
                                                              "data-wrangler", "helper-7"))}
    assert found == {"code-reviewer": "CodeReviewer.md", "codereviewer": "CodeReviewer.md",
                     "story-teller": "story_teller.md", "data-wrangler": "helper-7.md", "helper-7": "helper-7.md"}


def test_not_found_lists_near_matches_on_disk(tmp_path, agents, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CharacterLoadError) as caught:
        load_character("code-reviwer", dirs(tmp_path))
    assert "did you mean `code-reviewer` (from `.claude/agents/CodeReviewer.md`)?" in caught.value.message.replace("Did", "did")


def test_a_name_with_accents_is_found_by_its_ascii_spelling_and_suggested_so(tmp_path, monkeypatch):
    """`name: José García` or a file `Zoë.md` can only be typed in ASCII (the slug rule): they are found
    by `jose-garcia` and `zoe`, and a near miss suggests the spelling that can be typed."""
    agent_folder(tmp_path, monkeypatch, {"chef.md": "---\nname: José García\n---\nYou cook.\n", "Zoë.md": "You sing.\n",
                                         "sorensen.md": "---\nname: Astrid Sørensen\n---\nYou sail.\n"})
    assert load_character("jose-garcia", dirs(tmp_path)).name == "José García"
    assert load_character("zoe", dirs(tmp_path)).profile_path.name == "Zoë.md"
    assert load_character("astrid-sorensen", dirs(tmp_path)).name == "Astrid Sørensen"
    with pytest.raises(CharacterLoadError) as caught:
        load_character("jose-garcio", dirs(tmp_path))
    assert "Did you mean `jose-garcia` (from `.claude/agents/chef.md`)?" in caught.value.message


def test_a_name_wearing_emoji_is_found_by_its_words_and_suggested_so(tmp_path, monkeypatch):
    """Agent files and cards in the wild decorate names (`name: 🚀 Launch Reviewer`, a file `⭐️-nova.md`,
    `Luna 🌙`): the emoji is dropped as `import` drops it from a card's slug, so the words can be typed;
    a name in another script still cannot be (no part of it is dropped)."""
    agent_folder(tmp_path, monkeypatch, {
        "launch.md": "---\nname: 🚀 Launch Reviewer\ntools: [Read]\n---\nYou review launches.\n",
        "⭐️-nova.md": "You shine.\n", "moon.md": "---\nname: Luna 🌙\n---\nYou watch the night.\n",
        "thumbs.md": "---\nname: 👍🏽 Thumbs Up Tam\n---\nYou approve.\n"})
    assert load_character("launch-reviewer", dirs(tmp_path)).name == "🚀 Launch Reviewer"
    assert load_character("nova", dirs(tmp_path)).profile_path.name == "⭐️-nova.md"
    assert load_character("luna", dirs(tmp_path)).name == "Luna 🌙"
    assert load_character("thumbs-up-tam", dirs(tmp_path)).name == "👍🏽 Thumbs Up Tam"
    with pytest.raises(CharacterLoadError) as caught:
        load_character("launch-reviewr", dirs(tmp_path))
    assert "Did you mean `launch-reviewer` (from `.claude/agents/launch.md`)" in caught.value.message


def test_the_slug_rule_still_guards_what_the_user_types(tmp_path, agents):
    for typed in ("../agents/CodeReviewer", "CodeReviewer", "code_reviewer", "a..b", "x."):
        with pytest.raises(InvalidConfig):
            load_character(typed, dirs(tmp_path))


def test_a_file_named_only_in_another_script_is_named_when_a_cast_misses_it(tmp_path, monkeypatch):
    """Its file name and `name:` are both Cyrillic, so no slug can be typed for it: a cast that asks for
    `olga` is told the file is there, why it cannot be cast, and what to rename it to."""
    agent_folder(tmp_path, monkeypatch, {"ольга.md": "---\nname: Ольга Смирнова\n---\nТы инженер.\n",
                                         "ben.md": "You build.\n"})
    with pytest.raises(CharacterLoadError) as caught:
        load_character("olga", dirs(tmp_path))
    message = caught.value.message
    assert "`.claude/agents/ольга.md` (Ольга Смирнова)" in message and "`olga.md`" in message
    assert "ben.md" not in message


def test_a_body_that_is_only_an_include_is_refused_naming_the_line(tmp_path):
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "wrapper.md").write_text("---\nname: wrapper\n---\n\n{{file: ../shared/prompt.md}}\n")
    with pytest.raises(CharacterLoadError) as caught:
        load_character("wrapper", dirs(tmp_path))
    assert "wrapper.md:5: the body is only an include ({{file: ../shared/prompt.md}})" in caught.value.message


def test_two_agents_with_the_same_name_are_refused(tmp_path):
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    for stem in ("reviewer-a", "reviewer-b"):
        (folder / f"{stem}.md").write_text(f"---\nname: code-reviewer\n---\nI review, as {stem}.\n")
    with pytest.raises(InvalidConfig, match="both called 'code-reviewer'"):
        load_cast(["reviewer-a", "reviewer-b"], dirs(tmp_path))


def run_agents(tmp_path, extra: str = "") -> list[dict]:
    scene = tmp_path / "s.yaml"
    scene.write_text(f"name: s\nprompt: A scene.\ncharacters: [code-reviewer, story-teller]\nisolation: b\ncoordinator: C\n{extra}")
    assert main(["--batch", str(scene), "--out", str(tmp_path / "run"), "--max-beats", "1", "--seed", "1"]) == 0
    return read_requests(tmp_path / "run")


def test_tools_model_and_color_never_reach_an_actor_and_description_is_off_by_default(tmp_path, agents, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = {p.name: p.read_bytes() for p in agents.iterdir()}
    sent = json.dumps(run_agents(tmp_path))
    for private in ("Read, Grep, Glob", "inherit", "purple", "blue", "Use this agent", "Tells stories: short"):
        assert private not in sent
    assert "You are a code reviewer who reads every branch twice" in sent
    assert {p.name: p.read_bytes() for p in agents.iterdir()} == before, "nothing is written in .claude/agents"


def test_character_fields_description_puts_it_in_the_briefing(tmp_path, agents, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prompts = run_agents(tmp_path, "character_fields: [description]\n")
    system = next(p["request"]["system"] for p in prompts if p["to"] == "story-teller")
    assert 'Description: Tells stories: short ones, with "quotes" and emoji 🎭.' in system
    assert "inherit" not in json.dumps(prompts)


def test_a_broken_file_for_a_builtin_participant_is_an_error_not_the_builtin_persona(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "gpt.md").write_text("---\nname: gpt\nnever closed\n")
    assert main(["--batch", "--collaborate", "Plan a picnic", "--isolation", "a", "--coordinator", "C",
                 "--out", str(tmp_path / "run")]) == 2
    assert "gpt.md:1: opens front matter" in capsys.readouterr().err


def test_an_agent_collection_installed_in_subfolders_is_cast_by_name(tmp_path, monkeypatch):
    """`cp -r agents/* ~/.claude/agents/`, as agent collections install, leaves
    `.claude/agents/engineering/frontend-developer.md`, which Claude Code reads: each file is cast by its
    file name or `name:`, two of one name in different subfolders are refused naming both, a hidden or
    symlinked folder is not searched, and nothing is written inside `.claude/agents/`."""
    monkeypatch.chdir(tmp_path)
    agents = tmp_path / ".claude" / "agents"
    (agents / "engineering" / "web").mkdir(parents=True)
    (agents / "design").mkdir()
    (agents / ".git").mkdir()
    (agents / "README.md").write_text("# Our agents\n\nCopy them all.\n")
    (agents / "engineering" / "frontend-developer.md").write_text(
        "---\nname: frontend-developer\ndescription: Builds UIs\ntools: Read, Write\ncolor: blue\n---\n\nYou ship UIs.\n")
    (agents / "engineering" / "web" / "css_wizard.md").write_text("---\nname: CSS Wizard\n---\nYou centre divs.\n")
    (agents / "design" / "ui-designer.md").write_text("---\nname: UI Designer\n---\nYou draw screens.\n")
    (agents / "design" / "frontend-developer.md").write_text("You also ship UIs.\n")
    (agents / ".git" / "hidden-agent.md").write_text("You are not an agent.\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "escapee.md").write_text("You live outside.\n")
    (agents / "linked").symlink_to(outside)
    assert load_character("ui-designer", dirs(tmp_path)).name == "UI Designer"
    assert load_character("css-wizard", dirs(tmp_path)).profile_path.name == "css_wizard.md"
    with pytest.raises(CharacterLoadError) as caught:
        load_character("frontend-developer", dirs(tmp_path))
    assert ".claude/agents/design/frontend-developer.md" in caught.value.message
    assert ".claude/agents/engineering/frontend-developer.md" in caught.value.message
    for hidden in ("hidden-agent", "escapee"):
        with pytest.raises(CharacterLoadError):
            load_character(hidden, dirs(tmp_path))
    (agents / "design" / "frontend-developer.md").unlink()
    scene = tmp_path / "standup.yaml"
    scene.write_text("name: standup\nsetting: Monday\nprompt: The release slipped.\n"
                     "characters: [frontend-developer, ui-designer, css-wizard]\nlimits: {max_beats: 2}\n")
    before = sorted((p, p.stat().st_mtime_ns) for p in agents.rglob("*"))
    assert main(["--batch", str(scene), "--isolation", "a", "--coordinator", "C", "--seed", "1", "--quiet",
                 "--out", str(tmp_path / "run")]) == 0
    assert sorted((p, p.stat().st_mtime_ns) for p in agents.rglob("*")) == before
    assert "frontend-developer (frontend-developer)" in (tmp_path / "run" / "notes.md").read_text()


def test_a_one_line_wizard_description_with_written_line_breaks_reaches_the_briefing_clean(tmp_path):
    """Agent collections write the wizard's description on one line, `\\n` for each break (YAML keeps the
    backslashes): the examples were not found behind `Examples:\\n\\n`, and the briefing carried
    `... startup humor. Examples:\\n\\n \\n\\n`. A single `\\n` (a Windows path) is left as written."""
    from promptdesk.core.characters.loading import with_fields

    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "jester.md").write_text(
        "---\nname: jester\ndescription: Use this agent to lighten the mood. It tells office jokes. Examples:\\n\\n"
        "<example>\\nContext: A long sprint\\nuser: \"We are tired\"\\nassistant: \"Let me use the jester agent.\"\\n"
        "<commentary>\\nHumour resets a team.\\n</commentary>\\n</example>\\n\\n<example>\\nContext: A dull 404 page\\n"
        "user: \"Make it fun\"\\n</example>\ncolor: yellow\ntools: Write\n---\n\nYou tell jokes that land.\n")
    (folder / "porter.md").write_text("---\nname: porter\ndescription: Moves files from C:\\new\\tasks to D:\\done\n---\n"
                                      "You move files.\n")
    jester = with_fields(load_character("jester", dirs(tmp_path)), ["description"])
    assert jester.profile.rstrip().endswith(
        "Description: Use this agent to lighten the mood. It tells office jokes.")
    both = with_fields(load_character("jester", dirs(tmp_path)), ["examples"])
    assert both.profile.rstrip().endswith('Examples: <example> Context: A long sprint user: "We are tired" assistant: '
                                          '"Let me use the jester agent." <commentary> Humour resets a team. '
                                          '</commentary> </example> <example> Context: A dull 404 page user: '
                                          '"Make it fun" </example>')
    porter = with_fields(load_character("porter", dirs(tmp_path)), ["description"])
    assert porter.profile.rstrip().endswith("Description: Moves files from C:\\new\\tasks to D:\\done")
