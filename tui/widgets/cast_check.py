"""The wizard's cast check: every character of the scene found, or the engine's error in its place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from promptdesk.core.characters.front_matter import without_examples
from promptdesk.core.characters.loading import load_character
from promptdesk.core.errors import PromptdeskError
from promptdesk.core.casting.scene_file import Scene
from promptdesk.tui.formats import registry
from promptdesk.tui.lines import safe

OK, FAIL = Style(color="green", bold=True), Style(color="red", bold=True)
DESCRIPTION_SHOWN = 100
"""The longest description shown under a character, in characters."""


def engine_cast_loader(scene: Scene) -> Callable[[Sequence[str], Sequence[Path]], list[Any]]:
    """The loader the engine itself will use for this scene's format (characters, cards cast directly,
    or the participants its format casts its own way)."""
    from promptdesk.core.casting import build as setup

    return lambda _slugs, dirs: setup.load_scene_cast(scene, list(dirs), Path.cwd())


class CastCheck(Static):
    """One row per character: its name and profile file, or why it could not be loaded."""

    DEFAULT_CSS = """
    CastCheck { height: auto; padding: 0 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(markup=False, **kwargs)
        self.ok = False
        """True when every character was found and read."""
        self.names: dict[str, str] = {}
        """Each character's name by slug, as found (what the confirm step calls them)."""

    def check(self, scene: Scene, dirs: Sequence[Path]) -> bool:
        """Load the cast as the engine will and show the result: the verdict first (a crowd's list runs
        below the fold), then one row per character."""
        rows, code = Text(), ""
        try:
            cast = engine_cast_loader(scene)(scene.characters, dirs)
        except PromptdeskError as exc:
            self.ok, code = False, exc.code
            if not self._each(scene, dirs, rows):
                rows.append(f"\n  ✗ {safe(exc)}\n", FAIL)
        else:
            self.ok = True
            self.names = {c.slug: c.name for c in cast if getattr(c, "slug", None) and getattr(c, "name", None)}
            for character in cast:
                self._found(character, rows)
        text = Text()
        text.append("Cast check — searched, in order: ", Style(bold=True))
        text.append(", ".join(safe(d) for d in dirs) + "\n")
        text.append(f"Every character was found ({len(cast)}).\n\n" if self.ok else
                    f"Fix the cast before going on ({code}).\n\n", OK if self.ok else FAIL)
        text.append_text(rows)
        self.update(text)
        return self.ok

    @staticmethod
    def _each(scene: Scene, dirs: Sequence[Path], text: Text) -> int:
        """Which characters were found and which were not (for a format whose cast is listed one by one);
        how many were not (each said once, with why: the engine's own error is then not said again)."""
        failed = 0
        if not registry.get(scene.format).lists_cast:
            return failed
        for slug in (s for s in scene.characters if s not in scene.cards):
            try:
                character = load_character(slug, dirs)
            except PromptdeskError as exc:
                text.append("  ✗ ", FAIL)
                problem = ("not found" if "searched" in exc.context else exc.message if "candidates" in exc.context
                           else f"failed to parse: {exc.message}")
                text.append(f"{safe(slug)}: {safe(problem)}\n")
                failed += 1
            else:
                CastCheck._found(character, text)
        return failed

    @staticmethod
    def _found(character: Any, text: Text) -> None:
        """One found character: its name, slug, file and (shortened) description."""
        text.append("  ✓ ", OK)
        text.append(f"{safe(character.name)} ({character.slug}) — {safe(character.profile_path)}\n")
        description = without_examples(character.description)   # a wizard's `<example>` blocks are not a summary
        if description:
            short = description if len(description) <= DESCRIPTION_SHOWN else (
                description[:DESCRIPTION_SHOWN - 1].rstrip() + "…")
            text.append(f"      {safe(short)}\n")
