"""The improviser as a roundtable participant: a position (one of three stances), a rationale in the
character's own terms, and a confidence - pulled by the phase, the strategy role and the character's
temperament, converging now and then on the previous synthesis's consensus. Deterministic per seed."""

from __future__ import annotations

import random
import re

from promptdesk.core.improv.dice import rng_for
from promptdesk.core.formats.roundtable.improv_facts import PHASE_LEAN, STANCES, as_block, facts, last_user
from promptdesk.core.improv.temperament import read_temperament
from promptdesk.core.providers.base import Request

REASONS = (
    ("the upside is large and waiting costs us momentum", "people are ready for it now",
     "a bold first version teaches us the most"),
    ("a staged rollout lets us learn without betting everything", "we can reverse a small step cheaply",
     "the team can absorb it a piece at a time"),
    ("we do not yet know what it would break", "the cost of getting it wrong is higher than the cost of waiting",
     "nobody has owned the risks yet"),
)
RISKS = ("there is an open security question nobody has answered", "legal has not seen this yet",
         "one dependency looks blocking for the first release")


def participate(request: Request, seed: int, malformed_rate: float) -> str:
    """One participant's YAML answer to the round's question."""
    info = facts(request)
    name = _name(request.system) or request.to
    temper = read_temperament(request.system.split("## WHO YOU ARE", 1)[-1])
    rng = rng_for(seed, "participant", request.to, request.system, last_user(request))
    stance = _stance(info, name, seed, temper.warm, rng, last_user(request))
    rationale = _rationale(info, stance, temper.traits, rng)
    confidence = 0.55 + rng.random() * 0.35 + 0.08 * temper.forceful - 0.12 * temper.anxious
    if rng.random() < 0.03:
        confidence = 0.15 + rng.random() * 0.13
    answer = {"position": stance, "rationale": rationale, "confidence": round(min(0.98, max(0.05, confidence)), 2)}
    if malformed_rate and rng.random() < malformed_rate:
        return f'position: "{stance}\nrationale: {rationale}'
    return as_block(answer)


def _name(system: str) -> str | None:
    match = re.search(r"You are (.+?), one participant", system)
    return match.group(1) if match else None


def _stance(info: dict, name: str, seed: int, warm: float, rng: random.Random, text: str) -> str:
    """The phase's lean, the character's own leaning (stable through a phase), and convergence."""
    role = (info.get("role") or {}).get("name", "")
    lean = {"for": 0, "against": 2}.get(role, PHASE_LEAN.get(str(info.get("phase", "")), 1))
    own = rng_for(seed, "stance", name, str(info.get("topic")), str(info.get("phase"))).choice((-1, 0, 0, 1))
    stance = STANCES[max(0, min(2, lean + own))]
    synthesis = info.get("previous_synthesis") or {}
    agreed = [c for c in synthesis.get("consensus") or [] if c in STANCES]
    if agreed and not role and rng.random() < 0.5 + 0.3 * warm:
        return agreed[0]
    earlier = re.findall(r"^- [^:]+: (.+?) \(", text.split("ANSWERS GIVEN BEFORE YOURS", 1)[-1], re.M) \
        if "ANSWERS GIVEN BEFORE YOURS" in text else []
    if earlier and earlier[-1] in STANCES and not role and rng.random() < 0.4:
        return earlier[-1]
    if synthesis.get("conflicts") and not role and rng.random() < 0.3 * (1 + warm):
        return STANCES[1]
    return stance


def _rationale(info: dict, stance: str, traits: tuple[str, ...], rng: random.Random) -> str:
    index = STANCES.index(stance)
    reason = rng.choice(REASONS[index])
    topic = str(info.get("topic") or "this").rstrip("?.! ")
    trait = f" Speaking as someone {traits[0].lower().rstrip('.')}, I" if traits else " I"
    text = f"On {topic[:80]}: {reason}.{trait} would rather say it plainly now than regret it later."
    if str(info.get("phase")) in ("critic", "black", "rebuttal") and rng.random() < 0.25:
        text += f" Also, {rng.choice(RISKS)}."
    return text
