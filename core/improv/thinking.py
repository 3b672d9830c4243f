"""The private inner voice of a turn: first person, grounded in the profile, perspective and goal."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from promptdesk.core.improv.material import address
from promptdesk.core.improv.scene_words import place, sentences, short_phrase
from promptdesk.core.improv.voice import as_me, first_person, mid_sentence, self_trait

if TYPE_CHECKING:
    from promptdesk.core.improv.briefing_reader import Briefing
    from promptdesk.core.improv.directions import Note
    from promptdesk.core.improv.speech import Cue
    from promptdesk.core.improv.story import Story

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
    "goal_say": ("I'll say where I stand, and mean it.", "Time to put it into words."),
    "thank_goal": ("I haven't said thank you yet. I should.", "Some thanks are overdue."),
    "mediate": ("Someone needs to lower the temperature.", "This is getting away from us."),
    "propose": ("Let's turn this into something concrete about {topic}.", "A plan, finally."),
    "agree": ("That's good enough. I can say yes to it.", "We're nearly there."),
    "wind_down": ("This is winding down, and that's fine.", "Let's bring it in gently."),
    "confide": ("They may as well know what I know.", "I've kept this to myself long enough."),
    "apologise": ("I owe an apology, and I know it.", "Say it properly this time, no excuses."),
    "accept": ("That was what I needed to hear.", "I can take that. It cost them something to say."),
    "agree_goal": ("We can settle this now, if we name it.", "Time to say yes to something concrete."),
    "admit": ("No more hiding it.", "Out with it, then."),
    "mention": ("I'll bring it up and see how it lands.",),
    "ask": ("There's a question I keep not asking.",),
    "aftermath": ("Back to it, before the moment is lost.", "That shook the room. Now, where were we?"),
}
NOTE_TAKES = {
    "say": ("They should hear it from me, not find it out later.", "I've carried this long enough; it's time."),
    "apologise": ("An apology is overdue, and I'm the one who owes it.",),
    "accept": ("I can meet them halfway. I'll say so.",),
    "ask": ("I'll ask what I've been circling around.",),
    "leave": ("I've done what I came to do. I can go.",),
    "manner": {"forceful": "Enough hedging. I'll say what I mean and hold my ground.",
               "warm": "I can be gentler than I've been.",
               "quiet": "Fewer words. Let the silences do some of the work.",
               "anxious": "I'll stop pretending this doesn't frighten me."},
    "other": ("I know what's wanted of me. I'll find my own way to it.",),
}
"""How a character takes a director's note, by what it asks: said in their head, never quoted."""
TAKE_TAILS = {"forceful": "Fine.", "anxious": "My stomach turns at the thought, but all right.",
              "warm": "It's the decent thing.", "quiet": "Quietly, then."}


def inner_voice(brief: Briefing, cue: Cue, rng: random.Random, story: Story) -> str:
    """Three or four sentences of private thought for this turn."""
    thoughts = [_trigger(brief, rng, story)]
    t = story.temperament
    if t.traits and rng.random() < 0.6:
        thoughts.append(self_trait(rng.choice(t.traits), t.pronoun))
    if rng.random() < 0.7:
        thoughts.append(_motive(brief, rng))
    if story.note:
        thoughts.append(note_take(story.note, story, rng))
    thoughts.append(rng.choice(INTENTS.get(cue.move, INTENTS["question"])).format(topic=cue.topic))
    return " ".join(s.strip() for s in thoughts if s).replace("<", "(").replace(">", ")")


def note_take(note: Note, story: Story, rng: random.Random) -> str:
    """How the character takes a note: what it means to them, in their own temper."""
    takes = NOTE_TAKES[note.kind]
    take = takes[note.manner] if isinstance(takes, dict) else rng.choice(takes)
    t = story.temperament
    leaning = max(("forceful", "anxious", "warm", "quiet"), key=lambda k: getattr(t, k))
    return f"{take} {TAKE_TAILS[leaning]}" if getattr(t, leaning) > 0 and note.kind != "manner" else take


def _trigger(brief: Briefing, rng: random.Random, story: Story) -> str:
    """What just happened, as this character registers it."""
    if story.event and story.event[1] == 0:
        event = story.event[0]
        return f"{event.text}. " + ("We have to get out." if event.kind == "leave" else "Of course it happens right now.")
    if story.event and story.event[1] == 1:
        return f"I'm still thrown by {story.event[0].thing or 'what just happened'}."
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
        return f"{address(last.speaker, (brief.name, *brief.others))} said '{heard}'. {aside}"
    if last:
        return f"{address(last.speaker, (brief.name, *brief.others))} isn't saying much, but I noticed."
    if brief.own:
        return rng.choice(("No one has answered me yet.", "Still nothing back from them."))
    return f"Nobody has said anything yet. {_cap(place(brief.setting))} feels very quiet."


def _motive(brief: Briefing, rng: random.Random) -> str:
    """Why this character is here: their private perspective, else the scene's goal."""
    if brief.perspective and (rng.random() < 0.6 or not brief.goal):
        return sentences(first_person(brief.perspective), limit=1)
    if brief.goal:
        frame = rng.choice(GOAL_FRAMES)
        goal = mid_sentence(as_me(brief.goal.rstrip("."), brief.name, brief.temperament.pronoun), (brief.name, *brief.others))
        return frame.format(goal=goal)
    return "I'm not leaving until I understand what this is really about."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
