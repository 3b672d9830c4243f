"""The correction path, both ways: a turn gone wrong on purpose, and the reformatted answer.

`malform` returns a turn without tags, with prose around the tags, or with an unclosed tag, so the
coordinator's correction prompt can be seen working. `reformat` puts the content of such an answer
back into `<thinking>`/`<speech>` without changing it.
"""

from __future__ import annotations

import random
import re

FORMS = ("bare", "chatty", "unclosed")


def malform(turn: str, rng: random.Random) -> str:
    """A well-formed turn, broken in one of three common ways."""
    thinking, speech = _parts(turn)
    form = rng.choice(FORMS)
    if form == "bare":
        return f"{thinking}\n\n{speech}"
    if form == "chatty":
        return f"Sure - here is my turn.\n{turn}\nLet me know if you want another take."
    return f"<thinking>{thinking}</thinking>\n<speech>{speech}"


def reformat(previous: str) -> str | None:
    """The same content in the tag protocol, or None when nothing in it can be kept."""
    thinking, speech = _parts(previous)
    if not speech:
        return None
    thinking = thinking or "I meant exactly what I said; only the form was off."
    return f"<thinking>{thinking}</thinking>\n<speech>{speech}</speech>"


def _parts(text: str) -> tuple[str, str]:
    """Thinking and speech from a tagged, half-tagged or untagged answer."""
    think = re.search(r"<thinking>(.*?)(?:</thinking>|(?=<speech>)|$)", text, re.S)
    speech = re.search(r"<speech>(.*?)(?:</speech>|$)", text, re.S)
    if think or speech:
        return ((think.group(1).strip() if think else ""),
                (speech.group(1).strip() if speech else ""))
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    at = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(("[", "*[")) or '"' in lines[i]), None)
    if at is None:
        return "", " ".join(lines)
    return " ".join(lines[:at]), " ".join(lines[at:])
