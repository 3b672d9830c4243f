"""The improviser as a roundtable participant: a position (one of three, worded for the topic), a
rationale in the character's own terms (a reason about the topic, one of their traits), and a
confidence - pulled by the phase, the strategy role and the character's temperament (the forceful
lean to going ahead, the anxious to holding off, so a table's participants differ), converging now
and then on the previous synthesis's consensus. Deterministic per seed; every rationale says it was
improvised."""

from __future__ import annotations

import random
import re

from promptdesk.core.improv.dice import rng_for
from promptdesk.core.formats.roundtable.improv_facts import _ASKING, as_block, facts, last_user, phase_lean, stances
from promptdesk.core.improv.scene_words import topics
from promptdesk.core.improv.voice import self_trait
from promptdesk.core.improv.temperament import read_temperament
from promptdesk.core.providers.base import Request

REASONS = (
    ("waiting on {o} costs us momentum", "people are ready for {o} now", "a bold first version of {o} teaches us the most"),
    ("a trial of {o} lets us learn without betting everything", "we can undo a small step on {o} cheaply",
     "the team can absorb {o} a piece at a time"),
    ("we do not yet know what {o} would break", "getting {o} wrong costs more than waiting",
     "nobody has owned the risks of {o} yet"),
)
TIES = (("So I say go.", "That is why I would start tomorrow.", "Momentum matters more to me than polish."),
        ("So: a trial, with a date to look at it again.", "That is why I want one small step first.",
         "I would rather learn than guess."),
        ("So I would wait.", "That is why I want the risks written down first.", "I would rather be late than wrong."))
RISKS = ("there is an open security question nobody has answered", "legal has not seen this yet",
         "one dependency looks blocking for the first release")
_DOING = frozenset("should shall would could can will must do does".split())
"""Asking words after which the subject is the one who would act (`Should the team move X?`)."""
NOTICE = "(improvised offline)"
"""Said with every rationale: the improviser claims no judgement of its own."""


def participate(request: Request, seed: int, malformed_rate: float) -> str:
    """One participant's YAML answer to the round's question."""
    info = facts(request)
    name = _name(request.system) or request.to
    temper = read_temperament(request.system.split("## WHO YOU ARE", 1)[-1])
    rng = rng_for(seed, "participant", request.to, request.system, last_user(request))
    options = stances(str(info.get("topic") or ""))
    lean = _leaning(temper)
    index, why = _stance(info, name, seed, temper.warm, lean, rng, last_user(request), options)
    before = _held_before(info, request.to, options)
    if before is not None and why == "own" and not _new_phase(info):
        index = before  # nothing new was heard: one keeps one's position, rather than drift without a reason
    stance = options[index]
    rationale = _rationale(info, index, temper.traits, rng, temper.pronoun)
    if before is not None and index != before:
        rationale = f"{_moved(why if not _new_phase(info) or why != 'own' else 'phase', info)} {rationale}"
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


def _leaning(temper) -> int:
    """Which way the character's temperament tilts them: the forceful go, the anxious hold off."""
    tilt = temper.anxious + 0.5 * temper.quiet - temper.forceful
    return 1 if tilt >= 0.5 else -1 if tilt <= -0.5 else 0


def _held_before(info: dict, slug: str, options: tuple[str, ...]) -> int | None:
    """The position this participant held last round, as the previous synthesis records it (the
    consensus, or their entry in a conflict); None in an opening round or when it is not one of ours."""
    synthesis = info.get("previous_synthesis") or {}
    held = [c.get("positions", {}).get(slug) for c in synthesis.get("conflicts") or [] if isinstance(c, dict)]
    held += list(synthesis.get("consensus") or [])
    return next((options.index(p) for p in held if p in options), None)


def _new_phase(info: dict) -> bool:
    return (info.get("previous_synthesis") or {}).get("next_action") == "phase"


def _moved(why: str, info: dict) -> str:
    """The sentence a changed position opens with: what moved it since last round."""
    if why == "consensus":
        return "I have come round to what the table agreed last round."
    if why == "earlier":
        return "The answer given before mine has moved me."
    if why == "middle":
        return "We are still split, so I have moved towards the middle ground."
    phase = str(info.get("phase") or "this").strip()
    return f"The {phase} phase asks a different question, so my answer has changed."


def _stance(info: dict, name: str, seed: int, warm: float, lean: int, rng: random.Random, text: str,
            options: tuple[str, ...]) -> tuple[int, str]:
    """The phase's pull, the character's own leaning (stable through a phase), and convergence (only
    once a synthesis has been heard: an opening round states one's own position): the index of the
    position taken, and why (`consensus`, `earlier`, `middle` or `own`)."""
    role = (info.get("role") or {}).get("name", "")
    pull = {"for": 0, "against": 2}.get(role, phase_lean(info))
    own = rng_for(seed, "stance", name, str(info.get("topic")), str(info.get("phase"))).choice((-1, 0, 0, 1))
    index = max(0, min(2, pull + (own + lean if not role else 0)))
    synthesis = info.get("previous_synthesis") or {}
    agreed = [options.index(c) for c in synthesis.get("consensus") or [] if c in options]
    if agreed and not role and rng.random() < 0.5 + 0.3 * warm:
        return agreed[0], "consensus"
    earlier = re.findall(r"^- [^:]+: (.+?) \(", text.split("ANSWERS GIVEN BEFORE YOURS", 1)[-1], re.M) \
        if "ANSWERS GIVEN BEFORE YOURS" in text else []
    if earlier and earlier[-1] in options and not role and synthesis and rng.random() < 0.4:
        return options.index(earlier[-1]), "earlier"
    if synthesis.get("conflicts") and not role and rng.random() < 0.3 * (1 + warm):
        return 1, "middle"
    return index, "own"


def _rationale(info: dict, index: int, traits: tuple[str, ...], rng: random.Random, pronoun: str = "") -> str:
    """Why, in the character's own terms: a reason about the topic's object, one of their traits, a tie."""
    topic = str(info.get("topic") or "this")
    motion = re.sub(r"^\s*this house (?:would|will|should)\s+", "", topic, flags=re.I).strip()
    # `Should the team move X?`: the reason is about X, not about the team that would act
    asked = _ASKING.match(motion)
    doer = asked.group(1).lower() if asked else ""
    act = re.sub(r"\b(?:its|their)\b", "the", _ASKING.sub("", motion, count=1))  # `cut its budget`: the budget
    if re.match(r"^(?:[\w'-]+\s+)?be\b", act) or (asked and asked.group(0).split()[0].lower() not in _DOING):
        doer = ""  # `Should the old pier be rebuilt?`, `Is the launch date realistic?`: the subject is the matter
    found = topics(act) or [t for t in topics(motion) if not doer or not re.match(
        rf"(?:{re.escape(doer)}|the {re.escape(doer.split()[-1])})\b", t, re.I)]  # never the doer (`the clinic hire`)
    thing = found[0] if found else "this"
    reason = rng.choice(REASONS[index]).format(o=thing)
    trait = self_trait(rng.choice(traits), pronoun) if traits else ""  # `once he feels` -> `once I feel`
    risk = f" Also, {rng.choice(RISKS)}." if (str(info.get("phase")) == "rebuttal" or phase_lean(info) == 2) \
        and rng.random() < 0.25 else ""
    return f"{reason[:1].upper()}{reason[1:]}. {rng.choice(TIES[index])}{risk} {trait} {NOTICE}".replace("  ", " ")
