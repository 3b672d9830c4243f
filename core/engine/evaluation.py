"""The evaluation step: after the close (and the journal step), an evaluator scores each actor on a rubric.

A scene with `evaluate: sotopia` is evaluated at the end of its run, like the journal step: for each
evaluator of the session (the scene's `evaluator:`, else its judge, else its provider; a benchmark sweep
may give several), one request per actor (`promptdesk.core.protocol.evaluation`), constrained to the
rubric's JSON schema where the provider can constrain its output (OpenAI's strict `response_format`,
Anthropic's forced tool). An answer that cannot be read in full (not JSON, a dimension missing, a score
out of range or not a whole number) is asked for once more with what was wrong; what is still wrong is
recorded as unknown, with why, and a score out of range is kept apart (`answered`), never clamped.

Each actor's evaluation is one `evaluation` event (`from: evaluator`, `target`: the actor), gathered into
`evaluation.json` (`promptdesk.core.record.evaluation_file`). The calls are recorded, priced and
budgeted like any other (`prompts.jsonl`, `call` events with purpose `evaluate` and no beat: they add
nothing to any beat); with `--budget-usd` the actors are evaluated one at a time and the step stops,
saying so, once the budget is spent. A failed call is a `system` line naming the actor (`evaluated`),
never a lost run; `promptdesk evaluate RUN` evaluates later whatever is missing.

`score` is the step's core, shared with `promptdesk evaluate` (`promptdesk.core.experiments.evaluate`),
which records its calls into a closed run folder instead of a live session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from promptdesk.core.clock import RealClock
from promptdesk.core.engine.briefing import note_line
from promptdesk.core.errors import RecordingError
from promptdesk.core.protocol.evaluation import EVALUATOR, PURPOSE, RETRY, Episode, Member, request_text, secret_of, \
    system_text
from promptdesk.core.protocol.lines import folded, speech_line, world_event_line
from promptdesk.core.protocol.rubrics import Reading, Rubric
from promptdesk.core.providers.base import ChatMessage, Completion, Provider, Request
from promptdesk.core.providers.spec import CONSTRAINED
from promptdesk.core.record.events import OPERATOR, BaseEvent, GenericEvent, SpeakEvent
from promptdesk.core.engine.turn import call, failure_reason
from promptdesk.core.providers.pricing import dollars

if TYPE_CHECKING:
    from promptdesk.core.engine.stage import Stage

MAX_TOKENS = 4096
"""Room for seven reasonings and their scores."""
UNREAD = "the answer could not be read: "
STOPPED = "the evaluation step was stopped before its answer (`promptdesk evaluate` on the run finishes it)"
"""How an unknown score begins when the evaluator's whole answer could not be read (nothing was scored)."""
SKIPPED_AFTER = ("stop", "provider-error", "record-error")
"""Close reasons after which no evaluation is taken (a stopped or failed run is evaluated by hand)."""
Send = Callable[[Request], Awaitable[Completion]]


@dataclass
class Evaluator:
    """One evaluator of a run: the rubric, the provider that answers, and how it is named in the record."""

    rubric: Rubric
    provider: Provider
    label: str
    """`provider:model`, as the record names it (`offline:improviser` for the offline evaluator)."""
    constrained: bool = False
    """The provider takes the rubric's JSON schema (`CONSTRAINED`)."""
    timeout_s: float | None = None


def evaluator_for(rubric: Rubric, provider: Provider, spec: Any) -> Evaluator:
    """An evaluator from its provider and the spec it was built from (`ProviderSpec`)."""
    model = provider.model or getattr(spec, "model", None) or "default"
    return Evaluator(rubric, provider, f"{provider.name}:{model}", provider.name in CONSTRAINED,
                     getattr(spec, "turn_timeout_s", None))


@dataclass
class Scored:
    """One actor's evaluation: what the last answer said, and how many tries it took."""

    slug: str
    name: str
    reading: Reading
    tries: int
    first_problems: str = ""
    """What was wrong with the first answer, when it was asked for again."""
    unknown: dict[str, str] = field(default_factory=dict)


def record_lines(events: Sequence[BaseEvent], names: dict[str, str], turn_types: Sequence[str] = ()) -> tuple[str, ...]:
    """The public record as the evaluator reads it: each speech (silences aside) as it was routed (a
    format's own turns, `turn_types`, as `Name: words`), each world event and each director's note to
    everyone, in order; never any thinking."""
    lines = []
    for event in events:
        if isinstance(event, SpeakEvent) and event.action != "silent":
            lines.append(speech_line(names.get(event.from_, event.from_), event))
        elif event.type in turn_types and event.text.strip():
            lines.append(f"{folded(names.get(event.from_, event.from_))}: {folded(event.text)}")
        elif event.type == "event":
            lines.append(world_event_line(event.text))
        elif event.type == "note" and event.target is None and event.from_ == OPERATOR:
            lines.append(note_line(event.text))
    return tuple(lines)


def member(slug: str, name: str, profile: str, perspective: str) -> Member:
    return Member(slug=slug, name=name, profile=profile, perspective=perspective, secret=secret_of(profile))


