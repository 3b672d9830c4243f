"""The improviser's drafts for a collaboration goal: the kind of thing the goal asks for, in its shape.

A goal is read for what it asks: writing (`Write a 2-paragraph fairy tale` -> two paragraphs of a
tale; a letter, a poem, a speech or prose about the goal's subject: `pieces`), a plan (`a 5-step plan for a weekend hiking trip` -> five numbered steps about the trip), a
list of facts (`Name three rivers in Europe` -> three numbered places to fill in: the improviser
knows no facts, and says so), or anything else (a short answer in prose). A draft is revised one
visible change at a time. Everything is drawn with the caller's seeded generator; nothing claims to be
good writing: every message says it was improvised offline.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from promptdesk.core.formats.collaborate.pieces import CLOSES, kind_of, paragraph
from promptdesk.core.improv.scene_words import topics

NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "a couple of": 2, "a few": 3}
WRITING = r"\b(?:write|draft|compose|tale|story|poem|haiku|letter|email|e-mail|essay|paragraph|speech|toast|fable|blurb)"
PLANNING = r"\b(?:plan|steps?|outline|schedule|itinerary|agenda|checklist|roadmap|process)\b"
LISTING = r"^\s*(?:name|list|give(?: me)?|suggest|recommend|find|identify)\b"
STEPS = ("Write down what {s} must achieve, in one sentence.", "Agree who takes part in {s}, and who decides.",
         "Fix the date, and the day by which everything is ready.",
         "List what {s} needs (bookings, things to bring, money) and who sees to each.",
         "Set a budget and agree who pays for what.", "Check the conditions a few days before, and agree the fallback.",
         "Tell everyone the plan, with one contact for questions.", "On the day, start early and go through the list once.",
         "Afterwards, write down what to do differently next time.")
HEROES = (("a miller's daughter", "the girl"), ("a tailor with one good needle", "the tailor"), ("a young fox", "the fox"),
          ("an old ferryman", "the ferryman"), ("a goose girl", "the goose girl"))
WISHES = ("wanted to see the sea", "wanted a coat that would never wear out", "wanted to know where the river ended",
          "wanted one night of proper sleep", "wanted the king to learn one true thing")
TRIALS = ("a bridge that asked a riddle", "a wolf who wanted her bread", "a mountain that moved at night",
          "a well that only answered in rhymes", "a door with two painted handles")
ENDINGS = ("and from then on, whoever crossed that way was given bread and a place by the fire",
           "and the story says the road still remembers footsteps that were kind to it",
           "and it was a long time before anyone laughed at a small wish again")
HEADER = "(improvised offline: a draft in the requested shape, not a model's writing)"


@dataclass(frozen=True)
class Ask:
    """What a goal asks for: `writing`, `plan`, `list` or `answer`, how many parts, and of what."""

    kind: str
    count: int
    subject: str
    genre: str = ""
    to: str = ""
    """Whom a letter is to (`a letter to the landlord` -> `the landlord`)."""


def read_ask(goal: str) -> Ask:
    """The kind, size and subject of what the goal asks for."""
    text = " ".join(goal.replace("\u2011", "-").split())
    count = _count(text)
    subject = _subject(text)
    if re.search(LISTING, text, re.I) and not re.search(PLANNING, text, re.I):
        return Ask("list", count or 3, _listed(text))
    if re.search(PLANNING, text, re.I):
        return Ask("plan", min(count or 5, len(STEPS)), subject or "it")
    if re.search(WRITING, text, re.I):
        genre = re.search(r"\b(fairy tale|tale|story|fable|poem|haiku|letter|e-?mail|essay|speech|toast|blurb)s?\b", text, re.I)
        kind = genre.group(1).lower() if genre else "piece"
        to = re.search(r"\b(?:letter|e-?mail|note|message|speech|toast)\s+(?:\w+\s+)?to\s+((?:the |my |our |a |an )?"
                       r"[\w.' -]+?)(?=\s+(?:about|on|regarding|asking|explaining|for|to|that|which|with)\b|[.,;:!?]|$)",
                       text, re.I)
        if kind_of(kind) != "tale" and subject.startswith("the ") and to and subject[4:] in to.group(1).lower():
            subject = ""
        return Ask("writing", min(count or (1 if kind == "haiku" else 2), 5), subject or ("this" if kind_of(kind) != "tale" else ""), kind,
                   to.group(1) if to else "")
    return Ask("answer", count or 2, subject or text.rstrip(".?!"))


def _count(text: str) -> int:
    match = re.search(r"\b(\d{1,2})\s*-?\s*(?:paragraph|step|item|point|idea|line|stanza|sentence|example|part)s?\b", text, re.I)
    if match:
        return int(match.group(1))
    for word, n in NUMBERS.items():
        if re.search(rf"\b{word}[\s-]+(?:paragraph|step|item|point|idea|line|stanza|sentence|example|part|\w+s)\b", text, re.I):
            return n
    return 0


def _subject(text: str) -> str:
    """The noun phrase the goal is about (`a 5-step plan for a weekend hiking trip` -> `the weekend hiking trip`;
    `Plan a surprise party for Grandma in five steps` -> `the surprise party for Grandma`)."""
    planned = re.match(r"^\s*(?:plan|organi[sz]e|arrange|prepare|schedule)\s+(?:a|an|the|our|my)\s+([\w' -]+?)"
                       r"(?:\s+in\s+(?:\d+|\w+)\s*-?\s*steps?\b|[.,;:(]|\s+(?:and|that|which|so)\b|$)", text, re.I)
    if planned and not re.match(r"(?:\d+|\w+)-step\b", planned.group(1)):
        return "the " + planned.group(1).strip()
    after = r"\s+(?:(an|a|the|our|my)\s+)?([\w' -]+?)(?:[.,;:(—–]|\s+-|\s+(?:keep|and|that|which|with|so)\b|$)"
    # what it is `about` is the subject, wherever it stands (`a paragraph for the zine, about sharing tools`)
    counted = r"(?:\d+|" + "|".join(NUMBERS) + r")\b"
    match = re.search(r"\babout" + after, text, re.I) or next(
        (m for at in re.finditer(r"\b(?:for|on|of)\b", text, re.I)  # not `of four items`: a count, no subject
         if (m := re.compile(after, re.I).match(text, at.end())) and m.group(2).strip()
         and not re.match(counted, m.group(2).strip(), re.I)), None)
    if not match or not match.group(2).strip():  # `arguing that the deposit must be returned`: the deposit
        argued = re.search(r"\b(?:arguing|explaining|showing|proposing|claiming|saying)\s+(?:that|why|how)\s+(.+)$", text, re.I)
        found = topics(re.sub(r"\b(?:its|their)\b", "the", argued.group(1))) if argued else []
        return found[-1] if found else ""
    phrase = match.group(2).strip().lower()
    if phrase.split()[0].endswith("ing") and "-" not in phrase.split()[0]:  # `sharing tools`, not `note-taking app`
        return phrase
    return f"{match.group(1).lower()} {phrase}" if (match.group(1) or "").lower() in ("my", "our") else "the " + phrase


def _listed(text: str) -> str:
    """What a listing goal wants named (`Name three rivers in Europe` -> `rivers in Europe`)."""
    match = re.search(LISTING + r"\s+(?:(?:\d+|" + "|".join(NUMBERS) + r")\s+)?(.+?)[.?!]?$", text, re.I)
    return match.group(1) if match else "items"


def first_draft(ask: Ask, rng: random.Random) -> str:
    """A draft of what the goal asks for, in its shape."""
    if ask.kind == "plan":
        picked = sorted(rng.sample(range(len(STEPS)), ask.count))
        return "\n".join(f"{i}. {STEPS[k].format(s=ask.subject)}" for i, k in enumerate(picked, 1))
    if ask.kind == "list":
        return "\n".join(f"{i}. {_cap(_singular(ask.subject))}: to be filled in (the improviser knows no facts)."
                          for i in range(1, ask.count + 1))
    if ask.kind == "writing":
        return "\n\n".join(_paragraph(ask, i, rng) for i in range(ask.count))
    return "\n".join(f"{i}. A first thought on {ask.subject}: {line}" for i, line in enumerate(
        rng.sample(("say what it is for", "say what it costs", "say who decides", "say what could go wrong"),
                   min(ask.count, 4)), 1))


def _paragraph(ask: Ask, index: int, rng: random.Random) -> str:
    if kind_of(ask.genre) != "tale":
        return paragraph(ask.genre, ask.subject, ask.to, index, ask.count, rng)
    if ask.subject.startswith("the ") and ask.genre in ("tale", "fairy tale", "story", "fable"):
        head = re.split(r"\s+(?:who|that|which|whose|with|named|called|from|in|on|at)\s", ask.subject)[0]
        hero, short = _a(ask.subject[4:]), "the " + head.split()[-1]  # `a badger who names the stars`: the badger
    else:
        hero, short = rng.choice(HEROES)
    if index == 0:
        wish = f"{hero}. {_cap(short)} {rng.choice(WISHES)}" if re.search(r"\b(?:who|that|which|whose)\b", hero) \
            else f"{hero} who {rng.choice(WISHES)}"
        return (f"Once upon a time there was {wish}. Everyone said it could not be done, "
                f"so one grey morning {short} set out alone.")
    if index == ask.count - 1:
        return (f"At last the way was blocked by {rng.choice(TRIALS)}. Instead of fighting, the traveller listened, "
                f"answered honestly, and was let through, {rng.choice(ENDINGS)}.")
    return f"On the road there was {rng.choice(TRIALS)}, and it cost a day and a kindness to get past it."


CUTTING = re.compile(r"\b(?:cut|shorten\w*|tighten\w*|trim\w*|concise|shorter|fewer words|condense\w*)\b", re.I)
"""A task that asks for less: the revision cuts rather than adds."""


def revise(draft: str, ask: Ask, rng: random.Random, task: str = "") -> tuple[str, str]:
    """The draft with one visible change, and a sentence saying what changed: a cut when the task
    handed over asks for less (`cut one word in three`, `tighten the ending`), else an addition."""
    if ask.kind in ("plan", "writing") and CUTTING.search(task):
        # nothing left to cut: the draft stays as it is, rather than grow against the task
        return _cut(draft, ask) or (draft, "Read it through for cuts; nothing more can go without losing a line.")
    if ask.kind == "list":
        lines = draft.splitlines()
        open_items = [i for i, line in enumerate(lines) if line.endswith("facts).")]
        if not open_items:
            return draft, "Kept the placeholders: the answer needs facts the improviser does not have."
        at = rng.choice(open_items)
        lines[at] = lines[at] + rng.choice((" Check an atlas or a reference.", " Ask someone who knows.",
                                                 " Look it up before sending."))
        return "\n".join(lines), f"Said how to fill item {at + 1}; the facts still have to come from elsewhere."
    if ask.kind == "writing":
        parts = draft.split("\n\n")
        kind = kind_of(ask.genre)
        closes = CLOSES.get(kind, ("and nobody forgot it", "which was the hard part", "as these things go"))
        plain = [i for i, part in enumerate(parts) if not any(line.rstrip(".?!").endswith(closes)
                                                               for line in part.split("\n"))]
        if not plain:
            return draft, "Read it through once more; it holds."
        at = rng.choice(plain)
        lines = parts[at].split("\n")
        # a close goes where a sentence ends (a poem's line may stop mid-sentence, or on `;`)
        ends = [i for i, line in enumerate(lines) if line.rstrip()[-1:] in ".?!"] or [len(lines) - 1]
        longest = max(ends, key=lambda i: len(lines[i]))
        end = lines[longest][-1:] if lines[longest][-1:] in ".?!" else "."
        fresh = [close for close in closes if close not in draft] or list(closes)  # no close twice
        lines[longest] = lines[longest].rstrip(".?!") + ", " + rng.choice(fresh) + end
        parts[at] = "\n".join(lines)
        return "\n\n".join(parts), f"Gave paragraph {at + 1} a fuller close."
    lines = draft.splitlines()
    plain = [i for i, line in enumerate(lines) if not line.endswith(").")]
    if not plain:
        return draft, "Read it through once more; nothing left to tighten."
    at = rng.choice(plain)
    number, _, body = lines[at].partition(". ")
    marks = [m for m in (" (one owner).", " (by Friday).", " (write it down).")
             if not (m == " (by Friday)." and re.search(r"\b(?:on the day|afterwards|date)\b", body, re.I))]
    lines[at] = f"{number}. {re.sub(r', (?:and )?(?:who decides|who pays for what|and agree the fallback)', '', body)}".rstrip(".") \
        + rng.choice(marks)
    return "\n".join(lines), f"Made step {at + 1} concrete."


def _cut(draft: str, ask: Ask) -> tuple[str, str] | None:
    """The draft made shorter by one clause: a plan's longest step loses its last clause or its
    bracket; a piece of writing loses the last clause of its ending. None when nothing can go."""
    if ask.kind == "plan":
        lines = draft.splitlines()
        steps = [i for i, line in enumerate(lines) if re.match(r"^\d+\.\s", line)]
        for at in sorted(steps, key=lambda i: -len(lines[i])):
            number, _, body = lines[at].partition(". ")
            shorter = re.sub(r"\s*\([^()]*\)(?=\.?$)|,[^,()]*(?=\.?$)", "", body.rstrip(".")).rstrip(" ,") + "."
            if len(shorter) < len(body) and len(shorter.split()) >= 3:
                lines[at] = f"{number}. {shorter}"
                return "\n".join(lines), f"Cut step {steps.index(at) + 1} down to what it asks."
        return None
    parts = draft.split("\n\n")
    for at in reversed(range(len(parts))):  # the last paragraph that has a clause to lose (not a sign-off)
        last = parts[at].rstrip()
        end = last[-1:] if last[-1:] in ".?!" else "."
        head, comma, tail = last.rstrip(".?!").rpartition(", ")
        if comma and len(head.split("\n")[-1].split()) >= 4 and "\n" not in tail and last[-1:] in ".?!":
            parts[at] = head + end
            return "\n\n".join(parts), f"Tightened paragraph {at + 1} by its last clause."
    return None


def draft_in(text: str, ask: Ask) -> str:
    """The draft a message carries, when it carries one of the requested shape ('' otherwise)."""
    body = text.split("\n", 1)[1] if "\n" in text else ""
    if ask.kind == "writing":
        return body if len([p for p in body.split("\n\n") if p.strip()]) >= ask.count else ""
    numbered = [ln for ln in body.splitlines() if re.match(r"^\d+\.\s", ln)]
    return body if len(numbered) >= ask.count else ""


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _a(phrase: str) -> str:
    return phrase if phrase.startswith(("a ", "an ", "the ")) else ("an " if phrase[:1] in "aeiou" else "a ") + phrase


def _singular(phrase: str) -> str:
    phrase = re.sub(r"^(?:the|all|all the|some)\s+", "", phrase, flags=re.I)
    head, _, rest = phrase.partition(" ")
    one = head[:-1] if head.endswith("s") and not head.endswith("ss") else head
    return f"one of the {phrase}" if one == head else f"a {one} {rest}".strip()
