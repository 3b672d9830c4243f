"""What the engine tells an LLM judge (coordinator roles A and B), word for word.

These are the engine's own fixed words: they carry nothing private, and the isolation audit counts
them as public wherever they stand in a request (`fixed_texts`). A judge is a single recipient, so
the audit cannot learn its framing from seeing the same words sent to several actors.
"""

from __future__ import annotations

from string import Formatter

JUDGE_SYSTEM = """\
You are the coordinator of a scene played by separate actors. You never write dialogue, stage
directions or summaries. You only decide, after each beat, one of:
- continue: the scene should go on
- close: the scene has reached a natural end (reason: "natural")
- nudge: an actor should be told the end is approaching (actor: their name)
- suggest_event: the scene is stuck; propose a short world event for the operator (text, at most 300 characters)
Err toward letting the scene continue. With every decision also answer two questions:
- goal_met: has the scene's goal been reached in what was said and done? (true or false)
- positions_stated: since the close note, has every character of the cast stated a final position,
  where they now stand? (false while no close note has gone out)
Answer with one JSON object only:
{"decision": "...", "reason": "...", "actor": null, "text": null, "goal_met": false, "positions_stated": false}"""

VERDICT_SYSTEM = """\
You are the coordinator of a scene played by separate actors, and the scene has ended. You never
write dialogue. Judge only whether the scene's goal was met by what was said and done, not whether
the scene ended well. Answer with one JSON object only:
{"goal_achieved": true | false | null, "reason": "one line naming what was or was not said"}
Use null only when the speech cannot tell."""

SUGGESTION_MAX_CHARS = 300
"""The longest world event a judge may suggest (`JUDGE_SYSTEM` says so); a longer one is not a decision."""
SYSTEM = "{prompt}\n\nScene goal: {goal}"
NO_GOAL = "(none given)"
OPERATOR = "\n\n## Operator context (notes.md)\n\n{context}\n\n## Director's notes\n\n{notes}"
NO_NOTES = "(none)"
DECISION = ("Beat {beat} of at most {max_beats}. Silent beats in a row: {silent}.\n{cast}\n"
            "SPEECH SO FAR:\n{lines}\n\n{since}{suggested}Your decision, as JSON only:")
SUGGESTED = "WORLD EVENTS YOU ALREADY SUGGESTED (never suggest one again):\n{events}\n\n"
"""Every world event the judge suggested earlier in the run and that was not withheld, one per line."""
CAST = "Cast: {names}.\n"
NO_CLOSE_NOTE = "No close note has gone out yet.\n\n"
SINCE_CLOSE_NOTE = "SPEECH SINCE THE CLOSE NOTE:\n{lines}\n\n"
NONE_YET = "(none yet)"
NO_SPEECH_YET = "(no speech yet)"
VERDICT = "The scene closed at beat {beat}.\n\nSPEECH:\n{lines}\n\nWas the goal met? JSON only:"
NO_SPEECH = "(no speech)"

_TEMPLATES = (JUDGE_SYSTEM, VERDICT_SYSTEM, SYSTEM, NO_GOAL, OPERATOR, NO_NOTES, DECISION, CAST, NO_CLOSE_NOTE,
              SINCE_CLOSE_NOTE, SUGGESTED, NONE_YET, NO_SPEECH_YET, VERDICT, NO_SPEECH)
_LITERAL = (JUDGE_SYSTEM, VERDICT_SYSTEM, NO_GOAL, NO_NOTES, NO_CLOSE_NOTE, NONE_YET, NO_SPEECH_YET, NO_SPEECH)
"""Texts sent as they stand (their braces are JSON, not placeholders)."""


def fixed_texts() -> list[str]:
    """Every fixed piece of what a judge is sent: each literal text whole, each template's text
    between its placeholders."""
    pieces: list[str] = []
    for template in _TEMPLATES:
        if template in _LITERAL:
            pieces.append(template)
        else:
            pieces.extend(literal for literal, _, _, _ in Formatter().parse(template) if literal.strip())
    return pieces
