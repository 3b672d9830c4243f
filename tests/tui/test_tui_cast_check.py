"""The wizard's cast check: each character's description, and "failed to parse" for a file that
was found but is broken (as opposed to "not found")."""

from __future__ import annotations

from textual.app import App, ComposeResult

from promptdesk.core.casting.scene_file import scene_from_dict
from promptdesk.tui.widgets.cast_check import CastCheck


class CheckApp(App):
    def compose(self) -> ComposeResult:
        yield CastCheck()


async def checked(folder, characters) -> tuple[bool, str]:
    app = CheckApp()
    async with app.run_test() as pilot:
        check = app.query_one(CastCheck)
        ok = check.check(scene_from_dict({"name": "s", "prompt": "A scene.", "characters": characters}), [folder])
        await pilot.pause()
        return ok, str(check.render())


async def test_the_cast_check_shows_each_description(tmp_path):
    for slug in ("ann", "ben"):
        (tmp_path / f"{slug}.md").write_text(f"---\nname: {slug}\ndescription: {slug} minds the lighthouse: nights only.\n---\nBody.\n")
    ok, text = await checked(tmp_path, ["ann", "ben"])
    assert ok and "ann minds the lighthouse: nights only." in text


async def test_a_found_but_broken_file_says_failed_to_parse_and_a_missing_one_not_found(tmp_path):
    (tmp_path / "ann.md").write_text("---\nname: ann\nnever closed\n")
    (tmp_path / "ben.md").write_text("Ben.\n")
    ok, text = await checked(tmp_path, ["ann", "ben", "cy"])
    assert not ok
    assert "ann: failed to parse: Character 'ann':" in text and "never closes" in text
    assert "cy: not found" in text


async def test_the_verdict_comes_before_the_rows_so_a_crowd_does_not_push_it_below_the_fold(tmp_path):
    slugs = [f"p{n:02d}" for n in range(1, 21)]
    for slug in slugs:
        (tmp_path / f"{slug}.md").write_text(f"---\nname: {slug}\ndescription: Resident {slug}.\n---\nBody.\n")
    ok, text = await checked(tmp_path, slugs)
    lines = text.splitlines()
    assert ok and lines[1] == "Every character was found (20).", lines[:4]
    rows = [n for n, line in enumerate(lines) if line.startswith("  ✓ ")]
    assert len(rows) == 20 and rows[0] > 1
    ok, text = await checked(tmp_path, [*slugs, "nobody"])
    assert not ok and text.splitlines()[1] == "Fix the cast before going on (CHARACTER_LOAD_ERROR)."


async def test_a_broken_character_is_reported_once(tmp_path):
    """The failing character's row says why; the engine's error about the same file is not said again."""
    (tmp_path / "ann.md").write_text("---\nname: ann\nnever closed\n")
    (tmp_path / "ben.md").write_text("Ben.\n")
    ok, text = await checked(tmp_path, ["ann", "ben"])
    assert not ok and text.count("never closes") == 1, text
    assert text.count("✗") == 1, text


async def test_a_wizard_description_shows_its_summary_not_its_examples(tmp_path):
    """A wizard-style description that reaches its `<example>` blocks within the line shown
    (`Reviews code. Examples:\\n\\n<example>\\nContext: …`) showed the blocks' markup and escapes."""
    (tmp_path / "rev.md").write_text("---\nname: rev\ndescription: Reviews code. Examples:\\n\\n<example>\\nContext: A PR"
                                     "\\nuser: \"Check this\"\\n</example>\n---\nBody.\n")
    (tmp_path / "ann.md").write_text("---\nname: ann\n---\nBody.\n")
    ok, text = await checked(tmp_path, ["rev", "ann"])
    assert ok and "Reviews code.\n" in text and "<example>" not in text and "\\n" not in text
