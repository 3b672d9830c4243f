"""The offline improviser read as a user reads its roundtables and collaborations (qa13): properties
over several seeds and inputs of our own, never a wording the improviser produces."""

from __future__ import annotations

import re

import pytest
import yaml

from promptdesk.core.formats.collaborate.drafts import read_ask, revise
from promptdesk.core.formats.roundtable.improv_facts import stances
from promptdesk.core.formats.roundtable.improv_participant import participate
from promptdesk.core.improv.dice import rng_for
from promptdesk.core.improv.voice import self_trait
from promptdesk.core.providers.base import ChatMessage, Request

SEEDS = range(12)

PROFILE = """# Tomasz Wirth - Head Chef

## Personality
- Honest with the kitchen, once he trusts the owner
- Proud of his menu; takes a complaint about a dish as a complaint about himself
- Uses the slow, careful voice he keeps for new cooks, and knows it calms them
- Rubs his jaw when he is about to give way
- When pressed: changes the subject to the practical (the stock, the fish, the ovens)
"""


def participant_request(topic: str, *, previous: dict | None = None, phase: str = "discussion",
                        profile: str = PROFILE, name: str = "Tomasz Wirth", to: str = "tomasz") -> Request:
    facts = {"round": 2 if previous else 1, "topic": topic, "phase": phase, "phase_goal": "",
             "question": f"Where do you stand on this: {topic}", "focus": "", "previous_synthesis": previous}
    user = f"ROUND\n\n```yaml\n{yaml.safe_dump(facts, sort_keys=False)}```\n\nAnswer with exactly one YAML block."
    system = f"You are {name}, one participant at a roundtable discussion.\n\n## WHO YOU ARE\n{profile}"
    return Request(to=to, purpose="participant", system=system, messages=[ChatMessage(role="user", content=user)])


def answer(request: Request, seed: int) -> dict:
    return yaml.safe_load(participate(request, seed, 0.0).split("```yaml\n", 1)[1].split("```", 1)[0])


TOPICS = ("Should the bakery launch a sourdough subscription in March?",
          "Should the clinic hire two more nurses before winter?", "Should the shop cut its opening hours on Sundays?",
          "Should our firm appeal the ruling in the Carter tenancy case?",
          "Should the council cut the library budget by a fifth?")


@pytest.mark.parametrize("topic", TOPICS)
def test_a_rationale_says_the_characters_traits_as_i_with_none_of_their_pronouns_left(topic):
    """A he-character's traits are said as `I`: none of his own `he`/`his`/`him`/`himself` is left, no
    `my` stands where a pronoun object did (`letting my down`), and a comma inside a noun phrase or
    inside brackets does not start a new `I'm ...` clause."""
    for seed in SEEDS:
        said = answer(participant_request(topic), seed)["rationale"]
        assert not re.search(r"\b(?:he|his|him|himself)\b", said), said
        assert not re.search(r"\bmy\s+(?:down|up|out|off)\b", said), said
        assert not re.search(r",\s*I'm\s+(?:careful|the)\b|\(.*\bI'm\b.*\)", said), said


@pytest.mark.parametrize("trait, pronoun", [
    ("Uses the slow, careful voice she keeps for new cooks, and knows it calms them", "she"),
    ("Keeps the old, worn notebook in his apron, and feels lost without it", "he"),
    ("When pressed: changes the subject to the practical (the stock, the fish, the ovens)", "he"),
    ("When tired: snaps at whoever is near him", "he"),
    ("Dislikes being hurried, especially by people who mean well", "she"),
    ("Speaks quickly, usually when he is nervous", "he")])
def test_a_trait_is_one_first_person_sentence(trait, pronoun):
    """A profile bullet said as `I`: a comma between a noun's adjectives or inside brackets starts no
    new clause, a verb after `and` agrees with `I`, and the character's own pronouns are all `I`/`me`/`my`
    (inside a `When ...:` bullet too)."""
    said = self_trait(trait, pronoun)
    assert said.startswith(("I ", "When I")), said
    assert not re.search(rf"\b(?:{pronoun}|his|him|himself|herself|her)\b", said), said
    assert not re.search(r",\s*I'm\b|\band (?:knows|feels)\b|\bnear my\b", said), said
    inside = re.search(r"\(.*\)", trait)
    assert not inside or inside.group(0) in said, said


@pytest.mark.parametrize("topic", TOPICS)
def test_a_rationale_is_about_what_would_be_done_not_about_who_would_do_it(topic):
    """`Should the bakery launch X?`: the reason weighs X; the one who would act is not the object
    (never `a trial of the bakery`, `getting the bakery wrong`)."""
    actor = re.match(r"Should (the \w+|our \w+) ", topic).group(1)
    for seed in SEEDS:
        said = answer(participant_request(topic), seed)["rationale"].split(". ")[0]
        assert actor.lower() not in said.lower(), said


