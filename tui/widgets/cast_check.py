"""The wizard's cast check: every character of the scene found, or the engine's error in its place."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from core.characters import load_cast, load_character
from core.errors import PromptdeskError
from tui.render import safe

OK, FAIL = Style(color="green", bold=True), Style(color="red", bold=True)


class CastCheck(Static):
    """One row per character: its name and profile file, or why it could not be loaded."""

    DEFAULT_CSS = """
    CastCheck { height: auto; padding: 0 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(markup=False, **kwargs)
        self.ok = False
        """True when every character was found and read."""

    def check(self, slugs: Sequence[str], dirs: Sequence[Path]) -> bool:
        """Look every character up (as the engine will) and show the result."""
        text = Text()
        text.append("Cast check — searched, in order: ", Style(bold=True))
        text.append(", ".join(safe(d) for d in dirs) + "\n\n")
        found = 0
        for slug in slugs:
            try:
                character = load_character(slug, dirs)
            except PromptdeskError as exc:
                text.append("  ✗ ", FAIL)
                text.append(f"{safe(slug)}: {safe(exc)}\n")
                continue
            found += 1
            text.append("  ✓ ", OK)
            text.append(f"{safe(character.name)} ({slug}) — {safe(character.profile_path)}\n")
        self.ok = found == len(slugs) and self._whole_cast(slugs, dirs, text)
        text.append("\nEvery character was found." if self.ok else "\nFix the cast before going on.",
                    OK if self.ok else FAIL)
        self.update(text)
        return self.ok

    @staticmethod
    def _whole_cast(slugs: Sequence[str], dirs: Sequence[Path], text: Text) -> bool:
        """The engine's own all-or-nothing check (it also rejects duplicates)."""
        try:
            load_cast(slugs, dirs)
        except PromptdeskError as exc:
            text.append(f"  ✗ {safe(exc)}\n", FAIL)
            return False
        return True
