"""The human-readable files of a run, rebuilt from its events alone.

`transcript.md` follows spec 000, `transcript.txt` and `metadata.json` follow spec 004. Nothing here
reads anything but the event list, so any run can be re-rendered from `events.jsonl`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from promptdesk.core.record.events import COORDINATOR, BaseEvent, CallEvent, CloseEvent, GenericEvent, JournalEvent, SpeakEvent
from promptdesk.core.protocol.lines import folded, indented, speech_line, world_event_line
from promptdesk.core.record.lines import PLAIN, FormatLines
from promptdesk.core.providers.pricing import cache_saving
from promptdesk.core.record.played import NOT_COMPLETED, beats, beats_played, close_event  # noqa: F401 - outputs' own names too
from promptdesk.core.record.takes import branch_fields, played_arrivals
from promptdesk.core.record.unpriced import unpriced_payers, unpriced_spend  # noqa: F401 - outputs' own names too


def start_info(events: list[BaseEvent]) -> dict[str, Any]:
    """The `start` event's payload: scene facts, cast names and the two choices (`well_formed`)."""
    for event in events:
        if event.type == "start":
            return well_formed(event.model_extra or {})
    return {}


_TEXT_FIELDS = ("isolation", "coordinator")
_SCENE_TEXT = ("name", "title", "format", "turns", "setting", "goal", "file")


def well_formed(info: dict[str, Any]) -> dict[str, Any]:
    """A start record as far as it makes sense (one edited by hand may not): `scene` and `cast` are
    mappings, a cast name that is not text reads as its slug, the choices and the scene's words are text,
    `max_beats` a whole number and `pace_s` seconds, none below zero; what is not of its kind is left out."""
    info = dict(info)
    scene = info.get("scene")
    scene = dict(scene) if isinstance(scene, dict) else {}
    info["scene"] = {k: v for k, v in scene.items() if k not in _SCENE_TEXT or isinstance(v, str)}
    cast = info.get("cast")
    info["cast"] = ({str(slug): name if isinstance(name, str) else str(slug) for slug, name in cast.items()}
                    if isinstance(cast, dict) else {})
    for key in _TEXT_FIELDS:
        if key in info and not isinstance(info[key], str):
            del info[key]
    beats = info.get("max_beats")
    if beats is not None and not (isinstance(beats, int) and not isinstance(beats, bool) and beats >= 0):
        del info["max_beats"]
    pace = info.get("pace_s")
    if pace is not None and not (isinstance(pace, (int, float)) and not isinstance(pace, bool) and pace >= 0):
        del info["pace_s"]
    return info


def cast_names(events: list[BaseEvent]) -> dict[str, str]:
    """Slug to display name, as recorded at start (falls back to the slug)."""
    return dict(start_info(events).get("cast", {}))


def succeeded(close: CloseEvent | None) -> bool:
    """`success` in `metadata.json`: a close of the scene's own (none, or one in `NOT_COMPLETED`, is not)."""
    return close is not None and close.reason not in NOT_COMPLETED


def scene_format(events: list[BaseEvent]) -> str:
    """The run's format, as recorded at start."""
    return start_info(events).get("scene", {}).get("format") or "scene"


def is_public(event: BaseEvent, lines: FormatLines = PLAIN) -> bool:
    """True for what reached the actors: non-silent speech, world events and notes, actor failures, the
    format's own lines; bookkeeping stays in `events.jsonl` only (the transcripts also drop notes)."""
    if isinstance(event, SpeakEvent):
        return event.action != "silent"
    if lines.is_public(event):
        return True
    if getattr(event, "internal", False):
        return False
    return event.type in ("event", "note") or (event.type == "system" and event.target is not None)


def transcribed(event: BaseEvent, lines: FormatLines = PLAIN) -> bool:
    """True for what the transcripts hold: the public record less the moderator notes (spec 004)."""
    return event.type != "note" and is_public(event, lines)


def note_counts(events: list[BaseEvent]) -> dict[str, int]:
    """Moderator notes that reached the actors: the coordinator's own and the director's (the operator's)."""
    notes = [e for e in events if e.type == "note"]
    return {"coordinator": sum(e.from_ == COORDINATOR for e in notes),
            "director": sum(e.from_ != COORDINATOR for e in notes)}


