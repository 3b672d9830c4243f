"""A take: a scene played again from the start of one of its beats, with another direction, in a new run folder.

`prepare_branch(parent, beat, change)` makes the take's folder with the parent's record up to the start
of that beat (`promptdesk.core.record.takes`: copied, never played again, so no call is paid twice), rebuilds the
session from it exactly as `resume` does (`promptdesk.core.casting.resume.rebuild_session`, then the format's
`restore`: every actor's inbox and isolation-b thread, the turn counts, nudges, silent streak, fired
world events, tokens and budget spent, who left the scene), and returns it ready to `run()`: its first event a `branch`
event naming the parent, the beat and the change, then the change itself (a world event, a note to one
actor or to all) delivered at that beat's safe point, as the operator's, then the beat.

The take goes on from the parent's time: its `t` continues the parent's, and on the offline
improviser its simulated clock starts where the parent's stood at that beat (to the tick, so every
later instant is the parent's own), with the run's seed unless the change gives another one. So on
the improviser a take with no change plays the parent's beats again exactly. A take never appends to the characters' own journals: a rehearsal is
not what happened to them (its `journals/` folder has the entries).

Only formats that can be resumed can be branched (a scene); a collaboration or a roundtable is
refused (`InvalidConfig`) with the reason.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from promptdesk.core.casting.build import check_budget
from promptdesk.core.casting.resume import rebuild_session
from promptdesk.core.casting.scene_file import Scene
from promptdesk.core.engine.outcome import CallHealth
from promptdesk.core.engine.session import Session
from promptdesk.core.errors import InvalidConfig
from promptdesk.core.formats.registry import get
from promptdesk.core.providers.spec import ProviderSpec
from promptdesk.core.record.folder_lock import FolderLock
from promptdesk.core.record.private import read_private, write_private
from promptdesk.core.record.run_folder import claim_fresh, claim_out
from promptdesk.core.record.takes import (BRANCH, TAKE_KEY, Change, Prefix, describe_change, split_at_beat, unpriced_models,
                                          write_prefix)

def _respec(data: dict[str, Any], change: Change, base_url: str | None = None) -> dict[str, Any]:
    """A provider spec of the parent with the change's provider, model and settings, and `base_url` for a
    remote provider (as `build.provider_spec` does, and as a run's `private.json` records it)."""
    spec = ProviderSpec.model_validate(data)
    update: dict[str, Any] = {}
    if change.provider:
        update["name"] = change.provider
        if change.provider != spec.name:
            update |= {"model": None, "base_url": None}
    if change.model and update.get("name", spec.name) != "offline":
        update["model"] = change.model
    update |= change.settings or {}
    if base_url and update.get("name", spec.name) != "offline":
        update["base_url"] = base_url
    return (spec.model_copy(update=update) if update else spec).model_dump(mode="json")


def take_record(record: dict[str, Any], parent: Path, beat: int, change: Change,
                base_url: str | None = None) -> dict[str, Any]:
    """The take's `private.json`: the parent's start record with the change's seed and providers (at
    `base_url`, so that a killed take resumes, and a take of it plays, where it was played), and whose
    take it is. The characters' journals are never written by a take."""
    taken = {**record, "write_character_journals": False,
             TAKE_KEY: {"parent": str(parent), "beat": beat, "change": change.record()}}
    if change.seed is not None:
        taken["seed"] = change.seed
    if change.provider or change.model or change.settings or base_url:
        taken["providers"] = {slug: _respec(spec, change, base_url) for slug, spec in record["providers"].items()}
        if record.get("judge"):
            taken["judge"] = _respec(record["judge"], change, base_url)
    return taken


def refuse_format(run_dir: Path, record: dict[str, Any]) -> None:
    """Only a format that can be resumed can be branched; say why another cannot."""
    scene = Scene.model_validate(record["scene"])
    if not get(scene.format).resumable():
        raise InvalidConfig(
            f"{run_dir} is a {scene.format} run: a take is rebuilt from the record as a resume is, and a "
            f"{scene.format}'s state between rounds (its own table, hand-offs and envelopes) is not rebuilt "
            "from the log; only scene runs can be branched")


def _claim(parent: Path, beat: int, out: Path | None) -> FolderLock:
    """`--out`, else a new folder beside the parent: `<parent>-take<beat>-<stamp>`."""
    return claim_out(Path(out)) if out else claim_fresh(parent.parent, f"{parent.name}-take{beat}")


def check_branch(parent: Path, beat: int, change: Change,
                 base_url: str | None = None) -> tuple[dict[str, Any], Prefix, dict[str, Any], Change]:
    """Everything that can refuse a take, before anything is made: the parent's start record, its
    record up to the beat, the take's start record and the change with its actor as a slug."""
    record = read_private(parent)
    refuse_format(parent, record)
    if beat < 0:
        raise InvalidConfig(f"--at-beat must be 0 or more, not {beat}")
    change = change.check(record["cast"])
    prefix = split_at_beat(parent, beat)
    taken = take_record(record, parent, beat, change, base_url)
    specs = _specs(taken)
    _refuse_unplayed(change, base_url, specs)
    if unpriced := check_budget(record.get("budget_usd"), specs):  # said before the take and in its summary, as a run's
        taken["start"] = {**(record.get("start") or {}), "unpriced_models": unpriced_models(prefix.events, unpriced)}
    return record, prefix, taken, change


def _specs(taken: dict[str, Any]) -> list[ProviderSpec]:
    """Every provider the take plays on: its actors' and its judge's."""
    return [ProviderSpec.model_validate(s) for s in [*taken["providers"].values(), *([taken["judge"]] if taken.get("judge") else [])]]


def _refuse_unplayed(change: Change, base_url: str | None, specs: list[ProviderSpec]) -> None:
    """`--model` or `--base-url` when every call of the take goes to the offline improviser, which takes
    neither: refused, naming the flag and what to add (as a new run's are)."""
    given = [f"{flag} {value}" for flag, value in (("--model", change.model), ("--base-url", base_url)) if value]
    if given and all(spec.name == "offline" for spec in specs):
        raise InvalidConfig(f"{' and '.join(given)}: every call of this take goes to the offline improviser, which "
                            "takes no model and no server; add --provider (anthropic, openai, openai-compatible, "
                            "claude-code), or drop the flag")


def prepare_branch(parent: Path, beat: int, change: Change = Change(), *, out: Path | None = None,
                   base_url: str | None = None, realtime: bool = False) -> Session:
    """The take of `parent` from the start of `beat` with `change`, its folder made and locked, ready
    to `run()`. Raises `NotARun` when `parent` is not a run, `InvalidConfig` (nothing made) when the
    beat was never begun, the format cannot be branched or the change does not fit."""
    parent = Path(parent).resolve()
    record, prefix, taken, change = check_branch(parent, beat, change, base_url)
    notes = (parent / "notes.md").read_text(encoding="utf-8", errors="replace") if (parent / "notes.md").exists() else ""
    names = {slug: str(member.get("name") or slug) for slug, member in record["cast"].items()}
    notes += f"\n- Take of {parent.name} from beat {beat}: {describe_change(change.record(), names)}.\n"
    claim = _claim(parent, beat, out)
    try:
        write_prefix(claim.folder, prefix, notes)
        write_private(claim.folder, taken)
        session = rebuild_session(claim.folder, base_url, realtime=realtime, clock_start=prefix.beat.t)
        session.format.restore(session, prefix.events, prefix.beat)
        if change.provider or change.model or change.settings or base_url:  # other calls: who left may play again
            session.health = CallHealth(list(session.actors))
        session.first_beat = session.state.beat = beat
        session.t_offset = prefix.beat.t
        session.seam_type = BRANCH
        session.seam = {"text": f"Take of {parent.name} from beat {beat}: {describe_change(change.record(), names)}",
                        "parent": str(parent), "beat": beat, "change": change.record(), "inherited": len(prefix.events),
                        "arrivals": session.clock.arrivals}
        if unpriced := check_budget(None, _specs(taken)):  # the take's own: metadata.json lists them with the parent's
            session.seam["unpriced_models"] = unpriced
        session.recorder.lock = claim
        session.notices += [f"NOTICE: {text}" for text in prefix.unreadable]
        session.recorder.reopen(prefix.events)
        if change.event:
            session.inject_event(change.event)
        if change.note:
            session.add_note(change.note, change.to)
    except BaseException:
        claim.release()
        shutil.rmtree(claim.folder, ignore_errors=True)
        raise
    return session
