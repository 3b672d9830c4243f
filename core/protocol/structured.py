"""The structured actor protocol (`protocol: json`): one JSON object per turn instead of tags.

For models that do not keep the tag protocol but whose server can constrain its output to a JSON
schema. An actor answers::

    {"thinking": "Private reasoning, never routed.", "action": "speak", "to": "Bob",
     "tone": "frustrated", "stage_direction": "folds arms", "words": "You missed the deadline."}

`turn_schema` is the schema the request carries (`Request.json_schema`: OpenAI-style
`response_format`, or Anthropic's forced tool); `to` is constrained to the other cast members'
names or null (everyone). `parse_json_turn` turns a reply into the very `ParsedTurn` the tag
protocol gives, so the engine records and routes it the same way: `thinking` is private and never
routed, the speech's `raw` is the spec 004 bracket form (`[TO: Bob, TONE: frustrated, *folds arms*]
"You missed the deadline."`).

Fail closed: a reply that is not exactly one JSON object matching the schema (bad JSON, a missing
or extra key, a key given twice, a wrong type, an unknown action, a protocol tag inside a public field) is malformed: it has no
speech at all, nothing is taken from any of its fields, and the engine asks for a correction, then
leaves the actor silent. `JsonSplitter` streams nothing until the whole reply is in and
well-formed, so partial JSON (and the thinking inside it) never reaches a public pane.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from promptdesk.core.protocol.reasoning import split_preamble
from promptdesk.core.protocol.reply import ParsedTurn, Speech, is_close_line
from promptdesk.core.protocol.tags import Channel

JSON_CORRECTION_PROMPT = (
    "Your last response was not one JSON object matching the schema ({problems}). "
    "Answer again with only that JSON object, without changing the content."
)
ACTIONS = ("speak", "silent", "interrupt", "react")
FIELDS = ("thinking", "action", "to", "tone", "stage_direction", "words")
_NULLABLE = ("to", "tone", "stage_direction")
MAX_LENGTH = {"thinking": 240, "tone": 30, "stage_direction": 80, "words": 240}
"""Characters a field may hold: a server that enforces them (llama.cpp) keeps a small model from
running on inside one string until its token limit cuts the object short. OpenAI's strict mode
takes no `maxLength`, so the OpenAI provider sends the schema without them (`promptdesk.core.providers.openai_provider`)."""
_TAGS = ("<thinking>", "</thinking>", "<speech>", "</speech>")


def turn_schema(names: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of one turn; `to` may name one of `names` (the other cast members) or be null.

    Strict-mode shaped (every key required, no others), as OpenAI's strict structured outputs need;
    unions are `anyOf`, which llama.cpp's grammar converter enforces (it ignores an `enum` beside a
    list of types). Longer fields than `MAX_LENGTH` are not read as a violation (a server may not
    enforce it): the bound is for the server."""
    name: dict[str, Any] = {"type": "string", "enum": list(names)} if names else {"type": "string"}
    return {
        "type": "object",
        "properties": {
            "thinking": {"type": "string", "maxLength": MAX_LENGTH["thinking"],
                         "description": "your character's private reasoning; no one else sees it"},
            "action": {"type": "string", "enum": list(ACTIONS)},
            "to": {"anyOf": [name, {"type": "null"}], "description": "who you address; null: everyone"},
            "tone": {"anyOf": [{"type": "string", "maxLength": MAX_LENGTH["tone"]}, {"type": "null"}],
                     "description": "the emotion, in a word or two"},
            "stage_direction": {"anyOf": [{"type": "string", "maxLength": MAX_LENGTH["stage_direction"]},
                                          {"type": "null"}], "description": "a gesture or action, or null"},
            "words": {"type": "string", "maxLength": MAX_LENGTH["words"],
                      "description": "the spoken words; empty when silent or react"},
        },
        "required": list(FIELDS),
        "additionalProperties": False,
    }


def parse_json_turn(raw: str, cast: Mapping[str, str] | None = None) -> ParsedTurn:
    """A JSON reply as the tag protocol's `ParsedTurn`; a malformed one has no speech and no thinking. A
    `to` that names no one in `cast` (when a cast is given) makes the reply malformed: it is corrected,
    never routed to a name the scene does not have. A reasoning model's `<think>…</think>` preamble
    before the object (a server that constrains only the answer) is private (`reasoning`), as under
    the tag protocol, and not counted against the reply's form."""
    reasoning, raw = split_preamble(raw)
    reply, problems = _validated(raw)
    if reply is not None and cast and (reply["to"] or "").strip() and _target(reply["to"], cast) not in cast.values():
        names = ", ".join(dict.fromkeys(cast.values()))
        reply, problems = None, [f"to names no one in the cast (name one of {names}, or give null)"]
    if reply is None:
        return ParsedTurn(thinking=None, speech=None, well_formed=False, problems=tuple(problems), reasoning=reasoning)
    return ParsedTurn(thinking=reply["thinking"], speech=_speech(reply, cast or {}), well_formed=True,
                      reasoning=reasoning)


