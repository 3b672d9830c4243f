"""From a scene file and the operator's choices to a ready `Session` (nothing spawned yet).

This is where "must present, must record" is enforced for every entry point: no isolation or
coordinator choice, no session. The console's wizard and `--batch` both come through here.
"""

from __future__ import annotations

import math
import re
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from promptdesk.core.casting.reserved import check_reserved
from promptdesk.core.casting.choices import tradeoff_table
from promptdesk.core.casting.cards import card_notices, offered, read_cards
from promptdesk.core.casting.notes import model_name, notes_text
from promptdesk.core.casting import evaluators, places
from promptdesk.core.casting.pool import ProviderPool
from promptdesk.core.casting.scene_file import Scene, load_scene
from promptdesk.core.casting.start_record import private_record
from promptdesk.core.characters import journal_store
from promptdesk.core.characters.importers.cast import CastCard
from promptdesk.core.characters.loading import Character, check_display_names, search_dirs, with_fields
from promptdesk.core.clock import Clock, RealClock, VirtualClock
from promptdesk.core.engine.actors import make_actor
from promptdesk.core.engine.coordinator import JudgeCoordinator, RuleCoordinator
from promptdesk.core.engine.format import Format, Setup
from promptdesk.core.engine.pacing import resolve as resolve_pace
from promptdesk.core.engine.session import Session
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.formats.registry import get
from promptdesk.core.protocol.lines import one_line
from promptdesk.core.providers.pricing import is_priced
from promptdesk.core.providers.spec import OWN_SETTINGS, ProviderSpec, carried, idle_settings, turn_protocol
from promptdesk.core.record.folder_lock import FolderLock
from promptdesk.core.record.run_folder import claim_fresh, claim_out

ISOLATIONS = ("a", "b")
ROLES = ("A", "B", "C")


@dataclass
class RunOptions:
    """The operator's choices and overrides; `None` means "take it from the scene file"."""

    isolation: str | None = None
    coordinator: str | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    protocol: str | None = None
    """`--protocol tags|json|auto`: how every actor answers (None: each provider's `protocol:`)."""
    characters_dirs: list[Path] = field(default_factory=list)
    out: Path | None = None
    runs_root: Path = Path("runs")
    seed: int | None = None
    max_beats: int | None = None
    budget_usd: float | None = None
    clock: Clock | None = None
    cwd: Path | None = None
    write_character_journals: bool = True
    journals: str | Path | None = None
    """`--journals DIR|none`: where every journal lives (None: the scene's `journals:` or the default)."""
    on_escalate: str | None = None
    """Roundtable, headless: accept | continue | conclude; None asks the operator (console)."""
    headless: bool = False
    """True for `--batch`: an escalation with no `on_escalate` concludes (and says so)."""
    pace: float | None = None
    """Minimum seconds per beat (`--pace`); None: the scene's `pace:`, else `offline_pace`."""
    offline_pace: float = 0.0
    """The pace when neither sets one and every call goes to the offline improviser (the console: 1.5 s)."""
    realtime: bool = False
    """True for the console: a run on simulated time also waits its simulated latency out in wall time."""
    provider_settings: dict[str, Any] = field(default_factory=dict)
    """`--max-concurrency`, `--timeout`, `--journal-timeout`: spec fields set on every provider of the run."""
    suggested_events: str | None = None
    """`--suggested-events inject|ask|off`; None: the scene's `suggested_events:`, else `ask` in the
    console and `off` headless."""


def suggested_events(scene: Scene, options: RunOptions) -> tuple[str, list[str]]:
    """What becomes of the coordinator's suggested world events, and a notice when headless `ask`
    (no one to ask) falls back to `off`."""
    mode = options.suggested_events or scene.suggested_events or ("off" if options.headless else "ask")
    if mode == "ask" and options.headless:
        return "off", ["suggested_events: ask has no operator to ask in a headless run; suggestions are "
                       "only recorded (give --suggested-events inject to inject them)"]
    return mode, []