async def score(send: Send, evaluator: Evaluator, episode: Episode, slug: str) -> Scored:
    """Ask `evaluator` about one cast member, once more when the answer cannot be read in full."""
    rubric = evaluator.rubric
    first = Request(to=EVALUATOR, purpose=PURPOSE, system=system_text(rubric),
                    messages=[ChatMessage(role="user", content=request_text(episode, slug))], max_tokens=MAX_TOKENS,
                    temperature=0.0, json_schema=rubric.schema() if evaluator.constrained else None)
    answer = await send(first)
    reading = rubric.read(answer.text)
    name = episode.member(slug).name
    if reading.ok:
        return _settled(Scored(slug, name, reading, 1))
    problems = reading.problem_text()
    again = first.model_copy(update={"messages": [*first.messages, ChatMessage(role="assistant", content=answer.text),
                                                  ChatMessage(role="user", content=RETRY.format(problems=problems))]})
    retried = rubric.read((await send(again)).text)
    return _settled(Scored(slug, name, retried, 2, first_problems=problems))


def _settled(scored: Scored) -> Scored:
    """Why each unknown score is unknown."""
    reading, asked = scored.reading, " (asked twice)" if scored.tries > 1 else ""
    for name, score in reading.scores.items():
        if score is not None:
            continue
        if reading.whole:
            scored.unknown[name] = f"{UNREAD}{reading.whole}{asked}"
        elif name in reading.problems:
            scored.unknown[name] = reading.problems[name] + asked
        else:
            scored.unknown[name] = "the evaluator could not tell: " + (reading.declared.get(name) or "")[:300]
    return scored


def event_of(scored: Scored, evaluator: Evaluator, t: float) -> GenericEvent:
    """The `evaluation` event of one actor's scores."""
    rubric, reading = evaluator.rubric, scored.reading
    shown = ", ".join(f"{n} {'unknown' if s is None else s}" for n, s in reading.scores.items())
    return GenericEvent(t=t, **{"from": EVALUATOR}, type="evaluation", target=scored.slug,
                        text=f"{rubric.title} by {evaluator.label} for {scored.name}: {shown}",
                        rubric=rubric.name, evaluator=evaluator.label, name=scored.name,
                        scores=dict(reading.scores), overall=rubric.overall(reading.scores),
                        reasoning=dict(reading.reasoning), unknown=dict(scored.unknown),
                        answered=dict(reading.answered), tries=scored.tries,
                        **({"first_problems": scored.first_problems} if scored.first_problems else {}))


# -- the step of a live session ------------------------------------------------------------------


def episode_of(session: Stage) -> Episode:
    """The closed scene of a live session, as the evaluator sees it."""
    scene = session.scene
    names = {slug: actor.name for slug, actor in session.actors.items()}
    cast = tuple(member(slug, actor.name, getattr(session.characters.get(slug), "profile", ""),
                        scene.perspective_for(slug)) for slug, actor in session.actors.items())
    return Episode(title=scene.title or scene.name, setting=scene.setting, prompt=scene.prompt, cast=cast,
                   lines=record_lines(session.recorder.events, names, session.format.lines.turn_types), goal=scene.goal,
                   goal_markers=tuple(scene.goal_markers))


async def evaluate_all(session: Stage, reason: str | None) -> None:
    """Evaluate every actor with every evaluator of the session (none: nothing to do); concurrently,
    or one at a time under a budget. Nothing is evaluated after a stop or a failed run."""
    evaluators: list[Evaluator] = getattr(session, "evaluators", [])
    if not evaluators or reason in SKIPPED_AFTER or session.stopped:
        return
    episode = episode_of(session)
    jobs = [(evaluator, slug) for evaluator in evaluators for slug in session.actors]
    if session.budget_usd is None:
        await asyncio.gather(*(_tracked(session, e, episode, slug) for e, slug in jobs), return_exceptions=True)
        return
    for index, (evaluator, slug) in enumerate(jobs):
        if session.stopped:
            return
        if session.state.cost_usd >= session.budget_usd:
            left = ", ".join(sorted({session.actors[s].name for _, s in jobs[index:]}))
            session.say("system", f"Evaluation skipped for {left}: the budget of {dollars(session.budget_usd)} is spent "
                        f"(${session.state.cost_usd:.4f})", reason="budget", beat=None)
            return
        await asyncio.gather(_tracked(session, evaluator, episode, slug), return_exceptions=True)


def _tracked(session: Stage, evaluator: Evaluator, episode: Episode, slug: str) -> asyncio.Task[None]:
    return session.track(asyncio.create_task(_one(session, evaluator, episode, slug)))


async def _one(session: Stage, evaluator: Evaluator, episode: Episode, slug: str) -> None:
    """One actor's evaluation; a failure is a `system` line naming it, never a lost run."""
    # A remote evaluator's time is the wall clock's, even in a run on simulated time (offline actors).
    waiter = session.clock if evaluator.provider.name == "offline" else RealClock()

    async def send(request: Request) -> Completion:
        return await waiter.wait_for(call(session, evaluator.provider, request), evaluator.timeout_s)

    def unscored(reason: str) -> None:
        session.say("system", f"The evaluator ({evaluator.label}) could not score {episode.member(slug).name}: {reason}",
                    reason="evaluation", evaluated=slug, rubric=evaluator.rubric.name, evaluator=evaluator.label, beat=None)

    try:
        scored = await score(send, evaluator, episode, slug)
        session.emit(event_of(scored, evaluator, session.now()))
    except RecordingError:
        raise
    except asyncio.CancelledError:  # a stop (Ctrl-C, a sweep's SIGTERM) cut the step: said, so it is counted
        unscored(STOPPED)
        raise
    except Exception as exc:  # noqa: BLE001 - a failed evaluation is an unscored actor, never a lost run
        reason = failure_reason(exc)
        session.recorder.log("error", f"evaluation of {slug} by {evaluator.label} failed", error=reason)
        unscored(reason)
