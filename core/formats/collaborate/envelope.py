"""The unified reply envelope of spec 001 §3: `{message, handoff?: {to, task}, final?}`.

`schema(participants)` is §3's JSON Schema (the `to` enum is the session's participants: `gpt`,
`claude` for the default pair). `strict_schema` is the same contract in the form OpenAI's strict
structured outputs accept (every key required, optional ones nullable, no length keywords); both
forms validate through the same pydantic model. `parse_envelope` never raises: it returns the
envelope or the problem, and the caller falls back as §3 says.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from promptdesk.core.protocol.bounded import load_json
from promptdesk.core.protocol.fences import whole_fence
from promptdesk.core.protocol.reasoning import without_reasoning

TASK_MAX = 500


class Handoff(BaseModel):
    """Who speaks next, and the one-sentence task the router passes to them."""

    model_config = ConfigDict(extra="forbid", strict=True)

    to: str
    task: str = Field(min_length=1, max_length=TASK_MAX)


class Envelope(BaseModel):
    """One participant's reply. `final: true` ends the collaboration (any handoff is ignored)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    message: str = Field(min_length=1)
    handoff: Handoff | None = None
    final: bool | None = None

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        """A message of whitespace shows nothing in the room: it is not a message."""
        if not value.strip():
            raise ValueError("message is blank")
        return value

    @property
    def is_final(self) -> bool:
        return bool(self.final)

    @property
    def next_handoff(self) -> Handoff | None:
        """The handoff the router acts on: none once `final` is set."""
        return None if self.is_final else self.handoff


def schema(participants: list[str]) -> dict[str, Any]:
    """Spec 001 §3's JSON Schema, with the `to` enum set to this session's participants."""
    return {
        "type": "object",
        "properties": {
            "message": {"type": "string", "minLength": 1},
            "handoff": {
                "type": "object",
                "properties": {"to": {"type": "string", "enum": list(participants)},
                               "task": {"type": "string", "minLength": 1, "maxLength": TASK_MAX}},
                "required": ["to", "task"],
                "additionalProperties": False,
            },
            "final": {"type": "boolean"},
        },
        "required": ["message"],
        "additionalProperties": False,
    }


def strict_schema(participants: list[str]) -> dict[str, Any]:
    """The same contract for OpenAI strict structured outputs: optional keys become nullable."""
    handoff = {"type": "object",
               "properties": {"to": {"type": "string", "enum": list(participants)}, "task": {"type": "string"}},
               "required": ["to", "task"], "additionalProperties": False}
    return {
        "type": "object",
        "properties": {"message": {"type": "string"},
                       "handoff": {"anyOf": [handoff, {"type": "null"}]},
                       "final": {"type": ["boolean", "null"]}},
        "required": ["message", "handoff", "final"],
        "additionalProperties": False,
    }


def parse_envelope(text: str, participants: list[str]) -> tuple[Envelope | None, str | None]:
    """(envelope, None) when `text` is a valid envelope, else (None, what is wrong).

    The whole text must be one JSON object (a single surrounding ``` fence is tolerated, and so is a
    raw line break inside a string: a model's multi-paragraph `message` written unescaped);
    prose around it is a failure, as is a handoff to someone who is not a participant. A reasoning
    model's `<think>` preamble is not part of the reply (`without_reasoning`).
    """
    raw = without_reasoning(text).strip()
    fenced = whole_fence(raw, newline=True)
    if fenced is not None:
        raw = fenced.strip()
    twice: list[str] = []
    try:
        data = load_json(raw, object_pairs_hook=lambda pairs: _once(pairs, twice), strict=False)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at char {exc.pos})"
    except ValueError as exc:
        return None, f"not usable JSON ({exc})"
    if twice:  # JSON keeps the last copy silently: which `message` (or `final`, or `handoff.to`) is meant cannot be told
        return None, f"wrong shape ({'; '.join(f'{key[:40]!r} given twice' for key in dict.fromkeys(twice))})"
    try:
        envelope = Envelope.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'envelope'}: {e['msg']}" for e in exc.errors())
        return None, f"wrong shape ({problems})"
    if envelope.handoff is not None and envelope.handoff.to not in participants:
        return None, f"wrong shape (handoff.to: {envelope.handoff.to!r} is not one of {', '.join(participants)})"
    return envelope, None


def _once(pairs: list[tuple[str, Any]], twice: list[str]) -> dict[str, Any]:
    """An object from its pairs, each key given more than once noted in `twice`."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        twice += [key for key, _ in pairs if key in seen or seen.add(key)]
    return data


def fallback(text: str) -> Envelope:
    """§3's rule for an invalid reply: the raw output as a plain message, no handoff, not final;
    never a reasoning model's private reasoning (`without_reasoning`)."""
    return Envelope(message=without_reasoning(text).strip() or "(empty reply)")
