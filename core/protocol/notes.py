"""What the coordinator tells the actors, word for word: its notes (the opening cue, the stall note,
the soft-cap nudge, the winding-down notes).

These are the engine's own fixed words. They carry nothing private, and the isolation audit counts
them as public wherever they stand (`fixed_texts`), while it checks the rest of what the coordinator
writes (a suggested world event, the action a close note names) like any private text.

Winding down (`promptdesk.core.engine.winding`) speaks in one of two registers, as the scene's
`wind_down:` says: `timing` (the default) says only *when* the scene ends, as spec 000's soft-cap
nudge does ("it nudges only timing, not topic"); `action` is spec 004's, whose close note names the
final action ("Please close the scene by …"). `off` sends neither note.
"""

from __future__ import annotations

from string import Formatter

BEGIN_NOTE = "You speak first. Begin the scene."
SOFT_CAP_NUDGE = (
    "You sense the natural end of this conversation approaching. "
    "Bring it to a close in your own way over the next 2–3 turns."
)
STALL_NOTE = "Someone should respond to move the scene forward."

TIMING = "timing"
ACTION = "action"
OFF = "off"
WIND_DOWN_MODES = (TIMING, ACTION, OFF)
"""The values of a scene's `wind_down:`."""

TIMING_NEARING_NOTE = "The scene is nearing its natural end."
TIMING_CLOSE_NOTE = "The scene is ending now. Bring it to a close in your own way."
"""`wind_down: timing`: when, never what (spec 000's soft cap nudges "only timing, not topic")."""

NEARING_NOTE = "Scene is nearing natural conclusion. Begin wrapping up."
CLOSE_NOTE = "Please close the scene by {action}."
NEUTRAL_ACTION = "each of you stating where you now stand, then taking your leave"
"""`wind_down: action`: spec 004's two notes; the close note names the scene's `closing_action:`, else
`NEUTRAL_ACTION`."""


def nearing_note(mode: str) -> str:
    """The first winding-down note in `mode` (`timing` or `action`)."""
    return NEARING_NOTE if mode == ACTION else TIMING_NEARING_NOTE


def close_note(mode: str, action: str = "") -> str:
    """The second winding-down note: in `action` mode `Please close the scene by <action>.` (a
    trailing full stop in the action is not doubled), in `timing` mode a cue with no content."""
    if mode != ACTION:
        return TIMING_CLOSE_NOTE
    return CLOSE_NOTE.format(action=(action.strip().rstrip(".") or NEUTRAL_ACTION))


def fixed_texts() -> list[str]:
    """Every fixed piece of the coordinator's notes: each note whole, the close note's text around its action."""
    pieces = [BEGIN_NOTE, SOFT_CAP_NUDGE, STALL_NOTE, TIMING_NEARING_NOTE, TIMING_CLOSE_NOTE, NEARING_NOTE,
              NEUTRAL_ACTION]
    pieces += [literal for literal, _, _, _ in Formatter().parse(CLOSE_NOTE) if literal.strip()]
    return pieces