@pytest.mark.parametrize("topic", TOPICS)
def test_a_participant_keeps_its_position_unless_something_moved_it_and_then_says_so(topic):
    """Within a phase, a participant holds last round's position unless the synthesis gave it a reason
    (a consensus, a split to meet in the middle); a changed position opens its rationale with why."""
    options = stances(topic)
    moved = kept = 0
    for seed in SEEDS:
        for held in range(3):
            previous = {"synthesis": "split", "consensus": [], "next_action": "continue",
                        "conflicts": [{"topic": "discussion: how to proceed",
                                       "positions": {"tomasz": options[held], "ana": options[(held + 1) % 3]}}]}
            first = answer(participant_request(topic, previous=previous), seed)
            now = options.index(first["position"])
            if now == held:
                kept += 1
                continue
            moved += 1
            assert now == 1, (held, first)  # a split moves one to the middle, never further out
            opening = first["rationale"].split(". ")[0]
            assert re.search(r"\b(?:moved|changed|come round)\b", opening), first["rationale"]
    assert kept and moved


POEMS = ("Write a short poem about the first frost", "Write a poem of three stanzas about the harbour at night",
         "Compose a poem about my grandmother's kitchen")


@pytest.mark.parametrize("goal", POEMS + ("Write a 2-paragraph fairy tale about a badger who counts stars",
                                          "Write a speech for my sister's wedding"))
def test_a_revision_adds_its_close_at_a_sentence_end_and_never_twice(goal):
    """Revising a piece of writing adds a close where a sentence ends (not after `;`, not in the middle
    of a sentence that runs onto the next line), and never the same close twice in one draft."""
    from promptdesk.core.formats.collaborate.drafts import first_draft

    ask = read_ask(goal)
    for seed in SEEDS:
        rng = rng_for(seed, "qa13", goal)
        draft = first_draft(ask, rng)
        for _ in range(4):
            draft, _change = revise(draft, ask, rng)
            assert not re.search(r"[;:,]\s*,|[.!?],", draft), draft  # `lies;, and still`
            assert not re.search(r"[a-z]\.\s+[a-z]", draft), draft  # `say, even now. what the morning says`
        closes = re.findall(r", ([a-z][a-z ]+)[.!?]", draft)
        assert len(closes) == len(set(closes)), draft


@pytest.mark.parametrize("topic", TOPICS)
def test_a_synthesis_calls_no_position_the_tables_when_none_leads(topic):
    """A synthesis says a position is favoured only when it has more holders than any other; on a tie
    (2-2, 1-1-1) it says there is no majority and names every position with who holds it, and the
    recommendation says it is a tie. A lead is still reported as such."""
    import random

    from promptdesk.core.formats.roundtable.improv_facilitator import synthesis

    options = stances(topic)
    names = ["Ana", "Bo", "Cy", "Di", "Ed"]
    for seed in SEEDS:
        rng = random.Random(seed)
        size = rng.choice((2, 3, 4, 5))
        picks = [rng.randrange(3) for _ in range(size)]
        answers = {n.lower(): {"name": n, "position": options[p], "confidence": round(rng.random(), 2)}
                   for n, p in zip(names, picks)}
        counts = sorted((picks.count(p) for p in set(picks)), reverse=True)
        said = synthesis({"round": 1, "phase": {"name": "discussion", "min_rounds": 1}, "answers": answers})
        if len(counts) > 1 and counts[0] == counts[1]:
            assert "favour" not in said["synthesis"] and "no majority" in said["synthesis"], said
            assert all(options[p] in said["synthesis"] for p in picks), said
            assert "tied" in said["recommendation"], said
        else:
            assert f"{counts[0]} of {size} favour" in said["synthesis"], said


PLANS = ("Plan the product launch of our note-taking app in 4 steps", "Outline a 6-step plan for moving house",
         "Collaborate to outline a 5-step plan for a school bake sale. Keep it short.")
WRITINGS = ("Write a 2-paragraph fairy tale about a badger who counts stars", "Write a speech for my sister's wedding",
            "Write a letter to the landlord about the broken boiler")


def collaboration_request(goal: str, draft_by: str, draft: str, task: str) -> Request:
    body = "\n".join("    " + line for line in draft.splitlines())
    context = (f"GOAL: {goal}\n\n[{draft_by}] A first draft. (improvised offline)\n{body}\n"
               f"[router → claude] {task}\n\nRound 2 of 6.")
    system = "Your name is `claude`. Participants: gpt, claude (you work with gpt)."
    return Request(to="claude", purpose="envelope", system=system, messages=[ChatMessage(role="user", content=context)])


@pytest.mark.parametrize("goal", PLANS + WRITINGS)
def test_a_revision_does_what_the_task_handed_over_asks_less_or_more(goal):
    """A task handed over that asks for less (`cut`, `tighten`, `trim`) gets a shorter draft, in every
    seed; one that asks for something concrete gets a changed one that is not cut down."""
    from promptdesk.core.formats.collaborate.drafts import first_draft
    from promptdesk.core.formats.collaborate.improv import envelope

    ask = read_ask(goal)
    for seed in SEEDS:
        draft = first_draft(ask, rng_for(seed, "first", goal))
        for task, shorter in (("Trim it by a third and hand it back.", True), ("Tighten the ending, please.", True),
                              ("Make the vaguest part concrete.", False)):
            reply = envelope(collaboration_request(goal, "gpt", draft, task), seed)["message"]
            revised = reply.split("\n", 1)[1]
            if shorter:
                assert len(revised) < len(draft), (task, draft, revised)
            else:
                assert "cut" not in reply.split("\n", 1)[0].lower(), reply
            assert revised.strip() and revised != draft


