"""Characters: slugs, layouts, resolution order, display names, journals, whole casts."""

from __future__ import annotations

import builtins
import os
import re
from datetime import datetime
from pathlib import Path

import pytest

from promptdesk.core.characters.loading import (Character, append_journal, load_cast, load_character, search_dirs,
                             validate_slug)
from promptdesk.core.errors import CharacterLoadError, InvalidConfig

ROOT = Path(__file__).resolve().parent.parent
BAD_SLUGS = ["../x", "a/b", "A", "a b", "a\x00b", "", "-a", "..", "x" * 65, "a_b", "café"]


def write(path: Path, text: str) -> Path:
    """Write a UTF-8 file, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_folder_layout_reads_profile_and_journal(tmp_path):
    write(tmp_path / "bob" / "profile.md", "# Bob - Developer\n\n## Personality\n- Optimistic\n")
    write(tmp_path / "bob" / "journal.md", "## 2025-01-01 10:00 — Earlier\n\nI was late.\n")
    bob = load_character("bob", [tmp_path])
    assert bob == Character(slug="bob", name="Bob", description="",
                            profile="# Bob - Developer\n\n## Personality\n- Optimistic\n",
                            journal="## 2025-01-01 10:00 — Earlier\n\nI was late.\n",
                            profile_path=tmp_path / "bob" / "profile.md",
                            journal_path=tmp_path / "bob" / "journal.md")


def test_single_file_layout_keeps_journal_beside_it(tmp_path):
    write(tmp_path / "charlie.md", "# Charlie\n")
    write(tmp_path / "charlie.journal.md", "old entry\n")
    charlie = load_character("charlie", [tmp_path])
    assert charlie.profile_path == tmp_path / "charlie.md"
    assert charlie.journal_path == tmp_path / "charlie.journal.md"
    assert charlie.journal == "old entry\n"


def test_missing_journal_is_empty_and_points_where_it_will_be_kept(tmp_path):
    write(tmp_path / "bob" / "profile.md", "# Bob\n")
    write(tmp_path / "eve.md", "# Eve\n")
    assert load_character("bob", [tmp_path]).journal == ""
    assert load_character("bob", [tmp_path]).journal_path == tmp_path / "bob" / "journal.md"
    assert load_character("eve", [tmp_path]).journal_path == tmp_path / "eve.journal.md"


def test_a_folder_and_a_file_of_one_name_in_the_same_folder_are_ambiguous(tmp_path):
    write(tmp_path / "bob" / "profile.md", "# Folder Bob\n")
    write(tmp_path / "bob.md", "# File Bob\n")
    with pytest.raises(CharacterLoadError, match="ambiguous") as caught:
        load_character("bob", [tmp_path])
    assert str(tmp_path / "bob" / "profile.md") in caught.value.message and str(tmp_path / "bob.md") in caught.value.message


def test_front_matter_gives_name_and_description_and_is_not_in_the_profile(tmp_path):
    write(tmp_path / "charlie.md", "---\nname: Charlie Day\ndescription: Team lead\ntools: Read\n---\n"
                                   "# Charlie - Team Lead\n\nCalm.\n")
    charlie = load_character("charlie", [tmp_path])
    assert (charlie.name, charlie.description) == ("Charlie Day", "Team lead")
    assert charlie.profile == "# Charlie - Team Lead\n\nCalm.\n"


@pytest.mark.parametrize("text, expected", [
    ("# Alice - Senior Project Manager\n", "Alice"),
    ("# Alice — Senior Project Manager\n", "Alice"),
    ("Intro line\n\n# Mary-Jane Watson\n", "Mary-Jane Watson"),
    ("## Personality\n- blunt\n", "Maria Stern"),
    ("no heading at all\n", "Maria Stern"),
    ("---\nname: Dr. Maria Stern\n---\n# Maria - Translator\n", "Dr. Maria Stern"),
    ("---\ndescription: only a description\n---\n# Maria - Translator\n", "Maria"),
])
def test_display_name_is_front_matter_then_heading_then_title_cased_slug(tmp_path, text, expected):
    write(tmp_path / "maria-stern.md", text)
    assert load_character("maria-stern", [tmp_path]).name == expected


def test_search_dirs_order_is_flag_dirs_then_characters_then_claude_agents(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    assert search_dirs([first, second], tmp_path) == [
        first, second, tmp_path / "characters", tmp_path / ".claude" / "agents"]


def test_resolution_order_first_hit_wins(tmp_path):
    flag_dir = tmp_path / "mine"
    write(tmp_path / ".claude" / "agents" / "alice.md", "# Agents Alice\n")
    dirs = search_dirs([flag_dir], tmp_path)
    assert load_character("alice", dirs).name == "Agents Alice"
    write(tmp_path / "characters" / "alice" / "profile.md", "# Characters Alice\n")
    assert load_character("alice", dirs).name == "Characters Alice"
    write(flag_dir / "alice.md", "# Flag Alice\n")
    assert load_character("alice", dirs).name == "Flag Alice"


def test_missing_character_lists_every_searched_path(tmp_path):
    dirs = search_dirs([tmp_path / "mine"], tmp_path)
    with pytest.raises(CharacterLoadError) as caught:
        load_character("nobody", dirs)
    expected = [str(path) for d in dirs for path in (d / "nobody" / "profile.md", d / "nobody.md")]
    assert caught.value.context["searched"] == expected
    message = str(caught.value)
    assert message.startswith("CHARACTER_LOAD_ERROR: Character 'nobody' not found. Searched: ")
    assert all(path in message for path in expected) and len(expected) == 6


def test_an_example_character_cast_from_a_folder_of_ones_own_says_where_the_examples_are(tmp_path):
    """`alice` in a scene of your own, in an empty folder: the examples are cast only by the example
    scenes, and the refusal says how to have them (`promptdesk init`, or --characters-dir)."""
    from promptdesk import resources

    dirs = search_dirs([], tmp_path)
    with pytest.raises(CharacterLoadError) as caught:
        load_character("alice", dirs)
    assert "one of the example characters shipped with Promptdesk" in str(caught.value)
    assert "promptdesk init DIR" in str(caught.value) and str(resources.characters_dir()) in str(caught.value)
    with pytest.raises(CharacterLoadError) as other:
        load_character("nobody", dirs)
    assert "example characters" not in str(other.value)


@pytest.mark.parametrize("slug", BAD_SLUGS)
def test_bad_slug_is_refused_before_any_file_system_access(tmp_path, monkeypatch, slug):
    def forbidden(*args, **kwargs):
        raise AssertionError(f"file system touched for slug {slug!r}")

    with monkeypatch.context() as patch:
        for name in ("exists", "is_file", "is_dir", "open", "read_text", "stat"):
            patch.setattr(Path, name, forbidden)
        patch.setattr(builtins, "open", forbidden)
        patch.setattr(os, "stat", forbidden)
        with pytest.raises(InvalidConfig) as caught:
            load_character(slug, [tmp_path])
        with pytest.raises(InvalidConfig):
            load_cast(["alice", slug], [tmp_path])
    assert repr(slug) in caught.value.message
    assert "lower-case letters, digits and hyphens" in caught.value.message


@pytest.mark.parametrize("slug", ["a", "alice", "maria-stern", "r2-d2", "0", "a-", "x" * 64])
def test_good_slugs_are_accepted(slug):
    assert validate_slug(slug) == slug


def test_slug_error_names_what_was_checked():
    with pytest.raises(InvalidConfig, match="Invalid scene name 'Bad Name'"):
        validate_slug("Bad Name", what="scene name")


def test_non_utf8_profile_is_a_load_error_naming_the_file(tmp_path):
    path = tmp_path / "bob.md"
    path.write_bytes(b"# Bob\n\xff\xfe broken\n")
    with pytest.raises(CharacterLoadError, match="not valid UTF-8") as caught:
        load_character("bob", [tmp_path])
    assert str(path) in caught.value.message


def test_non_utf8_journal_is_a_load_error_naming_the_file(tmp_path):
    write(tmp_path / "bob.md", "# Bob\n")
    (tmp_path / "bob.journal.md").write_bytes(b"\xff\xff")
    with pytest.raises(CharacterLoadError, match="bob.journal.md"):
        load_character("bob", [tmp_path])


@pytest.mark.parametrize("front, problem", [
    ("---\nname: Bob\n# Bob, never closed\n", ":1: opens front matter with '---' on line 1 but never closes"),
    ("---\nname: Bob\n---\n\n  \n", "has no profile text below the front matter (which ends on line 3)"),
])
def test_bad_front_matter_is_a_load_error_naming_the_file(tmp_path, front, problem):
    path = write(tmp_path / "bob.md", front)
    with pytest.raises(CharacterLoadError, match=re.escape(problem)) as caught:
        load_character("bob", [tmp_path])
    assert str(path) in caught.value.message


@pytest.mark.parametrize("front, name", [
    ("---\nname: [unclosed\n---\n# Bob\n", "[unclosed"),
    ("---\n- a list\n---\n# Bob\n", "Bob"),
    ("---\nname: 42\n---\n# Bob\n", "42"),
])
def test_front_matter_strict_yaml_refuses_is_read_line_by_line(tmp_path, front, name):
    write(tmp_path / "bob.md", front)
    bob = load_character("bob", [tmp_path])
    assert bob.name == name and bob.profile == "# Bob\n"


@pytest.mark.parametrize("written", ["007", "No", "yes", "2024-01-01", "3.10", "0x1F", "~Tilde"])
def test_a_name_yaml_would_type_is_kept_as_written(tmp_path, written):
    """Strict YAML reads `name: No` as false, `007` as 7 and `2024-01-01` as a date; the name is the
    text the file holds, not the slug the character fell back to."""
    write(tmp_path / "bob.md", f"---\nname: {written}\ndescription: 1.50\n---\nYou are someone.\n")
    bob = load_character("bob", [tmp_path])
    assert bob.name == written and bob.description == "1.50"


def test_front_matter_closed_by_yaml_document_end_is_read(tmp_path):
    """`...` closes a YAML document (and Pandoc's front matter): the block is front matter, not profile."""
    write(tmp_path / "bob.md", "---\nname: Robert\ntools: Bash, Read\n...\nYou are Robert.\n")
    bob = load_character("bob", [tmp_path])
    assert bob.name == "Robert" and bob.profile == "You are Robert.\n"
    wizard = ("---\nname: ann\ndescription: Use when: the user says \"hm\"\n...\nand waits\n---\nYou are Ann.\n")
    write(tmp_path / "ann.md", wizard)  # a `...` line inside a description strict YAML refuses stays in it
    ann = load_character("ann", [tmp_path])
    assert ann.profile == "You are Ann.\n" and ann.description.endswith("... and waits")


def test_front_matter_after_blank_lines_is_still_front_matter_and_never_reaches_the_actor(tmp_path):
    """A file opening with an empty line, then `---`: its `tools:` and `model:` are front matter, which
    never reaches an actor, not profile text sent with the briefing."""
    write(tmp_path / "bob.md", "\n  \n---\nname: Robert\ntools: Bash\nmodel: opus\n---\nYou are Robert.\n")
    bob = load_character("bob", [tmp_path])
    assert bob.name == "Robert" and bob.profile == "You are Robert.\n"


def test_unreadable_profile_is_a_load_error_naming_the_file(tmp_path, monkeypatch):
    path = write(tmp_path / "bob" / "profile.md", "# Bob\n")

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", denied)
    with pytest.raises(CharacterLoadError, match="cannot read .*Permission denied") as caught:
        load_character("bob", [tmp_path])
    assert str(path) in caught.value.message


def test_journal_append_writes_dated_headers_and_creates_the_file(tmp_path):
    write(tmp_path / "bob.md", "# Bob\n")
    bob = load_character("bob", [tmp_path])
    append_journal(bob, "First time.  \n", when=datetime(2025, 10, 3, 14, 32, 18), scene_title="The Apology")
    append_journal(bob, "Second time.", when=datetime(2025, 10, 4, 9, 5), scene_title="Morning Kitchen")
    assert (tmp_path / "bob.journal.md").read_text(encoding="utf-8") == (
        "\n## 2025-10-03 14:32 — The Apology\n\nFirst time.\n"
        "\n## 2025-10-04 09:05 — Morning Kitchen\n\nSecond time.\n")
    assert load_character("bob", [tmp_path]).journal.count("\n## ") == 2


def test_journal_append_keeps_earlier_entries_and_creates_missing_folders(tmp_path):
    write(tmp_path / "alice" / "profile.md", "# Alice\n")
    alice = load_character("alice", [tmp_path])
    moved = Character(**{**alice.__dict__, "journal_path": tmp_path / "new" / "deep" / "journal.md"})
    append_journal(moved, "Hello.", when=datetime(2025, 1, 2, 3, 4), scene_title="S")
    assert moved.journal_path.read_text(encoding="utf-8") == "\n## 2025-01-02 03:04 — S\n\nHello.\n"

    write(alice.journal_path, "# Alice's journal\n\nno trailing newline")
    append_journal(alice, "Next.", when=datetime(2025, 1, 2, 3, 4), scene_title="S")
    assert alice.journal_path.read_text(encoding="utf-8") == (
        "# Alice's journal\n\nno trailing newline\n\n## 2025-01-02 03:04 — S\n\nNext.\n")


def test_load_cast_returns_characters_in_order(tmp_path):
    write(tmp_path / "alice" / "profile.md", "# Alice\n")
    write(tmp_path / "bob.md", "# Bob\n")
    assert [c.slug for c in load_cast(["bob", "alice"], [tmp_path])] == ["bob", "alice"]


def test_load_cast_is_all_or_nothing_and_reports_every_missing_character(tmp_path):
    write(tmp_path / "alice" / "profile.md", "# Alice\n")
    with pytest.raises(CharacterLoadError) as caught:
        load_cast(["alice", "ghost", "phantom"], [tmp_path])
    assert "'ghost' not found" in caught.value.message and "'phantom' not found" in caught.value.message
    assert caught.value.context["characters"] == ["ghost", "phantom"]
    with pytest.raises(CharacterLoadError) as single:
        load_cast(["alice", "ghost"], [tmp_path])
    assert single.value.context["character"] == "ghost"


def test_load_cast_refuses_duplicate_slugs(tmp_path):
    write(tmp_path / "alice.md", "# Alice\n")
    with pytest.raises(InvalidConfig, match="Duplicate character.*alice"):
        load_cast(["alice", "alice"], [tmp_path])


def test_example_characters_load_from_the_repository():
    dirs = search_dirs(cwd=ROOT)
    cast = {c.slug: c for c in load_cast(["alice", "bob", "charlie", "maria-stern", "sam-reed"], dirs)}
    assert {s: c.name for s, c in cast.items()} == {
        "alice": "Alice", "bob": "Bob", "charlie": "Charlie", "maria-stern": "Maria Stern", "sam-reed": "Sam Reed"}
    assert cast["charlie"].description and cast["charlie"].journal_path.name == "charlie.journal.md"
    assert "## 20" in cast["alice"].journal
    for character in cast.values():
        assert "## Personality" in character.profile and "## Behavioral Traits" in character.profile


def test_a_cast_reads_each_files_name_once_however_many_it_casts(tmp_path, monkeypatch):
    """Casting n characters from one folder looks for each among every file: the files' `name:` are
    read once for the whole cast, not once per character (n² reads at a crowd's size)."""
    from promptdesk.core.characters import search

    slugs = [f"person-{n}" for n in range(12)]
    for slug in slugs:
        (tmp_path / f"{slug}.md").write_text(f"---\nname: {slug.title()}\n---\n# {slug}\n", encoding="utf-8")
    read: list[Path] = []
    original = search.Candidate.front_name
    monkeypatch.setattr(search.Candidate, "front_name", lambda self: read.append(self.profile) or original(self))
    cast = load_cast(slugs, [tmp_path])
    assert [c.slug for c in cast] == slugs
    assert sorted(read) == sorted(tmp_path / f"{slug}.md" for slug in slugs)


def test_a_journal_entry_keeps_no_direction_control_a_model_wrote(tmp_path):
    """An entry is the model's text: a right-to-left override it left open (U+202E) would show the rest of
    the journal's line reversed; right-to-left words stay as written."""
    write(tmp_path / "layla.md", "# ليلى\n")
    layla = load_character("layla", [tmp_path])
    append_journal(layla, "اليوم \u202eكان طويلا\u2067 and \u200fquiet.", when=datetime(2025, 1, 2, 3, 4), scene_title="S")
    text = (tmp_path / "layla.journal.md").read_text(encoding="utf-8")
    assert "اليوم كان طويلا and quiet." in text and not set(text) & set("\u202e\u2067\u200f")
