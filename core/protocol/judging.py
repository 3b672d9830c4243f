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
- suggest_event: the scene is stuck; propose a short world event for the operator (text)
Err toward letting the scene continue. Answer with one JSON object only:
{"decision": "...", "reason": "...", "actor": null, "text": null}"""

VERDICT_SYSTEM = """\
You are the coordinator of a scene played by separate actors, and the scene has ended. You never
write dialogue. Judge only whether the scene's goal was met by what was said and done, not whether
the scene ended well. Answer with one JSON object only:
{"goal_achieved": true | false | null, "reason": "one line naming what was or was not said"}
Use null only when the speech cannot tell."""

SYSTEM = "{prompt}\n\nScene goal: {goal}"
NO_GOAL = "(none given)"
OPERATOR = "\n\n## Operator context (notes.md)\n\n{context}\n\n## Director's notes\n\n{notes}"
NO_NOTES = "(none)"
DECISION = ("Beat {beat} of at most {max_beats}. Silent beats in a row: {silent}.\n\n"
            "SPEECH SO FAR:\n{lines}\n\nYour decision, as JSON only:")
NO_SPEECH_YET = "(no speech yet)"
VERDICT = "The scene closed at beat {beat}.\n\nSPEECH:\n{lines}\n\nWas the goal met? JSON only:"
NO_SPEECH = "(no speech)"

_TEMPLATES = (JUDGE_SYSTEM, VERDICT_SYSTEM, SYSTEM, NO_GOAL, OPERATOR, NO_NOTES, DECISION, NO_SPEECH_YET,
              VERDICT, NO_SPEECH)
_LITERAL = (JUDGE_SYSTEM, VERDICT_SYSTEM, NO_GOAL, NO_NOTES, NO_SPEECH_YET, NO_SPEECH)
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
