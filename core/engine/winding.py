"""Winding down (spec 004, "Scene Completion Detection"): the nearing note, the close note, the `goal` close.

A scene starts winding down when it has played `limits.wind_down_at` of its `max_beats` (default
0.8, spec 004's "80%") or as soon as its goal is met, while a beat remains to hear it: every actor is
sent the nearing note; at the next beat, the close note. What the notes say is the scene's
`wind_down:` (`promptdesk.core.protocol.notes`): `timing`, the default, says only when ("The scene is
nearing its natural end.", then "The scene is ending now. Bring it to a close in your own way."), so
that spec 000's rule holds (the coordinator nudges timing, never topic); `action`, the default when
the scene names a `closing_action:`, is spec 004's ("Scene is nearing natural conclusion. Begin
wrapping up.", then "Please close the scene by <final action>."); `off` sends neither and never
closes with `goal`. Once the goal is met and every character has stated a final position, the
scene closes with reason `goal`.

Who judges what: role C (pure code) calls the goal met when every `goal_markers` entry has been
spoken (without markers it cannot tell, and a scene wound down by its length closes another way),
and a final position stated when every actor has *spoken* since the close note: a `speak` or an
`interrupt` with words (`states_a_position`); a silence or a wordless reaction is not a position.
Roles A and B ask their judge both questions with every decision (`goal_met`, `positions_stated`);
an answer without them uses role C's rules. The notes are the coordinator's own (`reason`
`wind-down`, `close-note`): like every moderator note they reach the actors and stay out of the
transcripts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from promptdesk.core.engine.coordinator import Decision, SceneView, marker_verdict
from promptdesk.core.protocol import notes
from promptdesk.core.record.events import COORDINATOR, SpeakEvent

GOAL = "goal"
"""The close reason of a scene whose goal was met and whose characters all stated a final position."""


@dataclass
class Winding:
    """Where a scene is in winding down: the beats the two notes went out, who spoke since the second."""

    nearing_beat: int | None = None
    close_beat: int | None = None
    close_line: int = 0
    """How many public lines there were when the close note went out."""
    spoken: set[str] = field(default_factory=set)
    judge_nudged: set[str] = field(default_factory=set)
    """The actors a judge nudged (each once; the soft cap's nudge is `Stage.nudged`)."""

    def since_close_note(self, public_lines: list[str]) -> list[str] | None:
        """The public lines since the close note (None before it went out)."""
        return None if self.close_beat is None else public_lines[self.close_line:]


def states_a_position(speech: SpeakEvent) -> bool:
    """Role C's final position: the actor *spoke* (a `speak` or an `interrupt` with words: a letter or a
    digit outside `*stage business*`); a silence, a wordless reaction, a gesture alone, or a line of
    nothing but punctuation (`"..."`, `"—"`) is not one."""
    said = _BUSINESS.sub(" ", speech.text or "")
    return speech.action in ("speak", "interrupt") and any(c.isalnum() for c in said)


_BUSINESS = re.compile(r"\*[^*]*\*")
"""Stage business written inside a speech (`*shrugs*`): a gesture, not words."""


def length_due(beat: int, max_beats: int, share: float) -> bool:
    """True once `beat` (counted from 0) is the last of the first `share` of `max_beats` or later."""
    return beat + 1 >= share * max_beats


def goal_met(view: SceneView, decision: Decision) -> bool:
    """The judge's `goal_met` when it gave one, else role C's: every goal marker was spoken."""
    if decision.goal_met is not None:
        return decision.goal_met
    return marker_verdict(view).achieved is True


def positions_stated(winding: Winding, cast: list[str], decision: Decision) -> bool:
    """The judge's `positions_stated` when it gave one, else role C's: every actor spoke (words, see
    `states_a_position`) since the close note."""
    if winding.close_beat is None:
        return False
    if decision.positions_stated is not None:
        return decision.positions_stated
    return set(cast) <= winding.spoken


def wind_down(session: Any, view: SceneView, decision: Decision, new_speech: list[SpeakEvent],
              allowed: str | None) -> Decision | None:
    """Send the nearing note, then the close note; close with `goal` when the goal is met and every
    character has stated a final position. `session` is a `promptdesk.core.engine.stage.Stage` (which holds this
    module's `Winding`, so it is not imported here); `allowed` says why no natural close may be taken
    yet, or is None."""
    winding, state, scene = session.winding, session.state, session.scene
    if winding.close_beat is not None:
        winding.spoken |= {s.from_ for s in new_speech if states_a_position(s) and s.beat is not None
                           and s.beat > winding.close_beat}
    mode = scene.winding
    if mode == notes.OFF:
        return None  # no note, so no close note for a final position to follow: no `goal` close
    met = goal_met(view, decision)
    if winding.close_beat is None and state.beat + 1 >= state.max_beats:
        return None  # no beat left to hear a note: `max_beats` closes the scene now
    if winding.nearing_beat is None:
        if met or length_due(state.beat, state.max_beats, scene.limits.wind_down_at):
            winding.nearing_beat = state.beat
            session.director_note(notes.nearing_note(mode), None, source=COORDINATOR, reason="wind-down")
        return None
    if winding.close_beat is None:
        winding.close_beat, winding.close_line = state.beat, len(session.public_lines)
        session.director_note(notes.close_note(mode, scene.closing_action), None, source=COORDINATOR,
                              reason="close-note")
        return None
    if met and positions_stated(winding, session.health.playing(list(state.cast)), decision):
        if allowed:
            session.recorder.log("info", f"goal close not taken at beat {state.beat}: {allowed}")
            return None
        return Decision(decision="close", reason=GOAL,
                        text="The goal was met and every character stated a final position")
    return None