@pytest.mark.parametrize("goal", PLANS + WRITINGS + POEMS)
def test_a_draft_asked_to_be_cut_never_grows(goal):
    """Asked again and again to cut, a draft gets shorter or stays as it is: never longer."""
    from promptdesk.core.formats.collaborate.drafts import first_draft

    ask = read_ask(goal)
    for seed in SEEDS:
        rng = rng_for(seed, "cuts", goal)
        draft = first_draft(ask, rng)
        for task in ("Cut one word in three.", "Tighten the ending.", "Trim it and hand it back.") * 3:
            before, (draft, _change) = draft, revise(draft, ask, rng, task)
            assert len(draft) <= len(before), (task, before, draft)


@pytest.mark.parametrize("goal", PLANS)
def test_a_plan_step_set_on_the_day_is_not_given_a_deadline_before_it(goal):
    from promptdesk.core.formats.collaborate.drafts import STEPS

    ask = read_ask(goal)
    every = "\n".join(f"{i}. {step.format(s=ask.subject)}" for i, step in enumerate(STEPS, 1))
    for seed in SEEDS:
        rng, draft = rng_for(seed, "days", goal), every
        for _ in range(len(STEPS)):
            draft, _ = revise(draft, ask, rng)
        assert not re.search(r"(?:on the day|afterwards)[^\n]*\(by Friday\)", draft, re.I), draft


@pytest.mark.parametrize("topic, thing", [("Should the old pier be rebuilt?", "the old pier"),
                                          ("Should the bakery cut its delivery fees next month?", "the delivery fees"),
                                          ("Should the council repave the market square?", "the market square")])
def test_a_rationale_weighs_the_matter_the_question_names(topic, thing):
    """The matter a reason weighs is what the question would change: a passive question's subject
    (`the old pier` be rebuilt), a possessive's object (`its opening hours`), a verb's object."""
    for seed in SEEDS:
        said = answer(participant_request(topic), seed)["rationale"]
        assert thing in said.lower(), said


@pytest.mark.parametrize("other", ["gpt", "maria-stern", "powershell-5.1-expert"])
def test_a_revision_of_the_other_participants_draft_calls_it_theirs_not_by_slug(other):
    """The reply is said to the other participant: their draft is `your draft`; no slug is read out."""
    from promptdesk.core.formats.collaborate.drafts import first_draft
    from promptdesk.core.formats.collaborate.improv import envelope

    for goal in PLANS + WRITINGS:
        for seed in SEEDS[:4]:
            draft = first_draft(read_ask(goal), rng_for(seed, "first", goal))
            request = collaboration_request(goal, other, draft, "Hand it back when done.")
            request = request.model_copy(update={"system": f"Your name is `claude`. Participants: {other}, claude (you work with {other})."})
            head = envelope(request, seed)["message"].split("\n", 1)[0]
            assert other not in head and "your draft" in head.lower(), head


@pytest.mark.parametrize("goal, matter", [
    ("Draft a legal brief arguing that the tenant's deposit must be returned", "deposit"),
    ("Write an essay explaining why the city should keep its night buses", "night buses"),
    ("Draft a quarterly marketing budget of four items for our bakery", "our bakery"),
    ("Write a blurb announcing the launch of our note-taking app", "our note-taking app")])
def test_a_writing_draft_is_about_the_matter_its_goal_names(goal, matter):
    """The draft is about what the goal argues or names (`arguing that X`, `explaining why X`, `for our
    bakery`), never about `this`, nor about a count (`four items`), nor missing its `our`."""
    from promptdesk.core.formats.collaborate.drafts import first_draft

    for seed in SEEDS:
        draft = first_draft(read_ask(goal), rng_for(seed, "matter", goal))
        assert matter in draft.lower() and "four items" not in draft, draft
        assert not re.search(r"\b(?:with|about|on) this\b", draft), draft


@pytest.mark.parametrize("strategy", ["disney", "debate", "free"])
async def test_a_roundtable_summary_says_who_the_offline_improviser_played(run_scene, strategy):
    """summary.md is read on its own: when the offline improviser played the table, it says so and
    names the facilitator and every participant, so its recommendation is not taken for a model's."""
    from helpers import make_scene

    scene = make_scene(format="roundtable", roundtable={"topic": "Should the bakery cut its delivery fees next month?",
                                                        "strategy": strategy, "max_rounds": 3})
    run = await run_scene(scene, isolation="a", coordinator="C", on_escalate="conclude")
    summary = (run.dir / "summary.md").read_text()
    line = next(x for x in summary.splitlines() if x.startswith("- Improvised offline"))
    names = yaml.safe_load((run.dir / "session.yaml").read_text())["participants"]
    assert "the facilitator" in line and all(p["name"] in line for p in names), line
