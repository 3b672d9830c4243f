"""The improviser's writing of a kind that is not a tale: a letter or an email, a poem, a speech or a
toast, and plain prose (an essay, a blurb, a piece), each about the goal's own subject and, for a
letter, to its own addressee (`a letter to the council about the street lights`).

It knows nothing about the subject: each paragraph says the kind of thing that kind of writing says
(a letter states its matter, what has happened, and what it asks), with the subject's words in it,
and the header of every message says it was improvised offline. Each paragraph runs to a dozen words
or more, so a draft is the size it was asked for.
"""

from __future__ import annotations

import random

TALES = ("tale", "fairy tale", "story", "fable")
"""Genres written as a tale (`drafts._paragraph`); every other genre is written here."""
LETTER = {
    "first": ("I am writing about {s}. It has gone on long enough that I would like it settled, and on record.",
              "I am writing to you about {s}, which I have raised before without an answer that settled it."),
    "middle": ("Here is where things stand with {s}: what has happened so far, when it started, and what it has cost.",
               "I have tried to sort out {s} informally, and I would rather not take it further than this letter."),
    "last": ("Could you let me know within two weeks what you will do about {s}? Thank you for your time."
             "\nYours sincerely",
             "I would be grateful for a reply in writing about {s}, with a date by which it will be done."
             "\nKind regards"),
}
POEM = {
    "first": ("Of {s} I can only say\nwhat the morning says, and then\nsay it over, slower, once again.",
              "Begin with {s}, the way\na door begins a room:\nby standing open, saying come."),
    "middle": ("And {s} stays on, the way\nthe light stays after dark\nin windows, in a single mark.",
               "Say {s} and the words\ngo quiet in the mouth,\nlike birds that know the way south."),
    "last": ("So let {s} be the end,\nand the end be small and plain,\nlike a name said once, and then again.",
             "Leave {s} where it lies;\nwhat is held too hard will break.\nWhat is let go, the heart will take."),
}
SPEECH = {
    "first": ("Friends, thank you for coming. We are here tonight because of {s}, and I promise to keep this short.",
              "Good evening, everyone. I was asked to say a few words about {s}, so here are a few."),
    "middle": ("When I think of {s}, I think of the people in this room who made it happen, one small job at a time.",
               "Nobody gets {s} right alone, and every one of you has carried a piece of it at some point."),
    "last": ("So please raise your glasses: to {s}, and to everyone who made it what it is. Cheers.",
             "That is all I wanted to say about {s}. Thank you, and enjoy the rest of the evening."),
}
PROSE = {
    "first": ("{S} is easy to describe and hard to settle, and that is the place to start.",
              "Start with {s} as it is, before deciding what it ought to be; most of the argument lives there."),
    "middle": ("The case for {s} rests on what it makes possible, and the case against it on what it costs.",
               "Look at {s} from the side of the people it touches, and the question changes its shape."),
    "last": ("In the end, {s} comes down to one choice, and it is better made on purpose than by drift.",
             "So the last word on {s} is a plain one: decide what matters most, and let the rest follow."),
}
CLOSES = {"letter": ("as soon as you can", "for the record", "in good faith"),
          "poem": ("and still", "once more", "even now"),
          "speech": ("truly", "from all of us", "and I mean that"),
          "prose": ("on balance", "for now at least", "as far as it goes")}
"""What a revision adds at the end of one paragraph, by kind of writing (`drafts.revise`)."""


def kind_of(genre: str) -> str:
    """The kind of writing a genre is: `letter`, `poem`, `speech`, `prose` or `tale`."""
    if genre in TALES:
        return "tale"
    if genre in ("letter", "email", "e-mail"):
        return "letter"
    if genre in ("poem", "haiku", "verse", "stanza", "song", "limerick"):
        return "poem"
    if genre in ("speech", "toast", "eulogy", "address"):
        return "speech"
    return "prose"


def paragraph(genre: str, subject: str, to: str, index: int, count: int, rng: random.Random) -> str:
    """Paragraph `index` of `count` of a piece of this genre about `subject` (to `to`, for a letter)."""
    kind = kind_of(genre)
    table = {"letter": LETTER, "poem": POEM, "speech": SPEECH}.get(kind, PROSE)
    place = "first" if index == 0 else "last" if index == count - 1 and count > 1 else "middle"
    text = rng.choice(table[place]).format(s=subject, S=subject[:1].upper() + subject[1:])
    if kind == "letter" and index == 0:
        text = f"Dear {_addressee(to)},\n{text}"
    return text


def _addressee(to: str) -> str:
    """How a letter opens to its addressee (`the council` -> `Council`; `Mr Byrne` as written)."""
    if not to:
        return "Sir or Madam"
    words = to.split()
    if words[0].lower() in ("the", "my", "our", "a", "an"):
        words = words[1:]
    name = " ".join(words)
    return name[:1].upper() + name[1:] if name else "Sir or Madam"