def clock_for(specs: list[ProviderSpec], *, realtime: bool = False, start: float = 0.0) -> Clock:
    """Simulated time when every call goes to the offline improviser (arrival order then follows
    simulated latency, the same at any load), else the wall clock (real models arrive when they do).
    `start`: where simulated time begins (a take goes on from its parent's time)."""
    if specs and all(spec.name == "offline" for spec in specs):
        return VirtualClock(start, realtime=realtime, timeouts=True)
    return RealClock()


def choices(scene: Scene, options: RunOptions) -> tuple[str, str]:
    """The two pre-experiment choices, from the flags or the scene file; never a silent default."""
    isolation = options.isolation or scene.isolation
    role = options.coordinator or scene.coordinator
    missing = []
    if isolation is None:
        missing.append("--isolation a|b (a: fresh stateless call per turn; b: one thread per actor)")
    if role is None:
        missing.append("--coordinator A|B|C (A: LLM judge with your notes; B: dedicated LLM judge; C: pure code)")
    if missing:
        raise InvalidConfig("both pre-experiment choices are required and are never defaulted. Give "
                            + " and ".join(missing) + ", or set `isolation:` and `coordinator:` in the scene file."
                            + "\n\nThe two choices and their trade-offs:\n\n" + tradeoff_table())
    if isolation not in ISOLATIONS:
        raise InvalidConfig(f"--isolation must be a or b, not {isolation!r}")
    if role not in ROLES:
        raise InvalidConfig(f"--coordinator must be A, B or C, not {role!r}")
    return isolation, role


def protocol_problem(provider: str, protocol: str | None) -> str | None:
    """Why every actor cannot answer in `protocol` on `provider` (the engine's own words, as `--protocol`
    would be refused), or None when it can."""
    try:
        turn_protocol(SimpleNamespace(name=provider, protocol=protocol))
    except ValueError as exc:
        return str(exc)
    return None


def own_replies(fmt: Format, specs: dict[str, ProviderSpec], options: RunOptions,
                notices: list[str]) -> tuple[dict[str, ProviderSpec], list[str]]:
    """A format whose actors keep their own replies and prompts (`Format.actor_protocol` False: a
    collaboration's envelopes, a roundtable's YAML) ignores `--protocol` and `protocol:`, saying so."""
    asked = sorted({spec.protocol for spec in specs.values() if spec.protocol != "tags"})
    if fmt.actor_protocol or not asked:
        return specs, notices
    given = f"--protocol {options.protocol}" if options.protocol else f"protocol: {', '.join(asked)}"
    notice = (f"{given} ignored: the protocol concerns scene actors; a {fmt.name} run keeps its own replies and "
              "prompts")
    return {slug: spec.model_copy(update={"protocol": "tags"}) for slug, spec in specs.items()}, [*notices, notice]


SENDS_AHEAD = ("anthropic", "openai", "openai-compatible")
"""The providers that can open a turn's request before it is asked (`promptdesk.core.providers.early`)."""


def unsent_ahead(fmt: Format, scene: Scene, isolation: str, specs: dict[str, ProviderSpec]) -> list[str]:
    """A notice for `send_ahead` (or `--send-ahead`) asked where it can do nothing: a provider that
    sends no request body, isolation (a) (each request is built anew), or turns that are not a
    scene's parallel beats. Nothing asked is ignored without a word."""
    asked = sorted({spec.name for spec in specs.values() if spec.send_ahead})
    if not asked:
        return []
    cannot = [name for name in asked if name not in SENDS_AHEAD]
    why = ([f"{', '.join(cannot)} sends no request body to open early"] if cannot else []) + \
        (["under isolation (a) each request is built anew each turn"] if isolation == "a" else []) + \
        ([f"only a scene's parallel beats send requests ahead, not a {fmt.name}'s {fmt.unit}"] if fmt.unit != "beats" else
         ["only parallel beats send requests ahead, not sequential turns"] if scene.turns == "sequential" else [])
    return [f"send_ahead does nothing here: {'; '.join(why)}"] if why else []


