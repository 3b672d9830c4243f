"""One actor's turn: ask, stream, parse, correct (at most twice), salvage, record.

A turn never crashes the scene and never vanishes: a provider failure, a timeout or any unexpected
exception (undecodable bytes, a malformed stream event, a parser bug) becomes a `debug.log` entry and
a `system` event ("[SYSTEM: Bob unable to respond]"); the lines the actor was due to hear wait for its
next turn, and the scene goes on. Only a `RecordingError` (the run folder cannot be written) passes
through: the session stops the run on it. A reply that holds no well-formed `<speech>` after the
corrections leaves the actor silent for the turn, with a `system` event saying why; the raw reply
goes only to `debug.log`.
"""

from __future__ import annotations

import traceback
from dataclasses import replace
from typing import TYPE_CHECKING

from promptdesk.core.engine.actors import Actor
from promptdesk.core.engine.outcome import UNAVAILABLE, can_play_without, fatal
from promptdesk.core.errors import ProviderError, RecordingError
from promptdesk.core.record.events import CallEvent, DeltaEvent, SpeakEvent, ThinkEvent
from promptdesk.core.protocol.lines import speech_line
from promptdesk.core.protocol.person_names import given_name, spoken_name
from promptdesk.core.providers.pricing import cost_usd, dollars
from promptdesk.core.protocol.reply import CORRECTION_PROMPT, ParsedTurn, Speech, TagSplitter, parse_turn, salvage
from promptdesk.core.protocol.structured import JSON_CORRECTION_PROMPT, JsonSplitter, parse_json_turn, salvage_json, turn_schema
from promptdesk.core.providers.base import Completion, Provider, Request, Usage
from promptdesk.core.providers.concurrency import one_call
from promptdesk.core.providers.retry import RETRY_NOTICE
from promptdesk.core.record.outputs import SILENCED
from promptdesk.core.record.recorder import redact
from promptdesk.core.protocol.bounded import REPLY_MAX_CHARS
from promptdesk.core.protocol.sanitize import mend

if TYPE_CHECKING:
    from promptdesk.core.engine.stage import Stage

MAX_CORRECTIONS = 2


async def call(session: Stage, provider: Provider, request: Request, *, stream_as: str | None = None) -> Completion:
    """Send one request: record it in `prompts.jsonl`, stream deltas, record a `call` event.

    Once the run was aborted because its calls fail (`Stage.abort`), no new call is made: this
    raises `SceneStopped`, which every format's policy already turns into the end of the run.

    A provider with a `max_concurrency` first waits for a place at its server, in arrival order
    (`promptdesk.core.providers.concurrency`): the request is recorded and timed from when it goes."""
    async with one_call(provider):
        return await _send(session, provider, request, stream_as)


async def _send(session: Stage, provider: Provider, request: Request, stream_as: str | None) -> Completion:
    """`call`, once the server has a place for the request."""
    if session.failure is not None:
        from promptdesk.core.engine.stage import SceneStopped
        raise SceneStopped
    session.recorder.record_prompt(session.now(), provider.as_sent(request))
    structured = request.json_schema is not None and request.purpose in ("turn", "correct")
    fresh = (lambda: JsonSplitter(addressable(session))) if structured else TagSplitter
    splitter = fresh()

    def publish(pairs: list[tuple[str, str]]) -> None:
        for channel, text in pairs:
            session.emit(DeltaEvent(t=session.now(), **{"from": stream_as}, channel=channel, text=text, beat=request.beat))

    def retract() -> None:
        nonlocal splitter
        splitter = fresh()
        publish([("reset", "")])

    def retrying(attempt: int, most: int, delay: float, reason: str) -> None:
        """Say a retry live, for whom the call is (streamed or not: a collaboration's reply, a journal entry)."""
        text = f"retry {attempt}/{most} in {delay:.0f} s: {redact(reason).removeprefix(provider.name + ': ')}"
        session.emit(DeltaEvent(t=session.now(), **{"from": stream_as or request.to}, channel="retry", text=text, beat=request.beat))

    started = session.clock.now()
    ok = False
    completion: Completion | None = None
    error: Exception | None = None
    notice = RETRY_NOTICE.set(retrying)
    try:
        completion = await provider.complete(request, (lambda f: publish(splitter.feed(mend(f)))) if stream_as else None,
                                             retract if stream_as else None)
        if stream_as:
            publish(splitter.flush())
        ok = True
        if completion.refusal:
            session.recorder.log("warning", f"the model refused the request to {request.to}", beat=request.beat,
                                 purpose=request.purpose, refusal=completion.refusal)
        if completion.unoffered_tool:
            session.recorder.log("warning", f"the reply to {request.to} asked to call a tool ({completion.unoffered_tool}), "
                                 "and Promptdesk offers none: the call was not read, only the text that came with it",
                                 beat=request.beat, purpose=request.purpose)
        if completion.truncated:
            session.recorder.log("warning", f"a reply to {request.to} stopped at its token limit "
                                 f"({request.max_tokens} tokens): it may be cut short", beat=request.beat,
                                 purpose=request.purpose)
        return completion.model_copy(update={"text": mend(_within_bound(session, request, completion.text))})
    except BaseException as exc:
        error = exc
        raise
    finally:
        RETRY_NOTICE.reset(notice)
        billed = getattr(error, "usage", None)
        event = session.emit(_call_event(session, provider, request, completion, ok, session.clock.now() - started,
                                          billed if isinstance(billed, Usage) else None))
        _report_health(session, request.to, ok, error if isinstance(error, Exception) else None)
        if event.unknown and session.budget_usd is not None:
            session.abort(f"the budget of {dollars(session.budget_usd)} cannot be kept: {provider.name} "
                          f"{provider.model or ''} sent no token usage for a call (or it was cut off), so its cost is unknown; run "
                          f"without --budget-usd, or on a server that reports usage")