def salvage_json(raw: str) -> ParsedTurn:
    """What a reply still malformed after the corrections keeps: nothing (the actor is silent)."""
    turn = parse_json_turn(raw)
    return ParsedTurn(thinking=None, speech=None, well_formed=False, problems=turn.problems or ("salvaged",))


class JsonSplitter:
    """The streaming side of the JSON protocol: holds every fragment back, and at the end releases
    the thinking ("think") and the speech ("speech") of a well-formed reply, nothing otherwise."""

    def __init__(self, cast: Mapping[str, str] | None = None) -> None:
        self._cast = cast or {}
        self._pieces: list[str] = []

    def feed(self, fragment: str) -> list[tuple[Channel, str]]:
        self._pieces.append(fragment)
        return []

    def flush(self) -> list[tuple[Channel, str]]:
        turn = parse_json_turn("".join(self._pieces), self._cast)
        self._pieces = []
        if turn.speech is None:
            return []
        private = [text for text in (turn.reasoning, turn.thinking) if text]
        return [*(("think", text) for text in private), ("speech", turn.speech.raw)]


def _validated(raw: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The reply as a dict when it matches the schema, else None and what is wrong (never quoting it)."""
    twice: list[str] = []
    try:  # strict=False: a raw line break inside a string (llama.cpp's grammar allows it)
        reply = json.loads(raw, strict=False, object_pairs_hook=lambda pairs: _once(pairs, twice))
    except ValueError:
        return None, ["not valid JSON" if raw.strip() else "empty response"]
    if not isinstance(reply, dict):
        return None, ["not a JSON object"]
    problems = [f"key {k[:40]!r} given twice" for k in dict.fromkeys(twice)]
    problems += [f"missing key {k!r}" for k in FIELDS if k not in reply]
    problems += [f"unexpected key {k[:40]!r}" for k in reply if k not in FIELDS]
    for key in FIELDS:
        value = reply.get(key)
        if key not in reply or (value is None and key in _NULLABLE):
            continue
        if not isinstance(value, str):
            problems.append(f"{key} must be a string")
        elif key != "thinking" and any(tag in value.lower() for tag in _TAGS):
            problems.append(f"{key} holds a protocol tag")
    if isinstance(reply.get("action"), str) and reply["action"] not in ACTIONS:
        problems.append(f"action must be one of {', '.join(ACTIONS)}")
    return (None, problems) if problems else (reply, [])


def _once(pairs: list[tuple[str, Any]], twice: list[str]) -> dict[str, Any]:
    """An object's pairs as a dict, noting in `twice` every key given more than once (JSON keeps the
    last silently; which value the model meant is unknown, so the reply is malformed)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            twice.append(key)
        seen[key] = value
    return seen


def _speech(reply: Mapping[str, Any], cast: Mapping[str, str]) -> Speech:
    """The speech a valid reply makes, with its bracket header written as the tag protocol's."""
    action = reply["action"]
    target = _target(reply["to"], cast)
    tone = (reply["tone"] or "").strip() or None
    gesture = (reply["stage_direction"] or "").strip().strip("*").strip() or None
    words = "" if action in ("silent", "react") else reply["words"].strip()
    items = [action.upper()] if action != "speak" else []
    items += [f"TO: {target}"] if target else []
    items += [f"TONE: {tone}"] if tone else []
    items += [f"*{gesture}*"] if gesture else []
    header = f"[{', '.join(items)}]" if items else ""
    said = words if is_close_line(words) else f'"{words}"'
    raw = f"{header} {said}".strip() if words else header
    closes = any(is_close_line(line) for line in raw.splitlines())
    return Speech(action=action, content=words, raw=raw, target=target, tone=tone, nonverbal=gesture,
                  closes_scene=closes)


def _target(name: str | None, cast: Mapping[str, str]) -> str | None:
    """The display name `to` names (any case, display name or slug, composed or decomposed, in
    full-width letters or not), else the name as written."""
    name = (name or "").strip()
    if not name:
        return None
    by_folded = {_folded(key): value for key, value in cast.items()}
    return by_folded.get(_folded(name), name)


def _folded(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()
