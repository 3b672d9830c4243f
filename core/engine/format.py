"""The Format interface: what a format of play supplies to the one engine.

A format (the scene, the collaboration, the roundtable) is one package in `promptdesk.core.formats`, looked up
by name in `promptdesk.core.formats.registry`. The engine, the record and the casting never test which format
they run: they ask the format. A format subclasses `Format` and overrides only how it differs, as a
team type does on autogen's one group-chat manager. What the base class gives is what a format with
no opinion gets: the scene's cast loading, no scene-file section, no journals, no extra providers.

This module may import the engine's floor (its own package, the record, characters, providers); it
never imports `promptdesk.core.formats`, `promptdesk.core.casting` or `promptdesk.core.cli`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from promptdesk.core.characters.loading import Character, load_cast
from promptdesk.core.record.lines import PLAIN, FormatLines
from promptdesk.core.record.outputs import beats_played

if TYPE_CHECKING:
    from promptdesk.core.engine.coordinator import Decision
    from promptdesk.core.engine.scene import Scene
    from promptdesk.core.engine.result import SessionResult
    from promptdesk.core.engine.stage import Stage
    from promptdesk.core.providers.base import Provider
    from promptdesk.core.providers.spec import ProviderSpec

Control = Callable[..., None]
"""A format's own control: called as `control(session, **arguments)` from `Stage.direct`."""
Player = Callable[[Any, int, float], str]
"""An offline improviser's part: `(request, seed, malformed_rate) -> answer`."""


@dataclass
class Setup:
    """What casting hands a format's setup hooks: the operator's options, the run's providers, the
    coordinator role, the working folder, and how flags override a scene's provider."""

    options: Any
    """The run options (`on_escalate`, `headless`, ...)."""
    pool: Any
    """The run's providers: `pool.get(spec)` gives the one instance for a spec."""
    role: str
    cwd: Path
    spec_for: Callable[[Scene, str | None], ProviderSpec]
    """`spec_for(scene, slug)`: an actor's provider spec (slug None: the judge's), flags applied."""


@dataclass
class SceneReader:
    """How a format's command-line hook reads a scene file, or validates one it builds (`promptdesk.core.casting.scene_file`)."""

    load: Callable[[Path], Scene]
    from_dict: Callable[[dict, str], Scene]


