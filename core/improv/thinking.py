"""The private inner voice of a turn: first person, grounded in the profile, perspective and goal."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from promptdesk.core.improv.scene_words import place, sentences, short_phrase
from promptdesk.core.improv.voice import as_me, first_person, mid_sentence, self_trait

if TYPE_CHECKING:
    from promptdesk.core.improv.briefing_reader import Briefing
    from promptdesk.core.improv.speech import Cue

GOAL_FRAMES = ("What has to come out of this: {goal}.", "The way this should end: {goal}.",
               "I know where this needs to go: {goal}.", "If today goes right: {goal}.")
INTENTS = {
    "silent": ("I'll hold my tongue and watch for now.", "Better to listen than to fill the air.",
               "Not yet. Let them finish first."),
    "interrupt": ("I can't let that sentence finish.", "No. I'm not sitting through that again."),
    "close": ("I've said what I came to say. Time to go.", "That's enough for today. I can leave it there."),
    "react": ("I need a second before I say anything.", "Words can wait."),
    "event": ("Someone has to acknowledge that.", "Might as well say it out loud."),
    "open": ("I'll start plainly.", "Someone has to go first, and it should be me."),
    "press": ("I want a real answer about {topic}.", "No more going around {topic}."),
    "explain": ("They need to hear my side of {topic}.", "If I don't explain now, I never will."),
    "question": ("Better to ask than to assume.", "I need to understand before I judge."),
    "echo": ("Those words stuck with me. I'll hand them back.",),
    "concede": ("Time to own my part.", "Being right matters less than getting through this."),
    "mediate": ("Someone needs to lower the temperature.", "This is getting away from us."),
    "propose": ("Let's turn this into something concrete about {topic}.", "A plan, finally."),
    "agree": ("That's good enough. I can say yes to it.", "We're nearly there."),
    "wind_down": ("This is winding down, and that's fine.", "Let's bring it in gently."),
}


def inner_voice(brief: Briefing, cue: Cue, rng: random.Random) -> str:
    """Three or four sentences of private thought for this turn."""
    thoughts = [_trigger(brief, rng)]
    t = brief.temperament
    if t.traits and rng.random() < 0.6:
        thoughts.append(self_trait(rng.choice(t.traits)))
    if rng.random() < 0.7:
        thoughts.append(_motive(brief, rng))
    if brief.notes:
        thoughts.append(f"I keep the director's word in mind: {full_stop(brief.notes[-1])}")
    thoughts.append(rng.choice(INTENTS.get(cue.move, INTENTS["question"])).format(topic=cue.topic))
    return " ".join(s.strip() for s in thoughts if s).replace("<", "(").replace(">", ")")


def full_stop(text: str) -> str:
    """`text` as a sentence: ended with a full stop unless it already ends like one (a note is often typed
    without one, and the next thought must not run on from it)."""
    text = text.strip()
    return text if not text or text[-1] in ".!?…\"'”’)" else f"{text}."


def _trigger(brief: Briefing, rng: random.Random) -> str:
    """What just happened, as this character registers it."""
    if brief.events:
        return f"{brief.events[-1].rstrip('.')}. Of course it happens right now."
    if "begin" in brief.cues:
        return f"Here we are in {place(brief.setting)}. It's on me to start."
    if "stall" in brief.cues:
        return "The silence is getting heavy; someone has to say something."
    if "nudge" in brief.cues:
        return "This feels like it is coming to an end."
    last = brief.addressed_by or brief.last_other
    if last and last.text:
        heard = short_phrase(last.text, 7)
        aside = rng.choice(("That landed harder than I'd like.", "I can work with that.",
                            "I'm not sure I believe it.", "Interesting choice of words."))
        return f"{last.speaker.split()[0]} said '{heard}'. {aside}"
    if last:
        return f"{last.speaker.split()[0]} isn't saying much, but I noticed."
    if brief.own:
        return rng.choice(("No one has answered me yet.", "Still nothing back from them."))
    return f"Nobody has said anything yet. {_cap(place(brief.setting))} feels very quiet."


def _motive(brief: Briefing, rng: random.Random) -> str:
    """Why this character is here: their private perspective, else the scene's goal."""
    if brief.perspective and (rng.random() < 0.6 or not brief.goal):
        return sentences(first_person(brief.perspective), limit=1)
    if brief.goal:
        frame = rng.choice(GOAL_FRAMES)
        goal = mid_sentence(as_me(brief.goal.rstrip("."), brief.name), (brief.name, *brief.others))
        return frame.format(goal=goal)
    return "I'm not leaving until I understand what this is really about."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
