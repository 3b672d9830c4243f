"""What the wizard says about a scene once picked, and the summary shown before starting."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from core.casting.notes import ISOLATION_LINES, ROLE_LINES
from core.casting.scene_file import Scene
from core.casting.build import RunOptions
from tui.formats import registry
from tui.lines import safe

LABEL = Style(dim=True)


def scene_status(scene: Scene) -> str:
    """One line about a valid scene: title, cast, format."""
    cast = ", ".join(scene.characters)
    return (f"✓ {scene.title} — {len(scene.characters)} characters ({cast}); format {scene.format}, "
            f"{scene.turns} turns, up to {scene.limits.beats_for(len(scene.characters))} beats")


def summary(scene: Scene | None, options: RunOptions) -> Text:
    """Everything the run will use, as the operator confirms it."""
    text = Text()
    if scene is None:
        return text
    rows = [
        ("Scene", f"{scene.title} ({scene.name})"),
        ("Setting", scene.setting or "—"),
        ("Format", registry.label(registry.choice_of(scene))),
        ("Goal", scene.goal or "—"),
        ("Cast", ", ".join(scene.characters)),
        ("Isolation", ISOLATION_LINES.get(options.isolation or "", "not chosen")),
        ("Coordinator", ROLE_LINES.get(options.coordinator or "", "not chosen")),
        ("Provider", f"{options.provider or scene.provider.name}, model "
                     f"{options.model or (scene.provider.model if not options.provider else None) or 'default'}"),
        ("Run folder", str(options.out or options.runs_root / f"{scene.name}-<date-time>")),
    ]
    for label, value in rows:
        text.append(f"{label:<12}", LABEL)
        text.append(f"{safe(value)}\n")
    text.append("\nStarting writes notes.md (both choices first) before any actor is spawned.", Style(bold=True))
    return text
