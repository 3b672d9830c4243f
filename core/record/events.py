"""Every observable thing a session does, as one family of pydantic events.

The recorder writes these to `events.jsonl`, the console renders them, the batch printer prints
them and replay reads them back. On disk an event is `{"t", "from", "type", "target"?, "text",
"reason"?, "beat"?, ...}` (spec 000's format, extended).

`think` and `speak` are different types end to end: nothing that routes to an actor ever accepts
a `ThinkEvent`. `DeltaEvent` carries streamed fragments for live display and is never recorded.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from promptdesk.core.protocol.bounded import load_json

COORDINATOR = "coordinator"
"""The `from` of every event the engine itself emits (the coordinator is not an actor)."""

OPERATOR = "operator"
"""The `from` of controls sent by the person at the console or the batch runner."""

GENERIC_TYPES: dict[str, str] = {
    "start": "The run began: its scene, format, both choices, seed, providers and whether arrivals are simulated.",
    "spawn": "An actor (or a participant) was created for a character.",
    "brief": "An actor was briefed: its system prompt was built (the text is in prompts.jsonl, not here).",
    "route": "Public speech was routed to an actor (spec 000's route).",
    "correct": "A malformed reply was sent the correction prompt (at most twice per turn).",
    "event": "A world event reached every actor: scheduled, injected by the operator, or suggested by the "
             "coordinator (`suggested_by`).",
    "note": "A director's note (to one actor or to all), or a coordinator's timing note.",
    "system": "Something failed or was refused (a call, a journal, a salvaged reply): said once, never dropped.",
    "stop": "The operator (or a signal) stopped the scene.",
    "beat": "A beat began (`beat` is its number, from 0).",
    "beat_end": "A beat's turns were all played and their speech routed (`beat` its number): a resume goes on "
                "after it and never plays it again (only the coordinator's check after it is made again).",
    "pause": "The operator paused the scene.",
    "pace": "The operator changed the pace: `pace_s`, the least seconds a beat lasts from the next safe point.",
    "resume": "The scene went on: after a pause, or a killed run resumed from its log (the seam).",
    "round": "A collaboration or roundtable round began.",
    "handoff": "A collaborator handed the turn to another (`target`).",
    "synthesis": "The roundtable's facilitator summed up a round.",
    "escalate": "The roundtable's facilitator asked the operator to decide.",
    "phase": "A roundtable strategy moved to its next phase.",
    "decision": "The operator's (or the headless policy's) answer to an escalation.",
    "human_message": "A collaboration's goal, as the operator gave it.",
    "agent_call": "A single call to one collaborator (the room's `@name text`).",
    "agent_response": "That collaborator's answer.",
    "question": "The roundtable facilitator's question to the participants.",
    "answer": "A roundtable participant's answer.",
    "branch": "A take began: the record before this event was copied from the parent run (`promptdesk branch`).",
    "evaluation": "After the close, an evaluator scored one actor (`target`) on a rubric's dimensions: `rubric`, "
                  "`evaluator`, `scores` (null: unknown), `reasoning`, `unknown` (why), `answered` (a score given "
                  "out of range, never a score), `overall`, `tries` (evaluation.json gathers them).",
}
"""Every event type without a model of its own, and what it records (the run-folder reference lists them)."""
GenericType = Literal[tuple(GENERIC_TYPES)]  # type: ignore[valid-type]


class BaseEvent(BaseModel):
    """Fields shared by every event: time since scene start, source, type, target, text."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", use_attribute_docstrings=True)

    t: float = Field(allow_inf_nan=False)
    """Seconds since the scene started (simulated seconds on the offline improviser alone: see `arrivals` in `start`)."""
    from_: str = Field(alias="from")
    """Who it is from: an actor's slug, `coordinator` (the engine), `operator` (you), or a format's role."""
    target: str | None = None
    """Whom it is for or about, when it is for one actor."""
    text: str = ""
    """What was said or what happened."""
    beat: int | None = Field(default=None, ge=0)
    """The beat (or round) it belongs to."""

    def to_record(self) -> dict[str, Any]:
        """The dict written to `events.jsonl` (aliases, no empty optionals)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class GenericEvent(BaseEvent):
    """Coordinator bookkeeping, operator controls, world events, notes and format events."""

    type: GenericType
    """One of the types listed below."""
    reason: str | None = None
    """Why, when the type has one (a stop, a system line)."""


class ThinkEvent(BaseEvent):
    """An actor's private `<thinking>`: shown in its own pane, never routed to anyone."""

    type: Literal["think"] = "think"


class SpeakEvent(BaseEvent):
    """An actor's `<speech>`, with the parsed bracket header of spec 004 Appendix B.

    `action` is one of speak | interrupt | silent | react. `text` is the spoken words only; `raw` the
    whole speech block as the actor wrote it. `target` is whom the actor addressed (`TO:`). In
    `events.json`, spec 000's event log, the block is `text` and the words `words` (`spec_record`).
    """

    type: Literal["speak"] = "speak"
    action: str = "speak"
    """`speak`, `interrupt`, `silent` or `react`."""
    tone: str | None = None
    """The header's `TONE:`."""
    nonverbal: str | None = None
    """The header's `*stage business*`."""
    interrupt_after: str | None = None
    """The phrase after which the actor cut in (`INTERRUPT after \"…\"`)."""
    raw: str | None = None
    """The whole speech block as the actor wrote it, header included."""
    closes_scene: bool | None = None
    """True when the speech closed the scene explicitly (`*[the scene ends here]*`)."""


