"""After every beat: explicit close, budget, caps, stall and the coordinator's judgment.

The mechanical rules (caps, `max_beats`, stall, budget) apply whatever the coordinator role;
judgment calls (is this a natural close?) are the coordinator's. A natural close is never taken
at beat 0 nor before every actor has spoken `limits.min_turns_per_character` times. At close the
coordinator's goal verdict is added (`with_verdict`), kept apart from the close reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from promptdesk.core.engine.briefing import SOFT_CAP_NUDGE, STALL_NOTE
from promptdesk.core.engine.coordinator import Decision, SceneView, marker_verdict
from promptdesk.core.engine.record_tally import RecordTally
from promptdesk.core.engine.suggestions import why_withheld
from promptdesk.core.engine.winding import wind_down
from promptdesk.core.record.events import COORDINATOR, SpeakEvent
from promptdesk.core.record.outputs import JUDGE_FALLBACK
from promptdesk.core.protocol.lines import speech_line
from promptdesk.core.protocol.sanitize import mend
from promptdesk.core.providers.pricing import dollars

if TYPE_CHECKING:
    from promptdesk.core.engine.stage import Stage

NUDGE_GRACE_TURNS = 3
"""Turns a nudged actor gets to close the scene before the soft cap closes it."""


NO_VERDICT_CALL = ("stop", "error", "budget", "provider-error", "record-error")
"""Close reasons after which no judge is asked about the goal (the markers still are): the operator
stopped, the engine failed, the budget is spent, or the run folder could not be written (a judge's
request that cannot be recorded is never sent)."""


def close(reason: str, text: str) -> Decision:
    return Decision(decision="close", reason=reason, text=text)


async def after_beat(session: Stage, new_speech: list[SpeakEvent]) -> Decision | None:
    """The close decision for this beat, or None to play on."""
    state = session.state
    spoken = [s for s in new_speech if s.action != "silent"]
    state.silent_streak = 0 if spoken else state.silent_streak + 1
    for speech in new_speech:
        if speech.closes_scene:
            return close("explicit", f"{state.cast[speech.from_]} ended the scene")
    if session.budget_usd is not None and state.cost_usd >= session.budget_usd:
        return close("budget", f"Budget of {dollars(session.budget_usd)} reached (${state.cost_usd:.4f})")
    decision = caps(session) or stall(session)
    if decision:
        return decision
    decision = await judge(session, new_speech)
    if decision:
        return decision
    if state.beat + 1 >= state.max_beats:
        session.recorder.log("warning", f"max beats ({state.max_beats}) reached without a natural close")
        return close("max_beats_exceeded", f"Maximum of {state.max_beats} beats reached")
    return None


def caps(session: Stage) -> Decision | None:
    """Hard cap closes; the soft cap nudges ONE actor once (timing only), then closes after a grace."""
    state, limits = session.state, session.scene.limits
    for slug, turns in state.turns.items():
        if turns >= limits.hard_cap_per_character:
            return close("hard-cap", f"{state.cast[slug]} reached the hard cap of {turns} turns")
    for slug, turns in state.turns.items():
        if slug in session.nudged and turns >= session.nudged[slug] + NUDGE_GRACE_TURNS:
            return close("soft-cap", f"{state.cast[slug]} was nudged at the soft cap and the scene went on")
    if not session.nudged:
        due = [slug for slug, turns in state.turns.items() if turns >= limits.soft_cap_per_character]
        if due:
            nudge(session, max(due, key=lambda slug: state.turns[slug]))
    return None


def nudge(session: Stage, slug: str, by_judge: bool = False) -> None:
    """Tell one actor the end is approaching: the only content the coordinator ever adds. The soft
    cap's nudge is followed by a close after a grace (`caps`); a judge's (`judge-nudge`, once per
    actor) is only the note: the scene still ends as the judge, the rules or the caps decide."""
    if by_judge:
        session.winding.judge_nudged.add(slug)
    else:
        session.nudged[slug] = session.state.turns[slug]
    session.director_note(SOFT_CAP_NUDGE, slug, source=COORDINATOR, reason="judge-nudge" if by_judge else "soft-cap")


def stall(session: Stage) -> Decision | None:
    """After `stall_beats` silent beats: a moderator note and any scheduled event; twice that: close."""
    state, limits = session.state, session.scene.limits
    if state.silent_streak >= 2 * limits.stall_beats:
        return close("stall", f"No one spoke for {state.silent_streak} beats")
    if state.silent_streak == limits.stall_beats:
        session.director_note(STALL_NOTE, None, source=COORDINATOR, reason="stall")
        due = next((i for i, e in enumerate(session.scene.events) if i not in session.fired_events), None)
        if due is not None:
            session.fired_events.add(due)
            session.world_event(session.scene.events[due].text, source=COORDINATOR)
    return None


def tally(session: Stage) -> RecordTally:
    """The stage's running tally of its record, brought up to date."""
    return session.tally.update(session.recorder.events, session.state.cast)