def _within_bound(session: Stage, request: Request, text: str) -> str:
    """A reply cut at `REPLY_MAX_CHARS` (said in `debug.log`), so that reading it is bounded."""
    if len(text) <= REPLY_MAX_CHARS:
        return text
    session.recorder.log("warning", f"a reply of {len(text):,} characters to {request.to} was cut at "
                         f"{REPLY_MAX_CHARS:,}", beat=request.beat)
    return text[:REPLY_MAX_CHARS]


def _report_health(session: Stage, to: str, ok: bool, error: Exception | None) -> None:
    """Tell the run's call health how the call went; an actor whose provider failed for good leaves
    the scene when it can play on without it (`promptdesk.core.engine.outcome`), else the run stops."""
    if ok:
        session.health.ok(to)
    elif error is not None and (cause := session.health.fail(to, error)):
        if fatal(error) and to in session.actors and session.format.drops_unavailable_actors \
                and session.state.status != "closing" and can_play_without(session.actors, session.health, to):
            session.health.unavailable.setdefault(to, cause)
        else:
            session.abort(cause)
    elif error is not None and to in session.actors and session.format.drops_unavailable_actors \
            and session.state.status != "closing" and (cause := session.health.failing_for_good(to)):
        session.health.unavailable.setdefault(to, cause)


def _call_event(session: Stage, provider: Provider, request: Request, completion: Completion | None,
                ok: bool, elapsed: float, billed: Usage | None = None) -> CallEvent:
    """The call's record; a failed call counts what its attempts were billed (`billed`, from its error)."""
    usage = completion.usage if completion else billed
    latency = completion.latency_s if completion and completion.latency_s else elapsed
    timing = {"latency_s": round(latency, 4), "ttft_s": completion.ttft_s if completion else None}
    head = {"t": session.now(), "from": "coordinator", "target": request.to, "beat": request.beat,
            "text": f"{request.purpose} call for {request.to}", "provider": provider.name,
            "model": (completion.model if completion else None) or provider.model, "purpose": request.purpose}
    if usage is not None and not usage.reported:
        return CallEvent(**head, **timing, ok=ok, usage="unknown", input_tokens=None, output_tokens=None,
                         cache_write_tokens=None, cache_read_tokens=None, cost_usd=None)
    out_tokens = usage.output_tokens if usage else 0
    return CallEvent(
        **head, **timing, input_tokens=usage.input_tokens if usage else 0, output_tokens=out_tokens,
        cache_write_tokens=usage.cache_write_tokens if usage else 0,
        cache_read_tokens=usage.cache_read_tokens if usage else 0,
        cost_usd=cost_usd(provider.name, provider.model, usage) if usage else 0.0,
        tokens_per_s=round(out_tokens / latency, 1) if out_tokens and latency > 0 else None, ok=ok)


