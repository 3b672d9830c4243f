"""What an actor is told: its briefing (spec 000's order) and the factual lines routed to it.

Every string an actor ever receives is built here, from its own character, its own perspective
and public speech. Nothing here accepts a thinking event, another actor's profile or journal, or
the coordinator's notes: that is the isolation guarantee in code.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from promptdesk.core.characters.loading import Character
from promptdesk.core.protocol.bounded import read_capped
from promptdesk.core.protocol.lines import folded, scene_lines
from promptdesk.core.protocol.notes import BEGIN_NOTE as BEGIN_NOTE
from promptdesk.core.protocol.notes import SOFT_CAP_NUDGE as SOFT_CAP_NUDGE, STALL_NOTE as STALL_NOTE
from promptdesk.core.engine.scene import Scene
from promptdesk.core.errors import InvalidConfig
from promptdesk import resources

SYSTEM_PROMPT_MAX_CHARS = 64_000
CHARACTER_HEADING = "\n\n## YOUR CHARACTER\n\n"
"""Where the actor system prompt ends and the character begins, in every briefing."""
"""The longest actor system prompt read (a longer file is refused, naming it)."""

ACTOR_JSON_PROMPT = """\
You are an actor. You play exactly one character in a scene with other characters, each played by
another actor you cannot see. Stay in character. Never describe another character's thoughts.

Answer every turn with exactly one JSON object and nothing else, with these keys:
  "thinking": your character's private reasoning, in their own voice. No one else ever sees it.
  "action": "speak" (dialogue), "interrupt" (cutting someone off), "silent" (saying nothing,
            always allowed) or "react" (a wordless reaction)
  "to": the name of the character you address, or null to address everyone
  "tone": the emotion, in a word or two, or null
  "stage_direction": a gesture or action, or null
  "words": the spoken words ("" when silent or react)
Only speak when your character naturally would; silence is a fine answer.
If your character has clearly said all they came to say, you may end the scene with the words
"*[the scene ends here]*"."""

OPENING_INSTRUCTION = (
    "The scene begins now. Wait for the other character to speak, "
    "or speak first if the scene briefing calls for it."
)
JOURNAL_PROMPT = (
    "The scene has ended. Step partly back — not out of the character, but into reflective mode. "
    "Write a brief journal entry (200–500 words) in the character's first-person voice about what "
    "happened in the scene, what surprised them, what they're left thinking, what they might do or "
    "feel differently next time. This will become part of the character's memory for the next "
    "scene they're in."
)
"""Spec 000's journal-write prompt, word for word (the reply's tags, if any, are read by
`promptdesk.core.engine.journals.entry_of`)."""


def system_prompt_path(scene: Scene) -> Path:
    """The actor system prompt file this scene plays with: its own `system_prompt:` (relative to the
    scene file), else the shipped `actor/system-prompt.md`."""
    if not scene.system_prompt:
        return resources.system_prompt_file()
    path = Path(scene.system_prompt).expanduser()
    return path if path.is_absolute() else (scene.folder or Path.cwd()) / path


def actor_system_prompt(scene: Scene) -> str:
    """The actor system prompt, read from its file (trimmed, never more than four bytes a character
    of the limit); an unreadable, empty, oversized or not regular (a device, a FIFO) file
    is an InvalidConfig naming it, raised while the session is built, before anything is recorded."""
    path = system_prompt_path(scene)
    fix = "fix the file, or name another with `system_prompt:` in the scene file (relative to it)"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # before opening: a FIFO would block the open itself
            raise InvalidConfig(f"The actor system prompt {path} is not a regular file; {fix}.", file=str(path))
        with open(path, "rb") as handle:
            raw = read_capped(handle, 4 * SYSTEM_PROMPT_MAX_CHARS)
        text = "x" * (SYSTEM_PROMPT_MAX_CHARS + 1) if raw is None else raw.decode("utf-8-sig").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not valid UTF-8"
        raise InvalidConfig(f"Cannot read the actor system prompt {path}: {reason}; {fix}.", file=str(path)) from None
    if not text:
        raise InvalidConfig(f"The actor system prompt {path} is empty; {fix}.", file=str(path))
    if len(text) > SYSTEM_PROMPT_MAX_CHARS:
        raise InvalidConfig(f"The actor system prompt {path} is over {SYSTEM_PROMPT_MAX_CHARS:,} characters; {fix}.",
                            file=str(path))
    return text


JOURNAL_HEADING = "## YOUR JOURNAL\n\n"
"""The heading of a briefing's journal section (absent when the character has no entries)."""


def build_briefing(character: Character, scene: Scene, cast_names: Sequence[str]) -> str:
    """The system prompt for one actor, in spec 000's order: the actor system prompt (its file),
    profile, journal, own perspective, instruction. A character with no journal entries has no
    journal section (an empty one would tell the actor nothing, on every request)."""
    others = [n for n in cast_names if n != character.name]
    framing = scene_lines(scene.title, scene.setting, scene.prompt, scene.goal, "Goal of the scene")
    framing.append(f"You are {character.name}. Also present: {', '.join(others) or 'no one'}.")
    perspective = scene.perspective_for(character.slug)
    if perspective:
        framing.append(f"Your private perspective: {perspective.strip()}")
    journal = character.journal.strip()
    return "\n\n".join([
        actor_system_prompt(scene),
        CHARACTER_HEADING.lstrip() + character.profile.strip(),
        *([JOURNAL_HEADING + journal] if journal else []),
        "## THE SCENE — your perspective\n\n" + "\n".join(framing),
        "## INSTRUCTION\n\n" + OPENING_INSTRUCTION,
    ])


def for_protocol(briefing: str, protocol: str) -> str:
    """The briefing for actors answering in `protocol`: under `json` the actor system prompt that heads
    it (the tag instructions, shipped or the scene's own) gives way to the JSON ones
    (`ACTOR_JSON_PROMPT`); everything from `## YOUR CHARACTER` on is unchanged."""
    if protocol != "json":
        return briefing
    _, section, rest = briefing.partition(CHARACTER_HEADING)
    return ACTOR_JSON_PROMPT + section + rest


def note_line(text: str) -> str:
    """A director's note, addressed to the actor that receives it: one line, like every routed item."""
    return f"DIRECTOR NOTE: {folded(text)}"


ASK = "Respond in character, or stay silent."
"""What closes every turn's update."""
_HEADING = re.compile(r"BEAT \d+(?: of at most \d+)?")


def beat_update(beat: int, items: Sequence[str], *, last_beat: int | None = None) -> str:
    """The user message for one turn: the beat number, then what happened since, then the ask."""
    heading = f"BEAT {beat}" + (f" of at most {last_beat}" if last_beat else "")
    body = "\n".join(items) if items else "(nothing new has happened)"
    return f"{heading}\n\n{body}\n\n{ASK}"


def kept_and_framing(update: str) -> tuple[str, str]:
    """An update split in two: what a thread keeps of it once the turn was answered (isolation b:
    what happened), and the framing it keeps no more, the beat heading and the ask ("" when the
    update has no heading), which the newest update (and the order of the thread) carry."""
    head, sep, rest = update.partition("\n\n")
    if not (sep and _HEADING.fullmatch(head)):
        return update, ""
    body = rest.removesuffix("\n\n" + ASK)
    return body, head + ("\n\n" + ASK if len(body) < len(rest) else "")


def answered(update: str) -> str:
    """An update as a thread keeps it once the turn was answered (`kept_and_framing`)."""
    return kept_and_framing(update)[0]
