"""How speech and world events are written as lines: for actors, transcripts and the console."""

from __future__ import annotations

from core.events import SpeakEvent


def speech_line(speaker: str, speech: SpeakEvent) -> str:
    """A factual line for one speech, in spec 004's transcript form: `Alice [TO: Bob, TONE: x] "…"`."""
    if not isinstance(speech, SpeakEvent):
        raise TypeError(f"only speech is ever routed, not {type(speech).__name__}")
    header = speech_header(speech)
    words = f' "{speech.text}"' if speech.text else ""
    return f"{speaker} {header}{words}".rstrip()


def speech_header(speech: SpeakEvent) -> str:
    """The bracket header of a speech, rebuilt from its parsed fields."""
    parts: list[str] = []
    if speech.action == "interrupt":
        parts.append(f'INTERRUPT after "{speech.interrupt_after or ""}"')
    elif speech.action in ("silent", "react"):
        parts.append(speech.action.upper())
    if speech.target and speech.action != "silent":
        parts.append(f"TO: {speech.target}")
    if speech.tone:
        parts.append(f"TONE: {speech.tone}")
    if speech.nonverbal:
        parts.append(f"*{speech.nonverbal}*")
    return f"[{', '.join(parts)}]" if parts else ""


def world_event_line(text: str) -> str:
    """A world event as every actor and the transcript see it."""
    return f"[EVENT: {text}]"
