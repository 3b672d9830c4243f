"""What the wizard says about a scene once picked, and the summary shown before starting."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.style import Style
from rich.table import Table
from rich.text import Text

from promptdesk.core.casting.notes import ISOLATION_LINES, ROLE_LINES
from promptdesk.core.casting.scene_file import Scene
from promptdesk.core.casting.build import RunOptions
from promptdesk.tui.formats import registry
from promptdesk.tui.lines import safe

LABEL = Style(dim=True)
ADDRESSES = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1",
             "claude-code": "the Claude Code command on this machine, which calls Anthropic"}
"""Where a provider's calls go when no base URL is given (the SDKs' own addresses)."""


def spec_words(spec) -> str:
    """How a provider spec reads to a person: what answers, which model, at which address."""
    if spec.name == "offline":
        return "the offline improviser (a seeded program on this machine, not a language model)"
    model = spec.model or "no model given"
    where = spec.base_url or ADDRESSES.get(spec.name, "its default address")
    return f"{spec.name}, model {model}, at {where}"


def calls_rows(scene: Scene, options: RunOptions) -> list[tuple[str, str]]:
    """Who answers the actors, who judges the scene (and what the judge reads), and what leaves this
    machine: the rows a first-time director reads to know where the scene's words go."""
    from promptdesk.core.casting.build import provider_spec

    groups: dict[str, list[str]] = {}
    remote: list[str] = []
    for slug in scene.characters:
        spec = provider_spec(scene, slug, options)
        groups.setdefault(spec_words(spec), []).append(slug)
        if spec.name != "offline" and "every actor's briefing and replies" not in remote:
            remote.append("every actor's briefing and replies")
    actors = next(iter(groups)) if len(groups) == 1 else "; ".join(
        f"{', '.join(slugs)}: {words}" for words, slugs in groups.items())
    role = options.coordinator or ""
    if role in ("A", "B"):
        judge = provider_spec(scene, None, options)
        reads = "every beat's speech, your notes.md and the coordinator notes" if role == "A" else "every beat's speech"
        judge_row = f"{spec_words(judge)}; it reads {reads} (role {role})"
        if judge.name != "offline":
            remote.append(f"{reads}, to the judge ({judge.name})")
    else:
        judge_row = "none: role C's rules decide in code, no call is made"
    evaluation = evaluation_row(scene, options, remote)
    sent = ("nothing: every call is answered on this machine" if not remote else
            "; ".join(remote) + ". Calls to a paid API are billed by it (the Session panel shows the cost).")
    return [("Actors", actors), ("Judge", judge_row), *evaluation, ("Sent out", sent)]


def evaluation_row(scene: Scene, options: RunOptions, remote: list[str]) -> list[tuple[str, str]]:
    """The scene's evaluation after the close (`evaluate:`), if it has one: its rubric, who scores and
    what that evaluator reads (added to `remote` when it is not on this machine)."""
    from promptdesk.core.casting.build import provider_spec
    from promptdesk.core.casting.evaluators import spec_for
    from promptdesk.core.protocol.rubrics import RUBRICS

    spec = spec_for(scene, provider_spec(scene, None, options))
    if spec is None or scene.evaluate is None:
        return []
    reads = "the transcript and every actor's profile, goal and secret"
    if spec.name != "offline":
        remote.append(f"{reads}, after the close, to the evaluator ({spec.name})")
    return [("Evaluation", f"{RUBRICS[scene.evaluate].title} after the close, one call per actor, by "
                           f"{spec_words(spec)}; it reads {reads}")]


def scene_status(scene: Scene) -> str:
    """One line about a valid scene: title, cast, format, and how long it may run (in the format's unit)."""
    cast = ", ".join(scene.characters)
    return (f"✓ {scene.title} — {len(scene.characters)} characters ({cast}); format {scene.format}, "
            f"{scene.turns} turns, {registry.get(scene.format).bound(scene)}")


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


def summary(scene: Scene | None, options: RunOptions, left_out: str = "",
            names: dict[str, str] | None = None) -> Group:
    """Everything the run will use, as the operator confirms it (a long value wraps under itself); the
    cast (and a collaboration's first speaker) by the `names` the cast check found, else by slug."""
    names = names or {}
    if scene is None:
        return Group()
    fmt = registry.get(scene.format)
    seed = options.seed if options.seed is not None else scene.seed
    rows = [
        ("Scene", f"{scene.title} ({scene.name})"),
        ("Format", registry.label(registry.choice_of(scene))),
        *((label, names.get(value, value)) for label, value in fmt.summary_rows(scene)),
        ("Cast", NameList([safe(names.get(s, s)) for s in scene.characters], f" ({left_out})" if left_out else "")),
        ("Isolation", ISOLATION_LINES.get(options.isolation or "", "not chosen")),
        ("Coordinator", ROLE_LINES.get(options.coordinator or "", "not chosen")),
        *calls_rows(scene, options),
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
        table.add_row(label, value if isinstance(value, NameList) else Text(safe(value)))
    return Group(table, Text("\nStarting writes notes.md (both choices first) before any actor is spawned.",
                             Style(bold=True)))


class NameList:
    """A cast's names, comma-separated and wrapped between names only: a crowd's `Sir Robert Hale` never
    ends a row as `Sir Robert` with `Hale` below it (two names to the eye, one of them perhaps a cast
    member's), and a name wider than the row is folded on its own."""

    def __init__(self, names: list[str], tail: str = "") -> None:
        self.pieces = [f"{name}," for name in names[:-1]] + [f"{names[-1]}{tail}" if names else tail.strip()]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max((cell_len(piece) for piece in self.pieces), default=0)
        whole = cell_len(" ".join(self.pieces))
        return Measurement(min(widest, options.max_width), min(whole, options.max_width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows: list[str] = []
        for piece in self.pieces:
            if rows and cell_len(f"{rows[-1]} {piece}") <= options.max_width:
                rows[-1] = f"{rows[-1]} {piece}"
            else:
                rows.append(piece)
        yield Text("\n".join(rows))