def failure_reason(exc: BaseException) -> str:
    """What a failed call or turn is recorded as: the provider's own message, a timeout, or the
    unexpected exception named by its type."""
    if isinstance(exc, ProviderError):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return "Response timeout"
    return redact(f"unexpected {type(exc).__name__}: {exc}")[:500]


def raised_at(exc: BaseException) -> str:
    """Where an unexpected exception was raised (its innermost frame), for `debug.log`."""
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else "unknown"


def actor_failed(session: Stage, actor: Actor, beat: int | None, exc: BaseException, **tags: object) -> str:
    """Record that `actor` could not respond: a `debug.log` entry and a `system` event naming it
    (an actor failure in the summary and in `metadata.json`). Returns the reason recorded."""
    if isinstance(exc, TimeoutError):  # the turn's own time limit: no call reported it (a call reports its failure)
        _report_health(session, actor.slug, False, exc)
    reason = failure_reason(exc)
    where = {} if isinstance(exc, (ProviderError, TimeoutError)) else {"where": raised_at(exc)}
    session.recorder.log("error", f"{actor.slug} unable to respond", beat=beat, error=reason, **where,
                         **{k: v for k, v in tags.items() if k in ("session_id", "round", "call_id")})
    session.say("system", f"{actor.name} unable to respond", target=actor.slug, reason=reason, beat=beat, **tags)
    cause = session.health.unavailable.get(actor.slug)
    if cause is not None and actor.slug not in session.health.announced:
        session.health.announced.add(actor.slug)
        session.say("system", f"{actor.name} leaves the scene: {cause}. The scene goes on without {actor.name}.",
                    about=actor.slug, reason=UNAVAILABLE, error=cause, beat=beat)
    session.announce_stop()
    return reason


async def play_turn(session: Stage, actor: Actor, beat: int, *, timeout_s: float | None = None) -> SpeakEvent | None:
    """Play one turn for `actor`; returns the recorded speech, or None when the actor failed."""
    user_text, items = actor.take_inbox(beat, session.state.max_beats)
    try:
        request = actor.request(user_text, beat)
        parsed, normalised, tries = await session.clock.wait_for(_ask_until_well_formed(session, actor, request),
                                                                 timeout_s)
        return _record(session, actor, beat, parsed, user_text, items, normalised, tries)
    except RecordingError:
        raise
    except Exception as exc:  # noqa: BLE001 - any fault is this actor's failed turn, never a lost one
        actor.inbox = items + actor.inbox
        actor_failed(session, actor, beat, exc)
        return None


def addressable(session: Stage) -> dict[str, str]:
    """Every way a speech's `TO:` may name a cast member (display name, slug, and a short name no other
    member answers to, as sequential turns read it: `TO: Ann` is Ann Lee) to its display name. A short
    name is the given name after any title and the title with the surname (`Eva` and `Prof. Brandt`
    for Prof. Eva Brandt); a title alone is no one's name, and a short name two members share (`Eva`
    with Eva Brandt in the cast too) names neither."""
    names = {key: actor.name for actor in session.actors.values() for key in (actor.slug, actor.name)}
    taken = {key.casefold() for key in names}
    shorts: dict[str, tuple[str, set[str]]] = {}
    for actor in session.actors.values():
        for short in {given_name(actor.name), spoken_name(actor.name)} - {"", actor.name}:
            shorts.setdefault(short.casefold(), (short, set()))[1].add(actor.name)
    for folded, (short, members) in shorts.items():
        if len(members) == 1 and folded not in taken:
            names[short] = next(iter(members))
    return names