JUDGE_FALLBACK = "judge-fallback"
"""The `reason` of the `system` event a judge's fallback to role C's rules is recorded with."""


def judge_fallbacks(events: list[BaseEvent]) -> int:
    """How many times a judge's answer was unusable and role C's rules decided instead."""
    return sum(e.type == "system" and getattr(e, "reason", None) == JUDGE_FALLBACK for e in events)


def fallback_notice(count: int) -> str:
    """The notice of a run whose judge fell back to role C's rules (stderr, `notes.md`, post-scene notes)."""
    times = f"{count} time{'s' if count != 1 else ''}"
    return f"the coordinator's judge gave no usable answer {times}: role C's rules decided instead (see debug.log)"


def _note_line(event: BaseEvent, names: dict[str, str]) -> str:
    """`NOTE to Bob: …` (or `to everyone`), the note as it reached the actors."""
    return f"NOTE to {names.get(event.target, event.target) if event.target else 'everyone'}: {folded(event.text)}"


def transcript_lines(events: list[BaseEvent], own: FormatLines = PLAIN, *, notes: bool = False) -> list[str]:
    """Spec 004's lines: `Alice [TO: Bob, TONE: x] "…"`, `[EVENT: …]`, `[SYSTEM: …]`, and the format's
    own; with `notes`, also `[NOTE to Bob: …]` (views of the record that show notes, never a transcript)."""
    names = cast_names(events)
    lines = []
    for event in events:
        if not (is_public(event, own) if notes else transcribed(event, own)):
            continue
        if isinstance(event, SpeakEvent):
            lines.append(speech_line(names.get(event.from_, event.from_), event))
        elif own.is_public(event):
            lines.append(own.txt_line(event, names))
        elif event.type == "event":
            lines.append(world_event_line(event.text))
        elif event.type == "note":
            lines.append(f"[{_note_line(event, names)}]")
        else:
            lines.append(f"[SYSTEM: {folded(event.text)}]")
    return lines


def turn_counts(events: list[BaseEvent], own: FormatLines = PLAIN) -> Counter[str]:
    """Non-silent speeches (and the format's own turns) per actor."""
    return Counter(e.from_ for e in events if (isinstance(e, SpeakEvent) and e.action != "silent")
                   or e.type in own.turn_types)


def duration_s(events: list[BaseEvent]) -> float:
    """Seconds from the first to the last recorded event."""
    return (events[-1].t - events[0].t) if events else 0.0


def simulated(events: list[BaseEvent]) -> bool:
    """Whether the run kept simulated time (the improviser's virtual clock) rather than wall time."""
    return played_arrivals(events, start_info(events).get("arrivals")) == "simulated"


def duration_label(events: list[BaseEvent]) -> str:
    """The transcript's duration, saying which clock kept it: simulated time for a run on the
    improviser's virtual clock (0 when its scene simulates no latency), real time otherwise."""
    minutes = f"{duration_s(events) / 60:.1f} minutes"
    return f"{minutes} of simulated time (offline improviser)" if simulated(events) else f"{minutes} (real-time generation)"


def costs(events: list[BaseEvent], cut: Sequence[BaseEvent] = ()) -> dict[str, Any]:
    """Tokens and USD per run and per actor, summed over every recorded call whose usage is known; `unknownUsageCalls`
    counts the others (of them `cutOffInFlight`, cut by a stop or a timeout: `unknown_spend` says it in words). `cut`: the
    calls of beats a resume played again (`superseded.jsonl`): paid for, so counted too (`cutCalls` says how many)."""
    keys = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
    total = dict.fromkeys(keys, 0)
    usd, unknown = 0.0, 0
    per_actor: dict[str, dict[str, float]] = defaultdict(
        lambda: {**dict.fromkeys(keys, 0), "usd": 0.0, "calls": 0, "unknown_usage_calls": 0})
    for call in (e for e in [*cut, *events] if isinstance(e, CallEvent)):
        row = per_actor[call.target or call.from_]
        row["calls"] += 1
        if call.unknown:
            row["unknown_usage_calls"] += 1
            unknown += 1
            continue
        for key in keys:
            total[key] += getattr(call, key) or 0
            row[key] += getattr(call, key) or 0
        row["usd"] += call.cost_usd or 0.0
        usd += call.cost_usd or 0.0
    return {**total, "totalTokens": sum(total.values()), "estimatedUSD": round(usd, 6), "unknownUsageCalls": unknown,
            "cutOffInFlight": sum(isinstance(e, CallEvent) and e.unknown and not e.ok for e in [*cut, *events]), "cutCalls": sum(isinstance(e, CallEvent) for e in cut),
            "perActor": {k: {**v, "usd": round(v["usd"], 6)} for k, v in per_actor.items()}}


