"""What the wizard says about a scene once picked, and the summary shown before starting."""

from __future__ import annotations

from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text

from promptdesk.core.casting.notes import ISOLATION_LINES, ROLE_LINES
from promptdesk.core.casting.scene_file import Scene
from promptdesk.core.casting.build import RunOptions
from promptdesk.tui.formats import registry
from promptdesk.tui.lines import safe

LABEL = Style(dim=True)


def scene_status(scene: Scene) -> str:
    """One line about a valid scene: title, cast, format."""
    cast = ", ".join(scene.characters)
    return (f"✓ {scene.title} — {len(scene.characters)} characters ({cast}); format {scene.format}, "
            f"{scene.turns} turns, up to {scene.limits.beats_for(len(scene.characters))} beats")


def pace_line(scene: Scene, options: RunOptions) -> str:
    """The pace the run will keep, and where it comes from."""
    from promptdesk.core.casting.build import provider_spec
    from promptdesk.core.engine.pacing import resolve

    seconds = resolve(options.pace, scene.pace, options.offline_pace,
                      [provider_spec(scene, slug, options) for slug in scene.characters])
    where = ("--pace" if options.pace is not None else "the scene file" if scene.pace is not None
             else "the offline improviser's console pace" if seconds else "")
    if not seconds:
        return "off: each beat starts as soon as the last one ends (+/- on the stage)"
    return f"at least {seconds:g} s per beat ({where}; +/- on the stage)"


def protocol_line(scene: Scene, options: RunOptions, applies: bool) -> str:
    """How the actors answer; for a format that keeps its own replies, that the setting is ignored."""
    if not applies:
        return f"the {scene.format} format's own replies (--protocol and protocol: concern scene actors only)"
    if options.protocol:
        return f"{options.protocol} (every actor's replies)"
    return f"{scene.provider.protocol} (as the scene file says)"


def summary(scene: Scene | None, options: RunOptions, left_out: str = "") -> Group:
    """Everything the run will use, as the operator confirms it (a long value wraps under itself)."""
    if scene is None:
        return Group()
    fmt = registry.get(scene.format)
    seed = options.seed if options.seed is not None else scene.seed
    rows = [
        ("Scene", f"{scene.title} ({scene.name})"),
        ("Format", registry.label(registry.choice_of(scene))),
        *fmt.summary_rows(scene),
        ("Cast", ", ".join(scene.characters) + (f" ({left_out})" if left_out else "")),
        ("Isolation", ISOLATION_LINES.get(options.isolation or "", "not chosen")),
        ("Coordinator", ROLE_LINES.get(options.coordinator or "", "not chosen")),
        ("Provider", f"{options.provider or scene.provider.name}, model "
                     f"{options.model or (scene.provider.model if not options.provider else None) or 'default'}"),
        ("Base URL", options.base_url or (scene.provider.base_url if not options.provider else None)
         or "the provider's own"),
        ("Protocol", protocol_line(scene, options, "protocol" in fmt.wizard_fields(registry.choice_of(scene)))),
        ("Pace", pace_line(scene, options)),
        ("Seed", str(seed) if seed is not None else "random (written to notes.md)"),
        *([("Max beats", str(options.max_beats or scene.limits.beats_for(len(scene.characters))))]
          if "max_beats" in fmt.wizard_fields(registry.choice_of(scene)) else []),
        ("Run folder", str(options.out or options.runs_root / f"{scene.name}-<date-time>")),
    ]
    table = Table.grid(padding=(0, 1))
    table.add_column(style=LABEL, no_wrap=True, min_width=11)
    table.add_column(ratio=1)
    for label, value in rows:
        table.add_row(label, Text(safe(value)))
    return Group(table, Text("\nStarting writes notes.md (both choices first) before any actor is spawned.",
                             Style(bold=True)))