async def _ask_until_well_formed(session: Stage, actor: Actor, request: Request) -> tuple[ParsedTurn, str, int]:
    """Ask, then correct at most twice (never a refusal); what stays malformed is salvaged, never promoted
    to speech. Returns the parsed turn, its normalised form and how many corrections were asked.

    Under `protocol: json` the request carries the turn's JSON schema and the reply is read by
    `promptdesk.core.protocol.structured` into the same parsed turn; what stays malformed keeps nothing."""
    cast: dict[str, str] = {}  # filled when the first reply is read: at fifty actors, not before each request leaves
    structured = actor.provider.protocol == "json"
    if structured:
        others = [a.name for a in session.actors.values() if a.slug != actor.slug]
        request = request.model_copy(update={"json_schema": turn_schema(others)})
    read = (lambda text: parse_json_turn(text, cast)) if structured else (lambda text: parse_turn(text, cast))

    def parse(completion: Completion) -> ParsedTurn:
        if not cast:
            cast.update(addressable(session))
        return _cut_short(read(completion.text), completion, request)

    completion = await call(session, actor.provider, request, stream_as=actor.slug)
    parsed = parse(completion)
    tries = 0
    while not parsed.well_formed and tries < MAX_CORRECTIONS and not completion.refusal:  # a refusal is its answer
        tries += 1
        session.say("correct", f"Asked {actor.name} to reformat ({'; '.join(parsed.problems)})",
                    target=actor.slug, beat=request.beat)
        prompt = JSON_CORRECTION_PROMPT.format(problems="; ".join(parsed.problems)) if structured else CORRECTION_PROMPT
        request = actor.correction(request, completion.text, prompt)
        completion = await call(session, actor.provider, request, stream_as=actor.slug)
        parsed = parse(completion)
    if not parsed.well_formed:
        parsed = _cut_short(salvage_json(completion.text) if structured else salvage(completion.text, cast),
                            completion, request)
        kept = "speech kept" if parsed.speech else "no well-formed speech: silent"
        session.recorder.log("warning", f"{actor.slug} output salvaged after {tries} corrections ({kept})",
                             beat=request.beat, problems="; ".join(parsed.problems), raw=completion.text)
    if parsed.reasoning:
        session.recorder.log("info", f"{actor.slug}'s reply opened with a reasoning preamble of {len(parsed.reasoning):,} "
                             "characters: private, shown in its thinking pane as it streamed, not re-sent",
                             beat=request.beat, reasoning=parsed.reasoning)
    speech_raw = parsed.speech.raw if parsed.speech else "[SILENT]"
    normalised = f"<thinking>{parsed.thinking or ''}</thinking>\n<speech>{speech_raw}</speech>"
    return parsed, normalised, tries


def _cut_short(parsed: ParsedTurn, completion: Completion, request: Request) -> ParsedTurn:
    """A malformed reply that stopped at its token limit, that the model refused, or that asked to call
    a tool, says so among its problems (the correction and the silence then name the cause, not only
    an unclosed tag)."""
    if parsed.well_formed or not (completion.truncated or completion.refusal or completion.unoffered_tool
                                  or completion.reasoning_only):
        return parsed
    causes = ((f"the reply stopped at its token limit ({request.max_tokens} tokens)",) if completion.truncated else ()) + \
        (("the model refused to answer (its words are in debug.log)",) if completion.refusal else ()) + \
        ((f"the model asked to call a tool ({completion.unoffered_tool}); none is offered: answer in text",)
         if completion.unoffered_tool else ()) + \
        (("the server sent only reasoning, apart from an empty reply (reasoning_content): serve the model with its "
          "reasoning off, or play a model that does not reason",) if completion.reasoning_only else ())
    return replace(parsed, problems=(*parsed.problems, *causes))


def _record(session: Stage, actor: Actor, beat: int, parsed: ParsedTurn, user_text: str,
            items: list[str], normalised: str, tries: int) -> SpeakEvent:
    """Record thinking and speech; a turn without a well-formed speech is recorded as silent, its
    thinking kept on the record all the same (the actor's thread keeps it, and re-sends it), and
    its `system` line says how many corrections were asked (none for a refusal)."""
    s = parsed.speech
    if parsed.thinking:
        session.emit(ThinkEvent(t=session.now(), **{"from": actor.slug}, text=parsed.thinking, beat=beat))
    if s is None:
        asked = f"after {tries} correction{'s' * (tries != 1)}" if tries else "and no correction asked"
        session.say("system", f"{actor.name} silent this turn: no well-formed <speech> {asked} "
                    f"({'; '.join(parsed.problems)})", target=actor.slug, beat=beat,
                    reason=SILENCED)
        s = Speech("silent", "", "")
    elif s.action == "speak" and not s.content.strip() and not s.nonverbal and not s.closes_scene:
        s = replace(s, action="silent", content="")  # no words and no gesture: nothing was said
    speech = SpeakEvent(t=session.now(), **{"from": actor.slug}, text=s.content, beat=beat, action=s.action,
                        target=s.target, tone=s.tone, nonverbal=s.nonverbal, interrupt_after=s.interrupt_after,
                        raw=s.raw, closes_scene=s.closes_scene or None)
    session.emit(speech)
    own = speech_line(actor.name, speech) if speech.action != "silent" else None
    actor.remember(user_text, items, normalised, own)
    return speech