def unfinished_requests(events: list[BaseEvent]) -> int:
    """Requests sent for a beat a kill cut off (or a check made again), kept in `prompts.jsonl` and
    named by the seams of the resumes that followed (`promptdesk.core.record.seams`)."""
    return sum(len((e.model_extra or {}).get("unfinished_requests") or []) for e in events if e.type == "resume")


def unknown_spend(spend: dict[str, Any]) -> str:
    """"" when every call's usage is known, else " + unknown (N calls sent no usage, M calls cut off in flight)"."""
    n = spend.get("unknownUsageCalls") or 0
    parts = ((n - min(n, spend.get("cutOffInFlight") or 0), "sent no usage"), (min(n, spend.get("cutOffInFlight") or 0), "cut off in flight"))
    return " + unknown (" + ", ".join(f"{k} call{'s' if k != 1 else ''} {what}" for k, what in parts if k) + ")" if n else ""


SILENCED = "silenced"
"""The `reason` of the `system` line of a turn salvaged to silence (its reply never kept the protocol)."""


def is_failure(event: BaseEvent) -> bool:
    """A failed call: an actor unable to respond (a `system` line naming it), or a fallback line
    taken because a call failed (`failed`). A turn salvaged to silence is not one (`is_salvage`)."""
    if not isinstance(event, GenericEvent) or event.type != "system":
        return False
    if event.reason == "fallback":
        return bool((event.model_extra or {}).get("failed"))
    return bool(event.target) and event.reason != SILENCED


def is_salvage(event: BaseEvent) -> bool:
    """A reply that came back but did not keep the format's protocol, salvaged instead: a scene turn
    salvaged to silence, a roundtable fallback line for an unusable answer, a collaboration reply
    that is not a valid envelope (taken as a plain message)."""
    extra = event.model_extra or {}
    if isinstance(event, GenericEvent) and event.type == "system":
        return event.reason == SILENCED or (event.reason == "fallback" and not extra.get("failed"))
    return extra.get("envelope_valid") is False


def _who(event: BaseEvent) -> str | None:
    return event.target or (event.model_extra or {}).get("about") or event.from_


def errors(events: list[BaseEvent]) -> list[dict[str, Any]]:
    """Failed calls, as spec 003's `errors`: beat, character (or the facilitator), error."""
    return [{"beat": e.beat, "character": _who(e), "error": e.reason if e.reason != "fallback" else e.text}
            for e in events if is_failure(e)]


UNAVAILABLE = "unavailable"
"""The `reason` of the `system` line that says an actor left the scene for good (its provider failed)."""


def unavailable(events: list[BaseEvent]) -> list[dict[str, Any]]:
    """The actors who left the scene because their provider failed for good: beat, character, error."""
    found = [e for e in events if e.type == "system" and getattr(e, "reason", None) == UNAVAILABLE]
    return [{"beat": e.beat, "character": (e.model_extra or {}).get("about"), "error": (e.model_extra or {}).get("error")}
            for e in found]


def whose(event: BaseEvent) -> str | None:
    """Whose turn an event is about: the actor a `system` or `correct` line names (its `target`, else
    the `about` of a format's fallback line), else its author (a salvaged turn is its own)."""
    return _who(event) if event.type in ("system", "correct") else event.from_


def salvaged(events: list[BaseEvent]) -> list[dict[str, Any]]:
    """Replies salvaged because they did not keep the protocol (`is_salvage`): beat, character, problem."""
    return [{"beat": e.beat, "character": whose(e), "problem": (e.model_extra or {}).get("problem") or e.text}
            for e in events if is_salvage(e)]