class Format:
    """One format of play on the engine. Class attributes describe it; methods are its hooks."""

    name: ClassVar[str] = ""
    """The `format:` value of a scene file, and the key of the registry."""
    title: ClassVar[str] = ""
    """How a person names it (the console's wizard)."""
    section: ClassVar[type[BaseModel] | None] = None
    """The model of the format's own scene-file section (the key is `name`), or None for none."""
    unit: ClassVar[str] = "beats"
    """What the batch summary counts: beats, or rounds."""
    escalates: ClassVar[bool] = False
    """True when the format escalates to the operator (a roundtable): `--on-escalate` applies."""
    round_cap: ClassVar[str] = ""
    """For a format counted in rounds, where its round cap is set (`--max-beats` is refused, naming it)."""
    keeps_journals: ClassVar[bool] = False
    """True when the actors write journal entries after the close (spec 000's scenes)."""
    calls_judge: ClassVar[bool] = True
    """False when the coordinator roles A and B call no judge in the format (a collaboration's router
    acts on each envelope), so `notes.md` names no judge for them."""
    judges_goal: ClassVar[bool] = False
    """True when the coordinator gives its goal verdict at the close (the others decide their own)."""
    actor_protocol: ClassVar[bool] = False
    """True when the format's actors answer in the scene actor protocol, so that `--protocol` and
    `protocol:` (tags or JSON) apply; False: the format keeps its own replies (envelopes, YAML) and
    prompts, and the setting is ignored with a notice."""
    drops_unavailable_actors: ClassVar[bool] = False
    """True when the format plays on without an actor whose provider failed for good (its turns
    skipped; `promptdesk.core.engine.outcome`); False: such a failure stops the run."""
    lines: ClassVar[FormatLines] = PLAIN
    """How the format's own events read in the record and the batch output."""
    needs: ClassVar[tuple[str, ...]] = ()
    """Fields a file of the format must set beyond `name` and `characters` (its `check_scene` refuses
    it without them); `needs_said` says it for the scene file reference."""
    needs_said: ClassVar[str] = ""
    """How the reference says what the format needs, where one of several fields will do."""
    run_files: ClassVar[Mapping[str, str]] = {}
    """Files the format writes into a run folder beside the common ones, by name: what each holds
    (the run folder reference lists them)."""
    players: ClassVar[Mapping[str, Player]] = {}
    """The offline improviser's parts for the format's request purposes."""
    controls: ClassVar[Mapping[str, Control]] = {}
    """Controls only this format has (the roundtable's escalation answer), by name."""

    # -- the scene file and the cast (casting) ------------------------------------------------

    def check_scene(self, scene: Scene) -> None:
        """Cross-field rules of the format's section; raise pydantic's `PydanticCustomError` (with a
        `key` in its context) to name the field. Called when a scene file is validated."""

    def min_cast(self) -> int:
        """The smallest cast the format can play."""
        return 1

    max_cast_reason: ClassVar[str] = ""
    """Why the format plays fewer than `promptdesk.core.engine.scene.MAX_CAST` characters (named in the error)."""

    def max_cast(self) -> int:
        """The largest cast the format can play (at most `promptdesk.core.engine.scene.MAX_CAST`, which applies anyway)."""
        return 1_000_000

    def load_cast(self, scene: Scene, slugs: Sequence[str], dirs: Sequence[Path]) -> list[Character]:
        """The characters of `slugs`, from the character folders."""
        return load_cast(slugs, dirs)

    def briefing(self, character: Character, scene: Scene, names: Sequence[str]) -> str:
        """An actor's system prompt (its stable, cached prefix under isolation b)."""
        raise NotImplementedError(f"format {self.name} gives no briefing")

    def brief_text(self, briefing: str) -> str:
        """What the `brief` event says an actor with this `briefing` was sent (spec 000's `brief`)."""
        return "Sent the actor's briefing"

    def default_providers(self, scene: Scene, specs: dict[str, ProviderSpec], *,
                          provider_flag: bool) -> tuple[dict[str, ProviderSpec], list[str]]:
        """Each actor's provider after the format's own defaults, and notices for the operator."""
        return dict(specs), []

    def priced_specs(self, scene: Scene, setup: Setup) -> list[ProviderSpec]:
        """Providers the format calls beside the actors' and the judge's (a budget must price them)."""
        return []

    def prepare(self, session: Stage, setup: Setup) -> None:
        """Last setup of a built session (its providers, `notes.md` lines, start facts). May raise
        `InvalidConfig`; nothing is spawned yet."""

    def start_facts(self, scene: Scene) -> dict[str, Any]:
        """Facts of the format added to the `start` event."""
        return {}

    def notes_lines(self, scene: Scene, isolation: str) -> list[str]:
        """Lines of `notes.md` about how the format runs (e.g. the context window)."""
        return []

    # -- the command line ----------------------------------------------------------------------

    def file_models(self) -> dict[str, type[BaseModel]]:
        """The files of the format's own a person writes, by kind, with the model that checks them
        (`promptdesk schema KIND` prints its JSON Schema)."""
        return {}

    def search_places(self, scene_folder: Path | None, cwd: Path, scene: Any = None) -> dict[str, list[Path]]:
        """The folders the format searches for its own files (kind -> folders, in order), as
        `promptdesk paths` prints them; `scene_folder` is the scene file's folder and `scene` the scene
        (whose own settings may name more folders) when one is given."""
        return {}

    def scene_from_flags(self, ns: argparse.Namespace, reader: SceneReader) -> Any:
        """The scene `--batch` runs when the format's flags make or change it, else None."""
        return None

    # -- playing -------------------------------------------------------------------------------

    async def play(self, session: Stage) -> Decision:
        """The turn policy: play until a close decision."""
        raise NotImplementedError(f"format {self.name} cannot be played")

    def providers(self, session: Stage) -> list[Provider]:
        """Providers the format holds beside the actors' and the judge's (prepared and closed with them)."""
        return []

    def played(self, session: Stage, result: SessionResult) -> int:
        """How many `unit`s the run played, for the batch summary (as `metadata.json` counts them: none for a
        run stopped before its first beat)."""
        return beats_played(session.recorder.events) if session.recorder.events else result.beats

    def outcome(self, session: Stage, result: SessionResult) -> str:
        """How the batch summary says the run closed: the close reason and the goal's verdict."""
        goal = {True: "goal achieved", False: "goal not achieved"}.get(result.goal_achieved, "goal unknown")
        return f"{result.close_reason} ({goal})"

    def resumable(self) -> bool:
        """True when a killed run of this format can be resumed from its log."""
        return False

    def restore(self, session: Stage, kept: list[Any], cut_beat: Any, finished: Any = None) -> None:
        """Replay a killed run's kept events into a fresh session (only when `resumable`): `cut_beat` is
        the `beat` event of the beat played again, or `finished` the `beat_end` of the last beat when
        it had finished."""
        raise NotImplementedError(f"a {self.name} run cannot be resumed")
