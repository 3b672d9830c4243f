"""The offline improviser: a deterministic, seeded stand-in for a model. It is not a language model.

It reads only the request (the briefing in the system prompt, the thread in the messages) and
assembles an answer in the full protocol from a grammar (`scene_rules`, `grammar`) filled with the
request's own words (`material`: the scene, the character's perspective and profile) and what the
request says happened (`story`: world events, director's notes, the goal's acts): thinking, speech
with headers, silences, interruptions, reactions, a natural close, journals and coordinator
decisions, and an evaluator's scores where a rule can derive them. The same seed and the same request
always give the same answer.

The shared voice lives here (scene turns, corrections, journals, judges) and `provider` puts it
behind the provider interface; each format's own part lives in its format and is registered into
`PLAYERS` by `promptdesk.core.formats.registry`. May import `promptdesk.core.providers`, `promptdesk.core.protocol`, `promptdesk.core.clock`
and `promptdesk.core.errors`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from promptdesk.core.errors import ProviderError
from promptdesk.core.improv.briefing_reader import read_briefing
from promptdesk.core.improv.correction import malform, reformat
from promptdesk.core.improv.dice import rng_for
from promptdesk.core.improv.evaluator import evaluate
from promptdesk.core.improv.journal import write_journal
from promptdesk.core.improv.judge import DECISION_ASK, VERDICT_ASK, judge, verdict
from promptdesk.core.improv.scene_turn import play_turn
from promptdesk.core.providers.base import Request

DISCLAIMER = ("The offline improviser is not a language model: it is a deterministic, seeded improviser "
              "that assembles lines from the character's profile and the scene.")

Player = Callable[[Request, int, float], str]


def improvise(request: Request, seed: int = 0, malformed_rate: float = 0.0) -> str:
    """The improviser's whole answer to one request."""
    player = PLAYERS.get(request.purpose)
    if player is None:
        raise ProviderError(f"the offline improviser does not play purpose {request.purpose!r} yet",
                            retryable=False)
    return player(request, seed, malformed_rate)


def request_rng(request: Request, seed: int, *extra: str) -> random.Random:
    """The generator for one request: seed, addressee, purpose, system prompt and every message."""
    parts = [request.to, request.purpose, request.system]
    parts += [f"{m.role}:{m.content}" for m in request.messages]
    return rng_for(seed, *parts, *extra)


def _turn(request: Request, seed: int, malformed_rate: float) -> str:
    rng = request_rng(request, seed)
    brief = read_briefing(request.system, request.messages, request.to, request.beat)
    answer = play_turn(brief, seed, rng)
    return malform(answer, rng) if malformed_rate and rng.random() < malformed_rate else answer


def _correct(request: Request, seed: int, malformed_rate: float) -> str:
    previous = next((m.content for m in reversed(request.messages) if m.role == "assistant"), "")
    fixed = reformat(previous) if previous else None
    return fixed or _turn(request, seed, 0.0)


def _journal(request: Request, seed: int, malformed_rate: float) -> str:
    brief = read_briefing(request.system, request.messages, request.to, request.beat)
    return write_journal(brief, request_rng(request, seed))


def _judge(request: Request, seed: int, malformed_rate: float) -> str:
    """A decision after a beat, or the goal verdict at close when that is what the prompt asks for."""
    if VERDICT_ASK in request.system and DECISION_ASK not in request.system:
        return verdict(request.system, request.messages)
    return judge(request.system, request.messages, request_rng(request, seed))


def _evaluate(request: Request, seed: int, malformed_rate: float) -> str:
    """Scores derived by rule from the record, unknown for the rest (`promptdesk.core.improv.evaluator`)."""
    return evaluate(request)


PLAYERS: dict[str, Player] = {"turn": _turn, "correct": _correct, "journal": _journal, "judge": _judge,
                              "evaluate": _evaluate}
"""The improviser's parts by request purpose: the shared voice here; each format adds its own when
`promptdesk.core.formats.registry` registers it."""