def metadata(events: list[BaseEvent], own: FormatLines = PLAIN, cut: Sequence[BaseEvent] = ()) -> dict[str, Any]:
    """Spec 004's SceneResult metadata, extended with choices, costs (`cut`: see `costs`) and per-actor counts."""
    info, close = start_info(events), close_event(events)
    scene = info.get("scene", {})
    per_actor: dict[str, dict[str, int]] = {slug: Counter() for slug in cast_names(events)}
    for event in events:
        row = per_actor.get(event.from_) if event.from_ in per_actor else per_actor.get(whose(event) or "")
        if row is None:
            continue
        if isinstance(event, SpeakEvent):
            row["silent" if event.action == "silent" else "turns"] += 1
            row["interrupts"] += event.action == "interrupt"
        elif event.type in own.turn_types:
            row["turns"] += 1
        elif event.type == "correct":
            row["corrections"] += 1
        elif is_failure(event):
            row["failures"] += 1
        if is_salvage(event):
            row["salvaged"] += 1
    return {
        "name": scene.get("name"), "title": scene.get("title"), "format": scene.get("format"),
        "turns": scene.get("turns"), "isolation": info.get("isolation"),
        "coordinator": info.get("coordinator"), "duration": round(duration_s(events) * 1000),
        "totalBeats": beats_played(events), "characterCount": len(per_actor),
        "success": succeeded(close), "goalAchieved": close.goal_achieved if close else None,
        "goalReason": close.goal_reason if close else None,
        "reason": close.reason if close else "incomplete",
        "errors": errors(events), "unavailable": unavailable(events), "salvaged": salvaged(events), "costs": costs(events, cut),
        "unfinishedRequests": unfinished_requests(events), "moderatorNotes": note_counts(events),
        "judgeFallbacks": judge_fallbacks(events),
        "unpricedModels": info.get("unpriced_models", []),
        "actors": {slug: {k: int(v) for k, v in row.items()} for slug, row in per_actor.items()},
        **own.metadata(events),
        "cache_saving": cache_saving(e for e in events if isinstance(e, CallEvent)),
        **branch_fields(events),
    }


def transcript_md(events: list[BaseEvent], when: datetime, own: FormatLines = PLAIN, cut: Sequence[BaseEvent] = ()) -> str:
    """Spec 000's transcript: header, `**NAME:** speech`, end marker, post-scene notes."""
    info, names, close = start_info(events), cast_names(events), close_event(events)
    scene = info.get("scene", {})
    title = folded(scene.get('title') or scene.get('name', 'Scene'))
    number = scene.get("number")
    out = [f"# Scene {number:03d} — {title}" if isinstance(number, int) else f"# {title}", "",
           f"**Date:** {when:%Y-%m-%d}",
           f"**Duration:** {duration_label(events)}",
           f"**Participants:** {', '.join(names.values())}",
           f"**Setting:** {folded(scene.get('setting') or '—')}", "", "---", ""]
    for event in events:
        if not transcribed(event, own):
            continue
        if isinstance(event, SpeakEvent):
            out += [f"**{names.get(event.from_, event.from_).upper()}:** {indented(event.raw or event.text)}", ""]
        elif own.is_public(event):
            out += [own.md_line(event, names), ""]
        else:
            out += [f"*{world_event_line(event.text) if event.type == 'event' else f'[SYSTEM: {folded(event.text)}]'}*", ""]
    counts = turn_counts(events, own)
    per = ", ".join(f"{names[s]}: {counts.get(s, 0)}" for s in names)
    spend, notes = costs(events, cut), note_counts(events)
    out += ["*[end of scene]*" if close else "*[scene interrupted]*", "", "---", "", "## Post-scene notes",
            f"- Close reason: {close.reason if close else f'incomplete ({CUT_OFF})'}",
            f"- Goal: {goal_label(close)}" + (f" — {close.goal_reason}" if close and close.goal_reason else ""),
            f"- Turn count: {sum(counts.values())} ({per})",
            f"- Coordinator's correction prompts issued: {sum(e.type == 'correct' for e in events)}",
            f"- Moderator notes (hidden from the transcripts): coordinator notes sent: {notes['coordinator']}, "
            f"director's notes: {notes['director']}",
            *([f"- Judge fallback: {fallback_notice(fallbacks)}"] if (fallbacks := judge_fallbacks(events)) else []),
            *([f"- Calls cut off in flight (their replies are not kept): {cut_off}"] if (cut_off := cut_off_calls(events, names)) else []),
            f"- Silent responses: {sum(isinstance(e, SpeakEvent) and e.action == 'silent' for e in events)}",
            f"- Tokens: {spend['totalTokens']:,}{unknown_spend(spend)}; estimated cost ${spend['estimatedUSD']:.4f} USD"
            f"{unknown_spend(spend)}{unpriced_spend(events)}", ""]
    return "\n".join(out)