def idle_notices(specs: list[tuple[str, ProviderSpec]]) -> list[str]:
    """A notice for each setting given to a provider that does not read it (`idle_settings`: `effort`
    on openai, `latency_ms` on anthropic), naming who plays on that provider. Nothing given is
    ignored without a word."""
    idle: dict[tuple[str, str], list[str]] = {}
    for who, spec in specs:
        for key in idle_settings(spec):
            idle.setdefault((key, spec.name), []).append(who)
    readers = lambda key: " and ".join(OWN_SETTINGS[key]) + (" read" if len(OWN_SETTINGS[key]) > 1 else " reads")  # noqa: E731
    return [f"{key} does nothing here: only {readers(key)} it, and {', '.join(who)} play{'s' * (len(who) == 1)} "
            f"on {name}" for (key, name), who in idle.items()]


def provider_spec(scene: Scene, slug: str | None, options: RunOptions) -> ProviderSpec:
    """The provider for one actor (or the judge, slug None): flags win over the scene file."""
    spec = scene.provider_for(slug) if slug else (scene.judge or scene.provider)
    update: dict[str, Any] = {}
    if options.provider:
        update["name"] = options.provider
        if options.provider != spec.name:
            update["model"] = None
            spec = ProviderSpec.model_validate(carried(spec.model_dump(exclude_unset=True), options.provider))
    if options.model:
        update["model"] = options.model
    if options.base_url:
        update["base_url"] = options.base_url
    update |= options.provider_settings
    if options.protocol and slug:
        update["protocol"] = options.protocol
    return spec.model_copy(update=update) if update else spec


def served(spec: ProviderSpec, provider: Any) -> ProviderSpec:
    """`spec` as played: a server the provider took from the environment (`OPENAI_BASE_URL`,
    `ANTHROPIC_BASE_URL`) is recorded as if given, so `resume` and `branch` go where the run went."""
    url = getattr(provider, "base_url", None)
    return spec.model_copy(update={"base_url": url}) if spec.base_url is None and url else spec


def unplayed_flags(options: RunOptions, specs: dict[str, ProviderSpec], judge: ProviderSpec,
                   role: str) -> tuple[dict[str, ProviderSpec], ProviderSpec]:
    """The offline improviser takes no model and no server: `--model` or `--base-url` are taken off
    the specs that play on it, so that no record names a model that never answered, and refused when
    every call of the run goes to it (the flag would change nothing), naming the flag and what to add."""
    given = [f"{flag} {value}" for flag, value in (("--model", options.model), ("--base-url", options.base_url)) if value]
    if not given:
        return specs, judge
    if all(spec.name == "offline" for spec in [*specs.values(), *([judge] if role != "C" else [])]):
        raise InvalidConfig(f"{' and '.join(given)}: every call of this run goes to the offline improviser, which "
                            "takes no model and no server; add --provider (anthropic, openai, openai-compatible, "
                            "claude-code), or drop the flag")
    plain = lambda spec: spec.model_copy(update={"model": None, "base_url": None}) if spec.name == "offline" else spec  # noqa: E731
    return {slug: plain(spec) for slug, spec in specs.items()}, plain(judge)


def late_events(scene: Scene, fmt: Format, options: RunOptions, cast_size: int) -> list[str]:
    """A notice for each world event scheduled after the scene's last beat: only a stall brings it forward."""
    if fmt.unit != "beats":
        return []
    last = (options.max_beats or scene.limits.beats_for(cast_size)) - 1
    said = {id(e): one_line(e.text) for e in scene.events}   # a long event is cut at a word, and says so (`…`)
    said = {k: t if len(t) <= 80 else t[:80].rsplit(" ", 1)[0].rstrip(" ,;:") + "…" for k, t in said.items()}
    return [f"the world event at beat {e.at_beat} ({said[id(e)]!r}) comes after the scene's last beat, {last} "
            f"(max_beats {last + 1}): it happens only if a stall brings it forward" for e in scene.events if e.at_beat > last]


def run_dir_for(scene: Scene, options: RunOptions) -> FolderLock:
    """Create and lock the run folder: `--out` (new or empty), else a fresh
    `runs/<scene-name>-<YYYYmmdd-HHMMSS>` (suffixed if taken); see `promptdesk.core.record.run_folder`."""
    if options.out:
        return claim_out(Path(options.out))
    return claim_fresh(options.runs_root, scene.name)


