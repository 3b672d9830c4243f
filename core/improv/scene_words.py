"""Words taken from the scene itself: topics to talk about, the place, the perspective in 'I'."""

from __future__ import annotations

import re

_STOP = frozenset(
    "of to and or with in on for at by from about as but is are was were who which that after before "
    "when while if then than so because into over under causing has have had be been being it its "
    "not no yet also just very".split())
_DETERMINERS = ("the", "a", "an", "this", "that")
_SWAPS = ((r"\byou are\b", "I am"), (r"\byou're\b", "I'm"), (r"\byou've\b", "I've"),
          (r"\byou'll\b", "I'll"), (r"\byou'd\b", "I'd"), (r"\byours\b", "mine"),
          (r"\byourself\b", "myself"), (r"\byour\b", "my"))


def topics(*texts: str, exclude: tuple[str, ...] = ()) -> list[str]:
    """Noun phrases after an article (`the Henderson loss`, `the client`), first seen first."""
    found: list[str] = []
    banned = {name.lower() for name in exclude}
    for text in texts:
        for sentence in re.split(r"[.,;:!?\n()]", text):
            words = sentence.split()
            for i, word in enumerate(words):
                if word.lower() not in _DETERMINERS:
                    continue
                phrase = []
                for nxt in words[i + 1:i + 4]:
                    if nxt.lower() in _STOP or nxt.lower() in _DETERMINERS or not re.fullmatch(r"[A-Za-z'-]+", nxt):
                        break
                    phrase.append(nxt)
                if phrase and not banned & {re.sub(r"'s$", "", w.lower()) for w in phrase}:
                    candidate = "the " + " ".join(phrase)
                    if candidate.lower() not in (f.lower() for f in found):
                        found.append(candidate)
    return found


def place(setting: str) -> str:
    """`Office conference room, afternoon` -> `this office conference room`."""
    first = re.split(r"[,.;]", setting.strip())[0].strip() if setting.strip() else ""
    first = re.sub(r"^(the|a|an)\s+", "", first, flags=re.IGNORECASE)
    if not first:
        return "this room"
    words = first.split()
    if words[0].endswith("'s"):
        return first
    proper = any(w[:1].isupper() for w in words[1:])
    return "this " + (first if proper else first[0].lower() + first[1:])


def first_person(text: str) -> str:
    """A second-person perspective ("You are under pressure") rewritten in the first person."""
    out = text.strip()
    for pattern, repl in _SWAPS:
        out = re.sub(pattern, repl, out, flags=re.IGNORECASE)
    out = re.sub(r"(^|[.;:!?]\s+|,\s+|\b(?:and|but)\s+)you\b", lambda m: m.group(1) + "I", out,
                 flags=re.IGNORECASE)
    out = re.sub(r"\byou\b", "me", out, flags=re.IGNORECASE)
    return out[:1].upper() + out[1:] if out else out


def sentences(text: str, limit: int = 2) -> str:
    """The first few sentences of a text, on one line."""
    parts = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return " ".join(parts[:limit]).strip()


def short_phrase(words: str, rng_count: int) -> str:
    """The first `rng_count` words of a line, without trailing punctuation or double quotes."""
    tokens = words.replace('"', "").split()[:max(1, rng_count)]
    return " ".join(tokens).rstrip(",.;:!?-")