def cut_off_calls(events: list[BaseEvent], names: dict[str, str]) -> str:
    """Whose calls a stop or a time limit cut off in flight, by beat (`Bob (beat 3), Charlie (beat 3)`):
    they were sent and may be billed, and what they had streamed is not part of the record."""
    cut = [e for e in events if isinstance(e, CallEvent) and e.unknown and not e.ok]
    return ", ".join(dict.fromkeys(f"{folded(names.get(e.target, e.target or '?'))} (beat {e.beat})" for e in cut))


CUT_OFF = "never closed: the record was cut off before the scene's close"
"""What the transcripts say of a run whose log has no close (killed; `promptdesk resume` plays it on)."""


def goal_label(close: CloseEvent | None) -> str:
    """The goal verdict for `[SCENE END - Goal: …]`: Achieved, Not achieved or Unknown, with the close."""
    verdict = {True: "Achieved", False: "Not achieved"}.get(close.goal_achieved, "Unknown") if close else "Unknown"
    return f"{verdict} (closed: {close.reason})" if close else f"{verdict} ({CUT_OFF})"


TIMED_OUT = "max_beats_exceeded"
"""The close reason of a scene that reached `max_beats` (spec 004's timeout)."""


def scene_end(close: CloseEvent | None) -> str:
    """`transcript.txt`'s last line: spec 004's `[SCENE END - Maximum length reached]` for a timeout,
    else `[SCENE END - Goal: …]` with the verdict and the close reason; never `SCENE END` without a close."""
    if close is not None and close.reason == TIMED_OUT:
        return "[SCENE END - Maximum length reached]"
    return f"[SCENE END - Goal: {goal_label(close)}]" if close else f"[SCENE INTERRUPTED - {CUT_OFF}]"


def transcript_txt(events: list[BaseEvent], when: datetime, own: FormatLines = PLAIN, cut: Sequence[BaseEvent] = ()) -> str:
    """Spec 004's transcript: header, bracket lines, world events, scene end, statistics."""
    info, names, close = start_info(events), cast_names(events), close_event(events)
    scene, spend = info.get("scene", {}), costs(events, cut)
    out = [f"SCENE: {folded(scene.get('title') or scene.get('name', ''))}",
           f"CHARACTERS: {', '.join(names.values())}", f"GOAL: {folded(scene.get('goal') or '—')}",
           f"GENERATED: {when:%Y-%m-%d %H:%M:%S}", "", "---", "", "[SCENE START]"]
    if scene.get("setting"):
        out.append(f"[Setting: {folded(scene['setting'])}]")
    out.append("")
    for line in transcript_lines(events, own):
        out += [line, ""]
    out += [scene_end(close), "", "---", "", "STATISTICS:",
            f"- Duration: {beats_played(events)} beats", f"- Processing time: {duration_s(events):.1f}s" + (" of simulated time" if simulated(events) else ""),
            f"- Total tokens: ~{spend['totalTokens']:,}{unknown_spend(spend)}",
            f"- Estimated cost: ${spend['estimatedUSD']:.2f} USD{unknown_spend(spend)}{unpriced_spend(events)}", ""]
    return "\n".join(out)


def journals(events: list[BaseEvent]) -> dict[str, str]:
    """This run's journal entries per actor, as written to `journals/<slug>.md`."""
    names = cast_names(events)
    return {e.from_: f"# {names.get(e.from_, e.from_)}: journal\n\n{e.text}\n"
            for e in events if isinstance(e, JournalEvent)}