def scene_number(scene: Scene, options: RunOptions, folder: Path) -> int | None:
    """The number a run's transcript gives its scene: the scene file's `number:`, else the run's
    sequence among this scene's runs in the runs folder (1 for its first; the folders
    `<scene-name>-<YYYYmmdd-HHMMSS>[-n]` there, this one included). A run written with `--out` (or in a
    sweep) keeps to its own folder and has no sequence: its title carries `number:` only."""
    if scene.number is not None:
        return scene.number
    if options.out:
        return None
    pattern = re.compile(re.escape(scene.name) + r"-\d{8}-\d{6}(-\d+)?")
    try:
        return sum(1 for d in folder.parent.iterdir() if d.is_dir() and pattern.fullmatch(d.name)) or None
    except OSError:
        return None


def check_budget(budget: float | None, specs: list[ProviderSpec]) -> list[str]:
    """The models with no known price (as `provider:model`); a budget must be a finite amount
    of zero or more, and is refused when any model's cost would be unknown."""
    unpriced = sorted({f"{s.name}:{model_name(s)}" for s in specs if not is_priced(s.name, s.model)})
    if budget is None:
        return unpriced
    if not math.isfinite(budget) or budget < 0:
        raise InvalidConfig(f"--budget-usd must be a finite amount of 0 or more, not {budget!r}")
    if unpriced:
        raise InvalidConfig(f"--budget-usd {budget} cannot be kept: no price is known for {', '.join(unpriced)} "
                            f"(see core/providers/pricing.py); run without a budget or choose a priced model.")
    return unpriced


def _release(claim: FolderLock) -> None:
    """Unlock and remove a run folder claimed for a session that could not be built (only while it is empty)."""
    claim.release()
    try:
        claim.folder.rmdir()
    except OSError:
        pass


def operator_context(scene: Scene, notes: str, role: str) -> str:
    """What role A's judge sees beyond the speech: notes.md and the scene's coordinator notes."""
    if role != "A":
        return ""
    return notes + (f"\nCoordinator notes: {scene.coordinator_notes}\n" if scene.coordinator_notes else "")


def load_scene_cast(scene: Scene, dirs: list[Path], cwd: Path,
                    cards: dict[str, CastCard] | None = None) -> list[Character]:
    """The cast in scene order: characters found in `dirs` as the format reads them, and cards cast
    directly (`cards` when already read)."""
    slugs = [s for s in scene.characters if s not in scene.cards]
    found = {c.slug: c for c in get(scene.format).load_cast(scene, slugs, dirs)}
    found |= {slug: card.character for slug, card in (read_cards(scene, cwd) if cards is None else cards).items()}
    return [found[slug] for slug in scene.characters]