def spoken_words(session: Stage) -> list[str]:
    """The words of every non-silent speech so far."""
    return list(tally(session).words)


def _speakers(session: Stage) -> list[str]:
    """Who said each of `spoken_words`, by display name."""
    return list(tally(session).speakers)


RECENT_LINES = 40
"""The public lines a judge's per-beat decision is shown: the last 40, or two an actor in a larger cast, so
a crowd's latest beat (a line an actor, and the events and notes among them) reaches the judge whole: at
fifty actors it saw the last 40 lines of a beat of 50 while asked whether every character had spoken."""


def scene_view(session: Stage, new_speech: list[SpeakEvent], speeches: list[str] | None = None) -> SceneView:
    """What the coordinator may look at: public speech and counters, nothing private."""
    state = session.state
    if speeches is None and session.scene.goal_markers:
        speeches = spoken_words(session)
    speakers = _speakers(session) if session.scene.goal_markers else []
    return SceneView(beat=state.beat, max_beats=state.max_beats, goal=session.scene.goal or "",
                     new_speech=new_speech, recent_lines=session.public_lines[-max(RECENT_LINES, 2 * len(state.cast)):],
                     silent_streak=state.silent_streak, goal_markers=list(session.scene.goal_markers),
                     speeches=speeches or [], speakers=speakers,
                     cast=[state.cast[s] for s in session.health.playing(list(state.cast))],
                     names=list(state.cast.values()), display=dict(state.cast),
                     since_close_note=session.winding.since_close_note(session.public_lines),
                     suggested=suggested_so_far(session))


def suggested_so_far(session: Stage) -> list[str]:
    """The world events the coordinator's judge suggested so far and that were not withheld (a
    withheld one is never shown again, to the judge either), each once."""
    return tally(session).suggested


def close_allowed(session: Stage) -> str | None:
    """Why a natural close may not be taken yet (beat 0, too few exchanges), or None. An actor out of the
    scene (unavailable), or whose latest line took leave, is not waited for: a scene everyone is leaving
    (a fire alarm, a last goodbye) is not held open for turns no one will take."""
    state, least = session.state, session.scene.limits.min_turns_per_character
    if state.beat == 0:
        return "never at beat 0"
    left = tally(session).left
    quiet = [state.cast[s] for s in session.health.playing(list(state.cast))
             if state.turns.get(s, 0) < least and s not in left]
    if quiet:
        return f"{', '.join(quiet)} spoke fewer than {least} times"
    return None


def _warn(session: Stage) -> Callable[[str], None]:
    """What a coordinator calls when its judge fell back to role C's rules: `debug.log`, and a visible
    `system` event (no target: it is no actor's failure) counted in the session's state."""
    def fell_back(message: str) -> None:
        session.recorder.log("warning", message)
        session.state.judge_fallbacks += 1
        session.say("system", f"The judge fell back to role C's rules: {message}", reason=JUDGE_FALLBACK)
    return fell_back


