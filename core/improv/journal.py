"""The journal entry a character writes after the scene: 200-500 words, first person, no tags.

Built from what the character witnessed (quoting other people's lines and their own), what
surprised them (an interruption, a world event, silences), the goal and their own habits.
"""

from __future__ import annotations

import random

from promptdesk.core.improv.briefing_reader import Briefing
from promptdesk.core.improv.closing import closes
from promptdesk.core.improv.scene_words import place, sentences
from promptdesk.core.improv.voice import as_me, first_person, mid_sentence, self_trait

OPENINGS = ("I'm writing this while it's still fresh.", "What a day.",
            "I need to get this down before I start remembering it more kindly than it was.")
SURPRISES = ("What surprised me most was how much of it happened in the pauses.",
             "I didn't expect to feel this tired afterwards, as if I had carried something heavy.",
             "The surprise was how quickly the mood could turn, and then turn back.")
NEXT_TIME = {
    "forceful": "Next time I want to let people finish their sentences. I heard myself cut in and I didn't like it.",
    "quiet": "Next time I want to say what I think earlier, instead of waiting for a gap that never comes.",
    "warm": "Next time I should stop smoothing things over so fast; some of that tension needed to be felt.",
    "anxious": "Next time I want to walk in steadier, and trust that I'm allowed to take up room.",
}
PADDING = (
    "I keep replaying the small moments: the looks, the half-finished sentences, the way the room sounded.",
    "It's strange how a conversation can be about one thing on the surface and something else underneath.",
    "I don't think anyone left with everything they wanted, but I think we left with something real.",
    "Some of what I said came out sharper than I meant, and some of it not sharp enough.",
    "I want to remember how it felt when the tension finally broke, even a little.",
    "There were moments I wanted to say more and didn't, and I'm still not sure that was wise.",
    "Writing it down helps. It puts the day in order, even if my feelings about it are not.",
    "Tomorrow I'll see whether any of it holds. Words are easy; the week after is what counts.",
    "I was more nervous than I let on, and I think it showed in my hands if nowhere else.",
)


def write_journal(brief: Briefing, rng: random.Random) -> str:
    """A diary entry in the character's own voice about the scene that just ended."""
    others = list(brief.others) or sorted({line.speaker for line in _spoken(brief) if not line.own})
    who = _join(others) if others else "no one but myself"
    first = [rng.choice(OPENINGS), f"Today I was in {place(brief.setting)} with {who}."]
    if brief.perspective:
        first.append("Going in, this was on my mind. " + sentences(first_person(brief.perspective), 1))
    said = [f"{line.speaker} said, {_quote(line.text)}" for line in _spoken(brief) if not line.own]
    mine = [f"{rng.choice(('I told them,', 'I said,', 'At one point I said,'))} {_quote(line.text)}"
            for line in brief.own if line.text]
    picked = rng.sample(said, min(3, len(said))) + mine[-2:]
    second = picked or ["Hardly anything was said out loud, which says enough on its own."]
    third = [_surprise(brief, rng)]
    if ending := next((ln for ln in reversed(_spoken(brief)) if closes(ln.text, ln.nonverbal)), None):
        third.append(f"It ended when {ending.speaker} said {_quote(ending.text)}")
    if brief.goal:
        goal = mid_sentence(as_me(brief.goal.rstrip("."), brief.name, brief.temperament.pronoun), (brief.name, *brief.others))
        third.append(f"What we were there for, as I saw it going in: {goal}.")
    traits = brief.temperament.traits
    if traits:
        third.append(f"{self_trait(rng.choice(traits), brief.temperament.pronoun)} It showed today.")
    fourth = [NEXT_TIME[_leaning(brief)]]
    paragraphs = [first, second, third, fourth]
    pad = list(PADDING)
    rng.shuffle(pad)
    while _count(paragraphs) < 230 and pad:
        paragraphs[rng.choice((0, 2, 3))].append(pad.pop())
    while _count(paragraphs) > 480 and len(paragraphs[1]) > 1:
        paragraphs[1].pop(0)
    return "\n\n".join(" ".join(p) for p in paragraphs).replace("<", "(").replace(">", ")")


def _spoken(brief: Briefing) -> list:
    return [line for line in brief.history + brief.latest if line.kind == "speech" and line.text]


def _surprise(brief: Briefing, rng: random.Random) -> str:
    lines = brief.history + brief.latest
    if cut := next((line for line in lines if line.action == "interrupt"), None):
        return f"What surprised me was how {cut.speaker} cut in before the sentence was even over."
    if event := next((line for line in lines if line.kind == "event"), None):
        return (f"And then, of all things: {event.text.rstrip('.')}. "
                "I didn't expect that to change the air in the room.")
    return rng.choice(SURPRISES)


def _leaning(brief: Briefing) -> str:
    t = brief.temperament
    scores = {"forceful": t.forceful, "quiet": t.quiet, "warm": t.warm, "anxious": t.anxious}
    return max(scores, key=lambda k: (scores[k], k == "quiet"))


def _quote(text: str, words: int = 24) -> str:
    """A line quoted in the entry, clipped, ending with its own punctuation inside the quotes."""
    tokens = text.replace('"', "'").split()
    clipped = " ".join(tokens[:words]) + ("..." if len(tokens) > words else "")
    return f"\u201c{clipped}{'' if clipped[-1:] in '.!?-' else '.'}\u201d"


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _count(paragraphs: list[list[str]]) -> int:
    return sum(len(" ".join(p).split()) for p in paragraphs)