def build_session(scene_or_path: Scene | Path, options: RunOptions) -> Session:
    """Validate everything, resolve the cast and providers, and return a session ready to run."""
    scene = scene_or_path if isinstance(scene_or_path, Scene) else load_scene(Path(scene_or_path))
    fmt = get(scene.format)
    isolation, role = choices(scene, options)
    cwd = options.cwd or Path.cwd()
    cards = read_cards(scene, cwd)
    cards_told = card_notices(scene, cards)   # of the scene as written: what its cards offer and it leaves unused
    scene = offered(scene, cards)
    cast = load_scene_cast(scene, search_dirs(options.characters_dirs, cwd, scene.folder), cwd, cards)
    store, explicit = journal_store.store_for(options.journals, scene.journals,
                                              None if places.is_example(scene.folder) else scene.folder, cwd)
    check_display_names(cast)
    check_reserved(c.slug for c in cast)
    cast = [with_fields(journal_store.place(c, store, explicit), scene.character_fields) for c in cast]
    seed = options.seed if options.seed is not None else (scene.seed if scene.seed is not None
                                                          else int.from_bytes(os.urandom(3), "big"))
    pool = ProviderPool(seed, RealClock())
    setup = Setup(options=options, pool=pool, role=role, cwd=cwd,
                  spec_for=lambda s, slug: provider_spec(s, slug, options))
    specs, notices = fmt.default_providers(scene, {c.slug: provider_spec(scene, c.slug, options) for c in cast},
                                           provider_flag=bool(options.provider))
    specs, notices = own_replies(fmt, specs, options, notices)
    suggestions, told = suggested_events(scene, options)
    notices = (cards_told + notices + told + late_events(scene, fmt, options, len(cast))
               + unsent_ahead(fmt, scene, isolation, specs))
    if options.max_beats is not None and fmt.unit != "beats":
        notices.append(f"--max-beats {options.max_beats} ignored: it caps a scene's beats, and a {fmt.name} is played "
                       f"in rounds; its round cap is {fmt.round_cap}")
    judge_spec = provider_spec(scene, None, options)
    specs, judge_spec = unplayed_flags(options, specs, judge_spec, role)
    evaluator_spec = evaluators.spec_for(scene, judge_spec)
    called = [*specs.values(), *([judge_spec] if role != "C" else []), *fmt.priced_specs(scene, setup),
              *([evaluator_spec] if evaluator_spec else [])]
    notices += idle_notices([*specs.items(), *([("the judge", judge_spec)] if role != "C" else [])])
    pool.clock = clock = options.clock or clock_for(called, realtime=options.realtime)
    names = [c.name for c in cast]
    actors = []
    for character in cast:
        actor = make_actor(isolation, character, fmt.briefing(character, scene, names), pool.get(specs[character.slug]),
                           window=scene.limits.window, thread_thinking=scene.thread_thinking)
        actor.turn_timeout_s = specs[character.slug].turn_timeout_s
        actor.journal_timeout_s = specs[character.slug].journal_turn_timeout_s
        actors.append(actor)
    unpriced = check_budget(options.budget_usd, called)
    notes = (notes_text(scene, isolation, role, specs, judge_spec, seed, cast, fmt) + evaluators.notes_lines(scene, evaluator_spec)
             + "".join(f"- {n}\n" for n in notices))
    coordinator = (RuleCoordinator() if role == "C" else
                   JudgeCoordinator(role, goal=scene.goal or "", operator_context=operator_context(scene, notes, role)))
    start = {"scene": scene.model_dump(include={"name", "title", "format", "turns", "setting", "goal"}),
             "cast": {c.slug: c.name for c in cast}, "isolation": isolation, "coordinator": role,
             "seed": seed, "providers": {s: f"{p.name}:{model_name(p)}" for s, p in specs.items()},
             "arrivals": clock.arrivals, "suggested_events": suggestions}
    if scene.file_name:
        start["scene"]["file"] = scene.file_name  # its name, never where it sits on this machine
    if unpriced:
        start["unpriced_models"] = unpriced
    claim = run_dir_for(scene, options)
    if (number := scene_number(scene, options, claim.folder)) is not None:
        start["scene"]["number"] = number
    try:
        session = Session(scene, actors, fmt=fmt, isolation=isolation, coordinator=coordinator, run_dir=claim.folder,
                          notes=notes, start_info=start, clock=clock, max_beats=options.max_beats,
                          budget_usd=options.budget_usd, characters={c.slug: c for c in cast},
                          write_character_journals=options.write_character_journals,
                          judge_provider=pool.get(judge_spec) if role != "C" else None,
                          pace_s=resolve_pace(options.pace, scene.pace, options.offline_pace,
                                              [*specs.values(), *([judge_spec] if role != "C" else [])]))
        session.recorder.lock = claim
        session.suggested_events = suggestions
        fmt.prepare(session, setup)
    except BaseException:
        _release(claim)
        raise
    start["max_beats"] = session.state.max_beats
    session.private_record = private_record(
        scene, isolation=isolation, role=role, seed=seed, max_beats=session.state.max_beats,
        budget_usd=options.budget_usd, specs={slug: served(spec, pool.get(spec)) for slug, spec in specs.items()},
        judge=served(judge_spec, pool.get(judge_spec)) if role != "C" else None, cast=cast,
        briefings={a.slug: a.briefing for a in actors}, operator_context=operator_context(scene, notes, role))
    session.journal_step = store is not None
    evaluators.attach(session, scene, evaluator_spec, pool)
    session.private_record.update(write_character_journals=options.write_character_journals, start=start,
                                  journal_step=session.journal_step)
    session.notices = [*notices, *session.notices]  # the format's own (`prepare`) after the setup's
    start["pace_s"] = session.pace.seconds
    start.update(fmt.start_facts(scene))
    return session