async def judge(session: Stage, new_speech: list[SpeakEvent]) -> Decision | None:
    """Ask the coordinator (rules or an LLM judge) and act on its decision. Whatever words a judge
    gives as its reason, a coordinator's close is a `natural` close (its words stay in the decision)."""
    state = session.state
    view = scene_view(session, new_speech)
    decision = await session.coordinator.decide(view, session.ask_judge, _warn(session))
    allowed = close_allowed(session)
    if decision.decision == "close" and allowed:
        session.recorder.log("info", f"natural close not taken at beat {state.beat}: {allowed}")
        return wind_down(session, view, decision, new_speech, allowed)
    suggested = (decision.text or "").strip() if decision.decision == "suggest_event" else ""
    withheld = why_withheld(session, mend(suggested)) if suggested else None
    if suggested and not withheld and session.suggested_events == "ask":
        session.suggest(suggested)  # held before the decision event, so that its watchers see it pending
    nudged = cast_member(session, decision.actor) if decision.decision == "nudge" else None
    if decision.decision == "nudge" and nudged is None:
        session.recorder.log("warning", f"the judge asked for a nudge for {str(decision.actor)[:80]!r}, who is not in "
                             f"the cast ({', '.join(state.cast.values())}): no one is nudged")
    if decision.decision != "continue":
        session.say("decision", decision.text or decision.decision, reason=decision.reason,
                    target=nudged or decision.actor, decision=decision.decision,
                    **({"withheld": withheld} if withheld else {}))
    if decision.decision == "close":
        return close("natural", decision.text or decision.reason or "The coordinator closed the scene")
    if nudged is not None and nudged not in session.nudged and nudged not in session.winding.judge_nudged:
        nudge(session, nudged, by_judge=True)
    if suggested and (withheld or session.suggested_events == "inject"):
        session.suggest(suggested)  # injected, or said to be withheld, after the decision that suggested it
    return wind_down(session, view, decision, new_speech, allowed)


def cast_member(session: Stage, named: str | None) -> str | None:
    """The slug of the cast member a judge names: by slug or by name (the judge is shown the cast by
    name), in any case and spacing; None when it names no one in the cast."""
    wanted = " ".join((named or "").split()).casefold()
    return next((slug for slug, name in session.state.cast.items() if wanted in (slug.casefold(), name.casefold())),
                None) if wanted else None


def public_line(session: Stage, speech: SpeakEvent) -> str:
    """The line a speech adds to the public record (what judges and transcripts see)."""
    return speech_line(session.state.cast[speech.from_], speech)


async def with_verdict(session: Stage, decision: Decision) -> Decision:
    """The close decision with the coordinator's goal verdict (when the format gives one; others keep theirs)."""
    if not session.format.judges_goal:
        return decision
    view = scene_view(session, [], spoken_words(session))
    view.recent_lines = whole_scene(session.public_lines)  # the verdict judges the whole scene, not its last lines
    if decision.reason in NO_VERDICT_CALL:
        verdict = marker_verdict(view)
    else:
        verdict = await session.coordinator.verdict(view, session.ask_judge, _warn(session))
    return decision.model_copy(update={"goal_achieved": verdict.achieved, "goal_reason": verdict.reason})


VERDICT_CHARS = 120_000
"""The most of a scene's public lines, in characters, the close verdict is sent (about 30,000 tokens):
a request no judge's context could hold would only fail."""


def whole_scene(lines: list[str], budget: int = VERDICT_CHARS) -> list[str]:
    """Every public line of the scene for the goal verdict, or, past `budget` characters, its first
    lines (a third of it: where acts done early stand) and its last (the rest: where an act was taken
    back, or done at last), with one line saying how many between were left out."""
    if sum(len(line) + 1 for line in lines) <= budget:
        return list(lines)
    head: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > budget // 3:
            break
        head.append(line)
        size += len(line) + 1
    tail: list[str] = []
    size = 0
    for line in reversed(lines[len(head):]):
        if size + len(line) + 1 > budget - budget // 3:
            break
        tail.append(line)
        size += len(line) + 1
    left = len(lines) - len(head) - len(tail)
    return [*head, f"(... {left} lines of the scene are left out here: the whole scene is longer than a verdict is sent ...)",
            *reversed(tail)]