def spec_record(event: BaseEvent) -> dict[str, Any]:
    """An event as spec 000's event log writes it (`events.json`): a `speak` event's `text` is the whole
    `<speech>` as the actor wrote it (stage business included: `"*[opens the door]* Hi, come in."`),
    and its spoken words are `words`; every other event as in `events.jsonl` (`to_record`)."""
    record = event.to_record()
    if isinstance(event, SpeakEvent):
        record.pop("raw", None)
        record["text"], record["words"] = event.raw if event.raw is not None else event.text, event.text
    return record


class JournalEvent(BaseEvent):
    """A journal entry an actor wrote in character after the scene closed."""

    type: Literal["journal"] = "journal"


class CloseEvent(BaseEvent):
    """The scene ended; `reason` is natural, explicit, goal (wound down with the goal met), soft-cap, hard-cap,
    max_beats_exceeded, stop, stall, budget, a collaboration's final, no_handoff or cap, a roundtable's
    concluded, decided, escalation or max-rounds, error, provider-error (the calls fail: see
    `promptdesk.core.engine.outcome`) or record-error (the run folder could not be written). `goal_achieved` is the goal verdict, apart from the reason: True, False or None
    (unknown), with its one-line `goal_reason`."""

    type: Literal["close"] = "close"
    reason: str
    """Why the scene ended (see the class docstring's list)."""
    goal_achieved: bool | None = None
    """The goal verdict: true, false, or null (unknown)."""
    goal_reason: str | None = None
    """The verdict's reason, in a line."""

    def to_record(self) -> dict[str, Any]:
        """As every event, but `goal_achieved` is always written: `null` says "unknown"."""
        return {**super().to_record(), "goal_achieved": self.goal_achieved}


class CallEvent(BaseEvent):
    """One provider call: who it was for, tokens, cost and timing (honest costs, per call)."""

    type: Literal["call"] = "call"
    provider: str
    """The provider that answered (`offline` for the improviser)."""
    model: str | None = None
    """The model id, when there is one."""
    purpose: str = "turn"
    """What the call was for: `turn`, `judge`, `journal`, a format's own."""
    input_tokens: int | None = 0
    """Input tokens billed (null: unknown)."""
    output_tokens: int | None = 0
    """Output tokens billed (null: unknown)."""
    cache_write_tokens: int | None = 0
    """Tokens written to the provider's prompt cache."""
    cache_read_tokens: int | None = 0
    """Tokens read from the provider's prompt cache."""
    cost_usd: float | None = 0.0
    """What the call cost, by the price table (null: unknown)."""
    latency_s: float = 0.0
    """Seconds from the request to the whole answer."""
    ttft_s: float | None = None
    """Seconds to the first streamed token."""
    tokens_per_s: float | None = None
    """Output tokens per second while streaming."""
    ok: bool = True
    """False when the call failed (after its retries)."""
    usage: Literal["unknown"] | None = None
    """`unknown` when the response carried no usage: the token counts and the cost are then `null`
    (unknown), never 0."""

    @property
    def unknown(self) -> bool:
        return self.usage == "unknown"

    @property
    def tokens(self) -> int:
        """Every token this call was counted (0 when its usage is unknown)."""
        return sum(getattr(self, key) or 0 for key in TOKEN_KEYS)

    def to_record(self) -> dict[str, Any]:
        """As every event, but unknown usage is written as `null` tokens and cost."""
        record = super().to_record()
        return {**record, **dict.fromkeys((*TOKEN_KEYS, "cost_usd"))} if self.unknown else record


TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")


class DeltaEvent(BaseEvent):
    """A streamed fragment of an actor's thinking or speech. Published live, never recorded.

    `channel="reset"` (empty text) retracts every fragment of this actor's call shown so far: the
    attempt that streamed them failed, and the retry streams its answer from the start.
    `channel="retry"` says that this actor's call is about to be tried again, and why (`retry 1/3 in 4 s
    after … HTTP 429 …`): the actor is still waited on."""

    type: Literal["delta"] = "delta"
    channel: Literal["think", "speech", "reset", "retry"] = "speech"
    """`think`, `speech`, `reset` (retracts the fragments of a failed attempt) or `retry` (a retry's notice)."""


Event = Annotated[
    Union[GenericEvent, ThinkEvent, SpeakEvent, JournalEvent, CloseEvent, CallEvent, DeltaEvent],
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: dict[str, Any]) -> BaseEvent:
    """Rebuild a typed event from one `events.jsonl` record."""
    return _ADAPTER.validate_python(data)


def parse_event_json(line: str) -> BaseEvent:
    """Rebuild a typed event from one line of `events.jsonl` (through `json`, which, unlike the
    strict validator's parser, reads a lone surrogate's escape back as the character it was), nested
    no deeper than `promptdesk.core.protocol.bounded.MAX_DEPTH`; every failure is a `ValueError`."""
    return _ADAPTER.validate_python(load_json(line))


def why_unreadable(exc: Exception) -> str:
    """Why a line is no event, in a few words (the field and what is wrong with it, not the validator's
    whole report)."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and (first := next(iter(errors()), None)):
        if first["type"] == "union_tag_not_found":
            return "no `type`"
        if first["type"] == "union_tag_invalid":
            return f"unknown type {first.get('ctx', {}).get('tag')!r}"
        where = ".".join(str(part) for part in first["loc"][1:])
        return f"{where + ': ' if where else ''}{first['msg']}"[:120]
    text = str(exc).strip().splitlines()
    return text[0][:120] if text else type(exc).__name__
